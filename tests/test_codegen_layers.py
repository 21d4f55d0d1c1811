"""The code generator's shape (issue #38): neutral modules in ``codegen/``, one folder per
CPU, and imports that never go round in a circle.

* no import cycle among the codegen modules (imports under ``if TYPE_CHECKING:`` are
  types only and are not followed; every other import, at any depth, is);
* neither CPU folder imports the other (``x86_64`` and ``aarch64`` share only neutral
  modules, through the :class:`~ssa_course.codegen.machine.Machine` protocol);
* a neutral module reaches a CPU only through the registry of machines
  (:mod:`ssa_course.codegen.machines`, which imports them by name, lazily);
* the jobs both CPUs have live in modules of the same name in each folder.
"""

from __future__ import annotations

import ast
from pathlib import Path

from test_layers import imported_modules, module_name

ROOT = Path(__file__).resolve().parent.parent / "ssa_course"
CODEGEN = ROOT / "codegen"
CPUS = ("x86_64", "aarch64")
REGISTRY = "ssa_course.codegen.machines"
# The same job, the same module name in every CPU's folder.
SHARED_JOBS = ("machine", "registers", "minstr", "select", "select_ops", "select_effects",
               "patterns", "frame", "emit", "verify", "compile", "encode", "layout",
               "assemble", "runtime", "runtime_entry", "run", "emulate", "disasm")


def _type_checking_lines(tree: ast.AST) -> set[int]:
    """Lines of imports inside ``if TYPE_CHECKING:`` blocks."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                for sub in ast.walk(inner):
                    if isinstance(sub, ast.Import | ast.ImportFrom):
                        lines.add(sub.lineno)
    return lines


def _modules() -> dict[str, Path]:
    return {module_name(p, ROOT): p for p in sorted(CODEGEN.rglob("*.py"))}


def _graph() -> dict[str, set[str]]:
    """codegen module -> the codegen modules it imports (types-only imports left out)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        skip = _type_checking_lines(tree)
        targets: set[str] = set()
        for line, target in imported_modules(tree, name, path.name == "__init__.py"):
            if line in skip:
                continue
            # `from ssa_course.codegen.x86_64 import emit` names a module: follow it too
            targets |= {t for t in _resolve(tree, line, target, modules) if t != name}
        graph[name] = targets
    return graph


def _resolve(tree: ast.AST, line: int, target: str, modules: dict[str, Path]) -> set[str]:
    found = {target} if target in modules else set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.lineno == line:
            found |= {f"{target}.{a.name}" for a in node.names
                      if f"{target}.{a.name}" in modules}
    if not found and target.startswith("ssa_course.codegen"):
        found.add(target.rpartition(".")[0] if target.rpartition(".")[0] in modules
                  else target)
    return {m for m in found if m in modules}


def _cpu_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[2] in CPUS else None


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (as a path that returns to its start), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_no_import_cycle_among_codegen_modules():
    cycle = _cycle(_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_one():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_cpu_imports_another():
    wrong = [f"{m} imports {t}" for m, targets in _graph().items() for t in targets
             if _cpu_of(m) and _cpu_of(t) and _cpu_of(m) != _cpu_of(t)]
    assert not wrong, wrong


def test_neutral_modules_reach_a_cpu_only_through_the_registry():
    # all imports count here, types-only ones too: a neutral module names no CPU's types
    wrong = []
    for name, path in _modules().items():
        if _cpu_of(name) or name == REGISTRY:
            continue
        tree = ast.parse(path.read_text())
        for line, target in imported_modules(tree, name, path.name == "__init__.py"):
            if _cpu_of(target):
                wrong.append(f"{path.relative_to(ROOT.parent)}:{line}: imports {target}")
    assert not wrong, "\n".join(wrong)


def test_the_registry_imports_no_cpu_statically():
    tree = ast.parse((CODEGEN / "machines.py").read_text())
    assert not [t for _, t in imported_modules(tree, REGISTRY, False) if _cpu_of(t)]


def test_both_cpus_name_their_shared_jobs_alike():
    for cpu in CPUS:
        missing = [job for job in SHARED_JOBS if not (CODEGEN / cpu / f"{job}.py").exists()]
        assert not missing, f"{cpu} lacks {missing}"


def test_every_registered_machine_loads_and_says_its_name():
    from ssa_course.codegen.machines import MACHINES, machine

    for name in MACHINES:
        assert machine(name).name == name
