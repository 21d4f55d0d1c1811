"""The grading copy of the package (issue #35): what an assignment's sandbox holds.

Each assignment's copy is built once (``copy_for`` into a temporary cache); one
``python -I -S`` process per assignment, with the copy first on ``sys.path`` and the
real package out of reach, then checks that every withheld function raises
WithheldError, runs the solution notebook's setup cells statement by statement (no
WithheldError allowed, but for the known conflicts below), and runs the solution's
answers on inputs built by the real package and pickled, as a regrade sends them.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import json
import os
import pickle
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from ssa_course.grading import gradingcopy
from ssa_course.grading.withheld import WITHHELD, WithheldError, message, withheld

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
ASSIGNMENTS = sorted(p.stem for p in SOLUTIONS.glob("*.ipynb"))

# Setup statements that need a withheld function at their top level: (assignment, cell,
# first line of the statement). The learner's process cannot run them in the grading copy
# (issue #35: the lead decides -- compute them outside, or give the learner their values).
KNOWN_SETUP_CONFLICTS = {
    # GRAPHS = {name: sea(src) ...}: sea() optimizes, running Phi.compute, If.compute
    # and users_to_push (SCCP); TABLES = sccp_prefixes(...) too (a NameError after it)
    ("07-optimistic", "setup", 19),
    # fn = function("phi", "keep"): the escape analysis (EscapeInfo.join, solve)
    ("10-escape", "example", 2),
    # data = function("loop"): machine_ir runs the engine's Liveness
    ("11-codegen", "example", 1),
}

# Inputs of each answer, built in this process (the real package) by running the
# expression in the namespace of the notebook's setup cells, then pickled to the copy's
# process: (answer, expression giving its argument tuple).
INPUTS: dict[str, list[tuple[str, str]]] = {
    "01-quads": [
        ("leaders", "(body_of('while/main'),)"),
        ("successors", "([BasicBlock(b.name, b.instrs) for b in "
                       "build_cfg(FUNCTIONS['if_else/main']).blocks.values()],)"),
        ("unreachable", "({'a': ['b'], 'b': [], 'c': ['a']}, 'a')"),
    ],
    "02-peepholes": [
        ("fold_constant", "('div', -7, 2)"),
        ("value_key", "('add', [2, 1])"),
        ("count_redundant", "(copy.deepcopy(BLOCKS[0]),)"),
    ],
    "03-ssa": [
        ("frontiers", "(lesson_cfgs()[0][0], immediate_dominators(*lesson_cfgs()[0]))"),
        ("phi_blocks", "({'a': {'b'}, 'b': {'b'}}, {'a'})"),
        ("sequentialize_copies", "([('a', 'b'), ('b', 'a')],)"),
    ],
    "04-julia-ir": [
        ("uses_of", "(ir_of('loop'),)"),
        ("dead_pure", "(ir_of('unused'),)"),
        ("double_to_add", "(ir_of('two_left'),)"),
    ],
    "05-control-as-data": [
        ("control_successors", "(node_of(('if_else', 'main', 8)),)"),
        ("split_phi", "(node_of(('while', 'main', 7)),)"),
        ("loop_carried", "(graphs('nested').functions['main'],)"),
    ],
    "06-types-and-peepholes": [
        ("mul_type", "(int_const(3), INT_BOTTOM)"),
        ("not_type", "(TRUE,)"),
        ("idealize_add", "([n for n in sea('fn main(n: int) { print((n + 1) + 2); }', "
                         "optimize=False).functions['main'].nodes() if isinstance(n, Add)][-1],)"),
        ("gvn_key", "([n for n in sea('fn main(n: int, m: int) { print(n + m); }')"
                    ".functions['main'].nodes() if isinstance(n, Add)][0],)"),
    ],
    "07-optimistic": [
        ("phi_type", "(node_of(('loop', 10, 8)), dict(TABLES['loop'][8]))"),
        ("if_type", "(CTRL, BOOL_BOTTOM)"),
        ("users_to_push", "(node_of(('loop', 14, 0)),)"),
    ],
    "08-scheduling": [
        ("lca", "('b9', 'b10', dict(sched('if').idom), dict(sched('if').dom_depth))"),
        ("pick_block", "('b1', 'b17', dict(sched('loop').idom), "
                       "{k: b.depth for k, b in sched('loop').blocks.items()})"),
        ("loop_depths", "({'a': ['b'], 'b': ['c'], 'c': ['b', 'd'], 'd': []}, 'a')"),
    ],
    "09-ranges": [
        ("add_range", "((0, 10), (1, 2))"),
        ("branch_ranges", "((0, 100), '<', (10, 20))"),
        ("check_redundant", "((0, 9), (10, 10), [(0, '<')])"),
        ("loop_range", "((0, 0), loop_back('<', (10, 10), 1))"),
    ],
    "10-escape": [
        ("join", "(S(returns={6}), S(args={1}))"),
        ("store", "(S(returns={6}), S(), {1})"),
        ("glyphs", "(function('phi', 'keep'),)"),
    ],
    "11-codegen": [
        ("liveness", "(function('loop').blocks, function('loop').succs)"),
        ("interference", "(function('loop').blocks, given_live_out('loop'))"),
        ("select", "select_input('loop', 'main', 'three')"),
    ],
}


def cells(assignment: str) -> list[tuple[str, str, str]]:
    """(kind, grade id, source) of each code cell: setup (locked, not graded), solution,
    test."""
    nb = json.loads((SOLUTIONS / f"{assignment}.ipynb").read_text(encoding="utf-8"))
    out = []
    for c in nb["cells"]:
        if c["cell_type"] != "code":
            continue
        meta = c.get("metadata", {}).get("nbgrader", {})
        kind = ("solution" if meta.get("solution") else "test" if meta.get("grade")
                else "setup" if meta.get("locked") else "other")
        out.append((kind, meta.get("grade_id", "?"), "".join(c["source"])))
    return out


def site_packages() -> list[str]:
    """This interpreter's ``sys.path`` without the checkout (the real package's home),
    as ``regrade._path`` gives the learner's process, but with the copy first instead."""
    return [p for p in sys.path if p and Path(p).resolve() != ROOT and p != os.getcwd()
            and Path(p).is_dir()]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("grading-copies")


