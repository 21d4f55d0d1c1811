"""Drawing a checked Tiny AST as a tree (DOT): one box per node, children left to right.

The walk uses an explicit stack, so a deeply nested program cannot overflow Python's stack.
"""

from __future__ import annotations

from dataclasses import fields

from ssa_course.tiny import ast


def _label(node: object) -> str:
    kind = type(node).__name__
    detail = ""
    if isinstance(node, ast.IntLit | ast.BoolLit):
        detail = str(node.value).lower() if isinstance(node, ast.BoolLit) else str(node.value)
    elif isinstance(node, ast.Name | ast.Call | ast.Field | ast.NewStruct):
        detail = node.name
    elif isinstance(node, ast.Binary | ast.Unary):
        detail = node.op
    elif isinstance(node, ast.VarDecl):
        detail = node.var.unique_name() if node.var else node.name
    elif isinstance(node, ast.FnDef):
        detail = node.name
    elif isinstance(node, ast.NewArray):
        detail = f"[{node.elem}]"
    ty = getattr(node, "ty", None)
    text = f"{kind} {detail}".strip()
    if ty is not None and isinstance(node, ast.Expr):
        text += f" : {ty}"
    return text


def _children(node: object) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    if isinstance(node, ast.FnDef):
        return [("body", node.body)]
    for f in fields(node):  # type: ignore[arg-type]
        if f.name in ("pos", "ty", "var", "fn", "name_pos"):
            continue
        value = getattr(node, f.name)
        if isinstance(value, ast.Expr | ast.Stmt):
            out.append((f.name, value))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, ast.Expr | ast.Stmt):
                    out.append((f"{f.name}[{i}]", item))
                elif isinstance(item, tuple) and len(item) == 3 and isinstance(item[1], ast.Expr):
                    out.append((item[0], item[1]))
    return out


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def ast_to_dot(program: ast.Program) -> str:
    """The whole program's syntax tree as deterministic DOT text (one cluster per function)."""
    lines = ["digraph ast {", '  node [shape=box, fontname="monospace", fontsize=10];',
             "  edge [fontsize=8];"]
    next_id = 0
    for fn in program.functions.values():
        lines.append(f"  subgraph cluster_{fn.name} {{")
        lines.append(f"    label={_quote('fn ' + fn.name)};")
        root = f"n{next_id}"
        next_id += 1
        lines.append(f"    {root} [label={_quote(_label(fn))}, style=filled, "
                     "fillcolor=lightyellow];")
        stack = [(root, fn)]
        while stack:
            parent_id, node = stack.pop()
            kids = _children(node)
            pending = []
            for edge_label, child in kids:
                cid = f"n{next_id}"
                next_id += 1
                lines.append(f"    {cid} [label={_quote(_label(child))}];")
                lines.append(f"    {parent_id} -> {cid} [label={_quote(edge_label)}];")
                pending.append((cid, child))
            stack.extend(reversed(pending))
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"
