"""The statements of a Tiny program by source line, and what a statement that makes no
item of its own in a representation became (the linked page lists such lines: a line a
student points at is never silently empty -- docs/lines.md).

The walk is iterative and visits each AST node once (the checked tree shares nodes: a
call's resolved callee), so a deep or mutually recursive program costs one pass.
"""

from __future__ import annotations

from ssa_course.tiny import ast as A


def statements_by_line(program: A.Program) -> dict[int, list[A.Stmt]]:
    """Each source line holding a statement -> those statements (blocks excluded), in
    line order."""
    out: dict[int, list[A.Stmt]] = {}
    work: list[A.Node] = [fn.body for fn in program.functions.values()]
    while work:
        x = work.pop()
        if isinstance(x, A.Stmt) and not isinstance(x, A.Block):
            out.setdefault(x.pos.line, []).append(x)
        work.extend(child for _, child in A.children(x))
    return dict(sorted(out.items()))


def _value(e: A.Expr) -> str | None:
    if isinstance(e, A.IntLit):
        return str(e.value)
    if isinstance(e, A.FloatLit):
        return repr(e.value)
    if isinstance(e, A.BoolLit):
        return "true" if e.value else "false"
    return None


def why_no_item(stmts: list[A.Stmt], item: str = "item") -> str:
    """Why a line with these statements has no ``item`` (``"node"``, ``"instruction"``)
    of its own in an optimizing representation: one sentence for the page."""
    for s in stmts:
        if isinstance(s, A.VarDecl | A.Assign):
            target = s.name if isinstance(s, A.VarDecl) else (
                s.target.name if isinstance(s.target, A.Name) else None)
            value = s.init if isinstance(s, A.VarDecl) else s.value
            if target is None:
                continue
            if isinstance(value, A.Name):
                return (f"{target} is another name for the value of {value.name}: "
                        f"a copy makes no {item}")
            constant = _value(value)
            if constant is not None and item == "node":
                return (f"{target} is the constant {constant}: one node per constant, "
                        f"shared by every line that uses it and marked with the first")
            if constant is not None:
                return (f"{target} is the constant {constant}: no {item} of its own (the "
                        f"{constant} is an operand of the {item}s that use it, or made "
                        f"once for an earlier line with the same constant)")
        if isinstance(s, A.Try):
            return (f"a try makes no {item} of its own: each call in its body gets an "
                    f"exceptional exit, and each throw a jump, to its catch")
        if isinstance(s, A.While | A.For | A.If):
            return (f"its test was decided when compiling: the branch and the {item}s "
                    f"of the side never taken are gone")
    return (f"no {item} of its own: its value was folded into the lines that use it, or "
            f"it never runs or is never used")