@pytest.fixture(scope="module")
def copies(cache: Path) -> dict[str, Path]:
    out = {}
    for assignment in ASSIGNMENTS:
        start = time.perf_counter()
        out[assignment] = gradingcopy.copy_for(assignment, cache)
        print(f"{assignment}: built in {time.perf_counter() - start:.2f} s")
    return out


def test_every_assignment_has_an_entry_and_every_entry_resolves() -> None:
    assert sorted(WITHHELD) == ASSIGNMENTS
    assert withheld("no-such-assignment") == ()
    for assignment, entries in WITHHELD.items():
        assert len(set(entries)) == len(entries), assignment
        for entry in entries:
            function = gradingcopy.resolve(entry)
            assert inspect.isfunction(function), entry


def test_a_missing_entry_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bad = "ssa_course.quads.cfg:no_such_function"
    monkeypatch.setitem(WITHHELD, "01-quads", (*WITHHELD["01-quads"], bad))
    with pytest.raises(ValueError, match=re.escape(bad)):
        gradingcopy.build_copy("01-quads", tmp_path)
    elsewhere = "ssa_course.son.gcm:_loop_depths"  # imported there, defined in cfg_blocks
    monkeypatch.setitem(WITHHELD, "01-quads", (elsewhere,))
    with pytest.raises(ValueError, match=re.escape(elsewhere)):
        gradingcopy.build_copy("01-quads", tmp_path)


def test_the_message() -> None:
    assert message("ssa_course.quads.cfg:find_leaders", "01-quads") == (
        "ssa_course's own find_leaders (ssa_course.quads.cfg) is not available while "
        "exercise 01-quads is graded: it computes what a task asks you to write")


