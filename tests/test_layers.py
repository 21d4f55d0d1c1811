"""The package's layers point one way: every import in ``ssa_course`` is checked.

Layers, lowest first::

    base   errors, runtime, params, files, output, signals, opcodes, floats, bitcast, viz
           (neutral drawing: no IR inside)
    tiny   the Tiny front end and its AST
    quads  three-address code, CFGs, dominators, the quads passes
    ssa    SSA forms and Julia-style IRCode
    analysis  analyses over IRCode (escape analysis, lesson 10)
    son    the sea of nodes
    codegen  machine code (lesson 11)
    top    compilation, registry, lessons, stages/views/passes, CLI, widgets, magic,
           grading, args, the package itself

A module may import its own layer and the layers below it, never one above -- not at
module level and not inside a function -- and no module below ``top`` imports the
package itself (``import ssa_course`` / ``from ssa_course import x``). A new upward arrow
fails here with the file and line.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "ssa_course"

ORDER = ("base", "tiny", "quads", "ssa", "analysis", "son", "codegen", "top")
BASE_MODULES = {"errors", "runtime", "params", "files", "output", "signals", "opcodes",
                "floats", "bitcast", "viz"}
IR_PACKAGES = {"tiny", "quads", "ssa", "analysis", "son", "codegen"}


def layer_of(module: str) -> str:
    """The layer of a dotted module name inside the package (``ssa_course`` is top)."""
    parts = module.split(".")
    if len(parts) == 1:
        return "top"
    head = parts[1]
    if head in IR_PACKAGES:
        return head
    if head in BASE_MODULES:
        return "base"
    return "top"


def module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, target) for every import of the package's own modules, at any depth."""
    found: list[tuple[int, str]] = []
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names
                      if a.name.split(".")[0] == "ssa_course"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "ssa_course":
                continue
            if target == "ssa_course":  # from ssa_course import x: x may be a module
                for a in node.names:
                    sub = ROOT / a.name
                    is_module = sub.is_dir() or sub.with_suffix(".py").exists()
                    found.append((node.lineno, f"ssa_course.{a.name}" if is_module
                                  else "ssa_course"))
            else:
                found.append((node.lineno, target))
    return found


def upward_arrows(root: Path) -> list[str]:
    problems = []
    for path in sorted(root.rglob("*.py")):
        module = module_name(path, root)
        src_layer = layer_of(module)
        tree = ast.parse(path.read_text(), str(path))
        for line, target in imported_modules(tree, module, path.name == "__init__.py"):
            dst_layer = layer_of(target)
            if ORDER.index(dst_layer) > ORDER.index(src_layer):
                rel = path.relative_to(root.parent)
                problems.append(f"{rel}:{line}: {module} ({src_layer}) imports {target} "
                                f"({dst_layer}): an arrow pointing up")
    return problems


def test_every_import_points_down():
    problems = upward_arrows(ROOT)
    assert not problems, "\n".join(problems)


def test_the_check_finds_an_upward_arrow(tmp_path):
    """The checker itself: a function-level import of the registry from an IR package, and
    a base module importing an IR package, are both reported with file and line."""
    pkg = tmp_path / "ssa_course"
    (pkg / "son").mkdir(parents=True)
    (pkg / "viz").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "son" / "__init__.py").write_text("")
    (pkg / "viz" / "__init__.py").write_text("")
    (pkg / "registry.py").write_text("")
    (pkg / "son" / "x.py").write_text(
        "from ssa_course.son import y\n\ndef f():\n    from ssa_course import registry\n")
    (pkg / "viz" / "draw.py").write_text("from ..son import x\n")
    problems = upward_arrows(pkg)
    assert any("son/x.py:4:" in p and "ssa_course.registry (top)" in p for p in problems)
    assert any("viz/draw.py:1:" in p and "ssa_course.son (son)" in p for p in problems)
    assert len(problems) == 2


def test_layers_are_named_for_real_packages():
    """Every layer name refers to a directory or module that exists (codegen may come)."""
    for name in (BASE_MODULES | IR_PACKAGES) - {"codegen", "opcodes"}:
        assert (ROOT / name).is_dir() or (ROOT / f"{name}.py").exists(), name
