"""Custom ``opt`` pipelines: every pipeline ``opt -p`` accepts gives a verified program
whose output runs like its input, or is refused before it runs (issue #19); programs
without ``main``; the library's bad arguments."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from corpus import load_bril_corpus, load_corpus
from fuzzrun import optimized_text, pipeline_seeds, run_pipeline_stage
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ssa_course
from ssa_course import passes
from ssa_course.compilation import compile_source
from ssa_course.errors import ArgumentTypeError, ArgumentValueError, UsageError
from ssa_course.runtime import Limits
from ssa_course.stages import run
from ssa_course.views import render

ROOT = Path(__file__).resolve().parent.parent

DEAD_LOOP = ("@main { t: bool = const true; x: int = const 3; br t .a .c; .a: ret;"
             " .c: x: int = add x x; jmp .c; }\n")


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ssa_course", *args], capture_output=True,
                          text=True, cwd=ROOT)


def one_line_error(r: subprocess.CompletedProcess, status: int = 1) -> str:
    assert r.returncode == status, r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    return r.stderr


@pytest.mark.parametrize("command", [["check"], ["run"], ["opt"], ["compile", "-o", "EXE"]])
def test_bril_without_main_is_refused_alike_by_every_command(command, tmp_path):
    src = tmp_path / "lib.bril"
    src.write_text("@f(a: int): int { ret a; }\n")
    args = [str(tmp_path / a) if a == "EXE" else a for a in command]
    err = one_line_error(cli(*args[:1], str(src), *args[1:]))
    assert "no function '@main'" in err
    assert not (tmp_path / "EXE").exists()


@pytest.mark.parametrize("pipeline", ["parse", "parse,bce", "lvn,sroa,parse,gcm",
                                      "parse,gcm", "parse-raw,gcm", "sroa,parse,gcm"])
def test_a_loop_only_a_folded_branch_entered_is_dropped(pipeline, tmp_path):
    src = tmp_path / "m10.bril"
    src.write_text(DEAD_LOOP)
    out = tmp_path / "out.bril"
    r = cli("opt", str(src), "-p", pipeline, "-o", str(out))
    assert r.returncode == 0, r.stderr
    run = cli("run", str(out))
    assert (run.returncode, run.stdout) == (0, "")


@pytest.mark.parametrize("pipeline", ["sroa,parse,gcm", "sroa,parse", "sroa,parse,bce,gcm"])
def test_dead_inner_loop_through_quads_built_graphs(pipeline, tmp_path):
    src = ROOT / "tests" / "programs" / "sroa_dead_inner_loop.tiny"
    out = tmp_path / "out.bril"
    r = cli("opt", str(src), "-p", pipeline, "-o", str(out))
    assert r.returncode == 0, r.stderr
    want = cli("run", str(src), "--", "-2", "true")
    got = cli("run", str(out), "--", "-2", "true")
    assert (got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout,
                                                        want.stderr)


def test_code_typed_names_an_unknown_function():
    with pytest.raises(ArgumentValueError, match=r"unknown function 'nope'.*known: main"):
        ssa_course.code_typed("fn main() { print(1); }", "nope")
    with pytest.raises(ArgumentTypeError, match="'fn' must be a str"):
        ssa_course.code_typed("fn main() { print(1); }", 5)  # type: ignore[arg-type]
    assert "print(1)" in repr(ssa_course.code_typed("fn main() { print(1); }"))


def test_sea_of_nodes_checks_its_options():
    with pytest.raises(ArgumentTypeError, match="'options' must be a BuildOptions or None, "
                                                "not int"):
        ssa_course.sea_of_nodes("fn main() { print(1); }", options=5)
    with pytest.raises(ArgumentTypeError, match="'optimize' must be a bool"):
        ssa_course.sea_of_nodes("fn main() { print(1); }", optimize="no")  # type: ignore
    assert ssa_course.sea_of_nodes("fn main() { print(1); }").functions["main"]


# ---------------------------------------------------------------- item 4: every pipeline


def test_a_pass_that_does_not_take_the_form_is_refused_before_the_file_is_read(tmp_path):
    err = one_line_error(cli("opt", str(tmp_path / "missing.tiny"), "-p", "ssa,sccp"))
    assert err == "error: pass 'sccp' works on graph, but after ssa the program is ssa\n"
    err = one_line_error(cli("opt", str(tmp_path / "missing.tiny"), "-p", "parse,inline"))
    assert "pass 'inline' works on source, but after parse the program is graph" in err
    with pytest.raises(UsageError, match="pass 'gcm' works on graph, but after nothing"):
        passes.check_pipeline(["gcm"])


def test_dom_cse_keeps_the_block_a_phi_names(tmp_path):
    src = tmp_path / "d3.tiny"
    src.write_text("fn main(){ for (var i=0;i<2;i=i+1){} for (var i=0;i<2;i=i+1){}"
                   " print(7); }\n")
    r = cli("opt", str(src), "-p", "ssa,dom-cse")
    assert r.returncode == 0, r.stderr
    back = compile_source(r.stdout, "d3.bril", kind="bril")
    assert run(back, [], via="quads").stdout == "7\n"


# fuzz seed 50335 (shrunk): out of SSA, back into SSA and out again, with a try in a loop.
# The enter block's edge to the handler kept a value the handler reads live round the loop
# (a phi of nothing on entry), and the copies of the second destruction read it unset.
SEED_50335 = """struct P { v: int; ok: bool; xs: [int]; }
fn main(n: int, flag: bool) {
    var a = 0;
    var d = 0;
    var ps = new P[5];
    var w1 = 0;
    while (w1 < 2) {
        w1 = w1 + 1;
        d = 0;
        try {
            d = a;
            if (false) {
                throw 0;
            }
        } catch (e14) {
        }
    }
    print(d);
    a = ps[2].v;
}
"""


@pytest.mark.parametrize("pipeline", ["ssa,out-of-ssa,ssa,out-of-ssa",
                                      "ssa,coalesce-phis,out-of-ssa,ssa,dom-cse,out-of-ssa"])
def test_ssa_twice_through_a_try_in_a_loop(pipeline, tmp_path):
    src = tmp_path / "s50335.tiny"
    src.write_text(SEED_50335)
    r = cli("opt", str(src), "-p", pipeline)
    assert r.returncode == 0, r.stderr
    got = run(compile_source(r.stdout, "s.bril", kind="bril"), ["-2", "true"], via="quads")
    assert (got.stdout, got.status) == ("0\n", 2) and "unset element" in got.error, got


def test_parse_raw_writes_a_value_where_the_checker_proved_the_end_dead(tmp_path):
    src = tmp_path / "g.tiny"
    src.write_text("fn g() -> int { while (true) { return 1; } } fn main(){ print(g()); }\n")
    r = cli("opt", str(src), "-p", "parse-raw")
    assert r.returncode == 0, r.stderr
    back = compile_source(r.stdout, "g.bril", kind="bril")
    assert run(back, [], via="quads").stdout == "1\n"


def _small_corpus() -> list:
    cases = [c for c in load_corpus() + load_bril_corpus() if len(c.source) < 1500
             and c.path.suffix != ".json"]
    return cases[::3]  # every third: a spread of shapes at a third of the time


SMALL = _small_corpus()


def _drawn_pipeline(picks: list[int]) -> list[str]:
    """A pipeline from the registry, each pass taking what the last one made."""
    form, names = "source", []
    for k in picks:
        options = passes.accepting(form)
        p = options[k % len(options)]
        names.append(p.name)
        form = p.makes
    return names


@given(case=st.sampled_from(SMALL), picks=st.lists(st.integers(0, 10 ** 6), min_size=1,
                                                     max_size=7))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_pipelines_verify_and_run_like_their_input(case, picks):
    """A pipeline drawn from the registry (each pass taking what the last one made) gives
    a verified program whose written Bril runs like the input, as written and out of SSA."""
    names = _drawn_pipeline(picks)
    comp = compile_source(case.source, case.path.name)
    want = run(comp, case.args, via="quads", limits=Limits(steps=2_000_000))
    got = run_pipeline_stage(compile_source(case.source, case.path.name), names, case.args,
                             Limits(steps=2_000_000))
    assert (got.status, got.stdout, got.error) == (want.status, want.stdout, want.error), \
        f"{case.name} through {','.join(names)}"


@given(names=st.lists(st.sampled_from([p.name for p in passes.all_passes()]), min_size=1,
                      max_size=5))
@settings(max_examples=80, deadline=None)
def test_any_pipeline_is_run_or_refused_in_one_line(names):
    """Any list of registered passes: refused before running (UsageError naming a pass),
    or run to a program the verifiers accept; never another exception."""
    comp = compile_source("fn main(n: int) { var s = 0; for (var i = 0; i < n; i = i + 1)"
                          " { s = s + i; } print(s); }")
    try:
        passes.check_pipeline(names)
    except UsageError as e:
        assert str(e).startswith("pass '") and "\n" not in str(e)
        return
    got = run_pipeline_stage(comp, names, ["5"], Limits(steps=100_000))
    assert (got.status, got.stdout) == (0, "10\n"), (names, got.error)


def test_fuzz_pipelines_are_valid_and_seeded():
    a, b = pipeline_seeds(5, 4), pipeline_seeds(5, 4)
    assert a == b and len(a) == 4 and pipeline_seeds(6, 4) != a
    for stage in a:
        passes.check_pipeline(stage[len("opt:"):].split(","))  # never refused


# ---------------------------------------------------------------- item 5: SSA with try


TRY_EXAMPLE = ("fn main(){ var s = 0; try { s = 1; throw 5; } catch (e) { s = s + e; }"
               " print(s); }\n")
SSA_READERS = ("quads", "cfg", "lvn-dce", "ssa-pruned", "out-of-ssa", "julia", "son",
               "son-opt", "scheduled", "optimized", "sroa")


def _ssa_text(source: str, name: str, names: tuple[str, ...] = ("ssa",)) -> str:
    return optimized_text(compile_source(source, name), list(names))


def test_ssa_of_a_handler_phi_means_the_same_in_every_stage():
    text = _ssa_text(TRY_EXAMPLE, "t.tiny")
    assert "phi" in text  # the handler's phi is written
    back = compile_source(text, "t.bril", kind="bril")
    for via in SSA_READERS:
        r = run(back, [], via=via)
        assert (r.status, r.stdout) == (0, "6\n"), (via, r.error)
    shown = render(back, "bril")
    assert "s.3.exc: int = id s.2;" in shown and "s.3: int = id s.3.exc;" in shown


TRY_CASES = [c for c in load_corpus() if "try" in c.source]


@pytest.mark.parametrize("names", [("ssa",), ("ssa", "coalesce-phis")], ids=",".join)
@pytest.mark.parametrize("case", TRY_CASES, ids=lambda c: c.name)
def test_ssa_of_try_programs_reads_back_the_same(case, names):
    """Written SSA (also with phi webs sharing one name, where a handler's phi may read its
    own name: fuzz seed 41) means the same in every stage that reads it back."""
    back = compile_source(_ssa_text(case.source, case.path.name, names), "x.bril",
                          kind="bril")
    for via in SSA_READERS:
        r = run(back, case.args, via=via)
        assert (r.status, r.stdout, r.error) == (case.exit, case.stdout,
                                                 case.stderr.rstrip("\n")), via


@pytest.mark.parametrize("pipeline", [["parse-raw"], ["parse-raw", "gcm", "out-of-ssa"],
                                      ["parse"], ["parse", "sccp", "gcm"]], ids=",".join)
def test_fuzz_seed_5003_raw_graph_check_on_a_handler_phi(pipeline):
    case = next(c for c in load_corpus() if c.name == "fuzz_raw_trap_phi_type")
    got = run_pipeline_stage(compile_source(case.source, case.path.name), pipeline,
                             case.args, Limits())
    assert (got.status, got.stdout, got.error) == (case.exit, case.stdout,
                                                   case.stderr.rstrip("\n"))


def test_fuzz_seed_308_a_phi_names_a_label_merged_into_the_next():
    case = next(c for c in load_corpus() if c.name == "fuzz_phi_names_merged_label")
    names = ["landing", "coalesce", "layout", "ssa", "dom-cse", "coalesce-phis", "out-of-ssa"]
    got = run_pipeline_stage(compile_source(case.source, case.path.name), names, case.args,
                             Limits())
    assert (got.status, got.stdout, got.error) == (case.exit, case.stdout, "")


def test_a_phi_that_names_an_empty_block_keeps_its_edge():
    # Fuzz seed 313: after ssa,dom-cse,coalesce-phis an empty block (.and.end.3) falls into
    # a loop header whose phi names it; building the CFG merged the two labels into one
    # block, so the phi's edge from .and.end.3 became an edge from itself and out-of-ssa
    # put its copy on a block of its own (the loop counter was never set).
    from fuzzgen import generate

    comp = compile_source(generate(313, 30), "s313.tiny")
    want = run(comp, ["1", "true"], via="quads")
    got = run_pipeline_stage(comp, ["ssa", "dom-cse", "coalesce-phis", "out-of-ssa"],
                             ["1", "true"], Limits())
    assert (got.stdout, got.status, got.error) == (want.stdout, want.status, want.error)


@given(case=st.sampled_from(SMALL), picks=st.lists(st.integers(0, 10 ** 6), min_size=1,
                                                     max_size=6))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_verifying_once_or_after_every_pass_gives_the_same_program(case, picks):
    """``verify_each`` changes when the verifiers run, never what a pipeline makes: the
    same passes print the same program either way (and neither raises)."""
    names = _drawn_pipeline(picks)
    outs = [passes.emit(passes.run_pipeline(compile_source(case.source, case.path.name),
                                            names, verify_each=each), "quads")
            for each in (True, False)]
    assert outs[0] == outs[1], f"{case.name} through {','.join(names)}"