def test_copy_for_caches(cache: Path, copies: dict[str, Path]) -> None:
    path = copies["01-quads"]
    marker = path / "ssa_course" / "quads" / "cfg.py"
    stamp = marker.stat().st_mtime_ns
    start = time.perf_counter()
    assert gradingcopy.copy_for("01-quads", cache) == path
    assert time.perf_counter() - start < 1.0
    assert marker.stat().st_mtime_ns == stamp  # not rebuilt
    assert not [p for p in cache.iterdir() if p.name.startswith(".")]  # no leftovers
    assert (path / "ssa_course" / "quads" / "__pycache__").is_dir()  # byte-compiled
    assert path.stat().st_mode & 0o755 == 0o755  # readable by a sandbox's other user
    assert not list(path.glob("ssa_course/**/*.ipynb"))
    assert not (path / "solutions").exists() and not (path / "tests").exists()


def test_copy_for_when_two_processes_build_at_once(tmp_path: Path) -> None:
    code = ("import sys; from pathlib import Path\n"
            "from ssa_course.grading.gradingcopy import copy_for\n"
            "print(copy_for('03-ssa', Path(sys.argv[1])))\n")
    runs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT,
                             stdout=subprocess.PIPE, text=True) for _ in range(2)]
    paths = {run.communicate(timeout=120)[0].strip() for run in runs}
    assert all(run.returncode == 0 for run in runs)
    assert len(paths) == 1
    assert [p.name for p in tmp_path.iterdir()] == [Path(paths.pop()).name]


def _body_lines(entry: str) -> list[str]:
    """The stripped lines of a withheld function's body (its docstring included, its
    comments not), longest first."""
    function = gradingcopy.resolve(entry)
    source = textwrap.dedent(inspect.getsource(function))
    node = ast.parse(source).body[0]
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    lines = source.splitlines()[node.body[0].lineno - 1:]
    out = [line.strip() for line in lines]
    return sorted({line for line in out if len(line) >= 12 and not line.startswith("#")},
                  key=len, reverse=True)


def test_the_copy_holds_no_withheld_source(copies: dict[str, Path]) -> None:
    real = {p: (gradingcopy.package_dir() / p).read_text(encoding="utf-8")
            for p in gradingcopy._sources(gradingcopy.package_dir())}
    everything = "\n".join(real.values())
    for assignment, entries in WITHHELD.items():
        copied = "\n".join(p.read_text(encoding="utf-8")
                           for p in (copies[assignment] / "ssa_course").rglob("*.py"))
        for entry in entries:
            # a line of the function found nowhere else in the package is not in the copy
            unique = [line for line in _body_lines(entry) if everything.count(line) == 1]
            assert unique, f"{entry}: no line of its own to look for"
            for line in unique[:3]:
                assert line not in copied, f"{assignment}: {entry}'s line {line!r} is in the copy"
            assert message(entry, assignment) in copied


CHILD = r"""
import ast, contextlib, inspect, io, json, pickle, sys, traceback
request = pickle.loads(sys.stdin.buffer.read())
sys.path[:] = request["path"]
import ssa_course
report = {"file": ssa_course.__file__, "raises": {}, "setup": [], "answers": {},
          "bare": ["ssa_course.grading" in sys.modules,
                   "ssa_course.grading.withheld" in sys.modules]}
WithheldError = sys.modules["ssa_course.grading.withheld"].WithheldError
import importlib, importlib.machinery
# the real package is nowhere else on the path
report["elsewhere"] = repr(importlib.machinery.PathFinder.find_spec("ssa_course",
                                                                     request["path"][1:]))
for entry in request["entries"]:
    module, _, qualname = entry.partition(":")
    found = importlib.import_module(module)
    for part in qualname.split("."):
        found = inspect.getattr_static(found, part)
    if isinstance(found, (staticmethod, classmethod)):
        found = found.__func__
    if isinstance(found, property):
        found = found.fget
    params = inspect.signature(found).parameters.values()
    args = [None for p in params if p.default is p.empty
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    kwargs = {p.name: None for p in params if p.default is p.empty and p.kind is p.KEYWORD_ONLY}
    try:
        found(*args, **kwargs)
        report["raises"][entry] = "returned"
    except WithheldError as e:
        report["raises"][entry] = "WithheldError: " + str(e)
    except BaseException as e:
        report["raises"][entry] = f"{type(e).__name__}: {e}"
ns = {"__name__": "__main__"}
out = io.StringIO()
for kind, gid, source in request["cells"]:
    if kind != "setup":
        continue
    for node in ast.parse(source).body:
        code = compile(ast.Module([node], []), f"<setup:{gid}>", "exec")
        try:
            with contextlib.redirect_stdout(out):
                exec(code, ns)
        except BaseException as e:
            report["setup"].append([gid, node.lineno, type(e).__name__,
                                    isinstance(e, WithheldError), str(e)[:300]])
import ssa_course.grading.withheld
report["attribute"] = ssa_course.grading.withheld.WithheldError is WithheldError
for kind, gid, source in request["cells"]:
    if kind == "solution":
        exec(compile(source, f"<solution:{gid}>", "exec"), ns)
try:  # the regrade's plumbing around a call in the learner's process
    from ssa_course.grading.detach import detach, fresh
except ImportError:
    detach = fresh = lambda value: value
for name, data in request["inputs"]:
    try:
        args = pickle.loads(data)
        with contextlib.redirect_stdout(out):
            answer = detach(ns[name](*fresh(args)))
        report["answers"][name] = "ok: " + repr(answer)[:200]
    except BaseException as e:
        report["answers"][name] = (("WithheldError" if isinstance(e, WithheldError)
                                    else type(e).__name__) + ": " + str(e)[:300]
                                   + "".join(traceback.format_exc(limit=-3))[-600:])
json.dump(report, sys.stdout)
"""


def _inputs(assignment: str, notebook: list[tuple[str, str, str]]) -> list[tuple[str, bytes]]:
    """The answers' inputs, built with the real package (as the grading process does)."""
    ns: dict[str, Any] = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        for kind, gid, source in notebook:
            if kind == "setup":
                exec(compile(source, f"<setup:{gid}>", "exec"), ns)
        return [(name, pickle.dumps(eval(expression, ns)))
                for name, expression in INPUTS[assignment]]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_in_the_copy(assignment: str, copies: dict[str, Path]) -> None:
    notebook = cells(assignment)
    answers = [gid for kind, gid, src in notebook if kind == "test"]
    assert answers, assignment
    request = {"path": [str(copies[assignment]), *site_packages()],
               "entries": withheld(assignment), "cells": notebook,
               "inputs": _inputs(assignment, notebook)}
    run = subprocess.run([sys.executable, "-I", "-S", "-c", CHILD], input=pickle.dumps(request),
                         capture_output=True, timeout=300, cwd=copies[assignment])
    assert run.returncode == 0, run.stderr.decode()[-3000:]
    report = json.loads(run.stdout)
    # the copy, and not the real package, is what the process imports
    assert Path(report["file"]).resolve().is_relative_to(copies[assignment].resolve())
    # importing ssa_course loads WithheldError's module, not ssa_course.grading
    assert report["bare"] == [False, True]
    assert report["elsewhere"] == "None"
    assert report["attribute"]  # ssa_course.grading.withheld, as the package's attribute
    for entry in withheld(assignment):
        assert report["raises"][entry] == "WithheldError: " + message(entry, assignment), entry
    failed = [f"{gid} line {line}: {name}: {text}" for gid, line, name, _, text in report["setup"]]
    print(f"{assignment}: setup statements that fail in the copy:", *failed, sep="\n  ")
    withheld_in_setup = {(assignment, gid, line) for gid, line, _, hit, _ in report["setup"]
                         if hit}
    known = {k for k in KNOWN_SETUP_CONFLICTS if k[0] == assignment}
    assert withheld_in_setup == known, failed
    for name, _ in INPUTS[assignment]:
        print(f"  {name}: {report['answers'][name]}")
        assert report["answers"][name].startswith("ok: "), (name, report["answers"][name])


def test_withheld_error_is_an_exception() -> None:
    assert issubclass(WithheldError, Exception)
