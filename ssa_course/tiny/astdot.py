"""Drawing a checked Tiny AST as a tree (DOT): one box per node, children left to right.

The walk uses an explicit stack, so a deeply nested program cannot overflow Python's stack.
"""

from __future__ import annotations

from ssa_course.errors import UsageError
from ssa_course.tiny import ast
from ssa_course.viz.options import DrawOptions, options_or_default


def _label(node: object) -> str:
    """A box's text: the node's class, what tells it apart (the literal, the name, the
    operator), and for an expression the type the checker gave it."""
    kind = type(node).__name__
    detail = ""
    if isinstance(node, ast.IntLit | ast.FloatLit | ast.BoolLit):
        detail = str(node.value).lower() if isinstance(node, ast.BoolLit) else str(node.value)
    elif isinstance(node, ast.Name | ast.Call | ast.Field | ast.NewStruct):
        detail = node.name
    elif isinstance(node, ast.Binary | ast.Unary):
        detail = node.op
    elif isinstance(node, ast.VarDecl):
        # after checking, the resolved variable's unique name (x, x.2): shadowing shows
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


Node = ast.FnDef | ast.Stmt | ast.Expr  # what the drawing shows, one box each


def _children(node: Node) -> list[tuple[str, ast.Stmt | ast.Expr]]:
    if isinstance(node, ast.FnDef):
        return [("body", node.body)]
    return ast.children(node)


def _quote(text: str) -> str:
    # DOT's double-quoted string: backslashes and quotes escaped
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _walk(fn: ast.FnDef) -> list[tuple[str, str, str | None, str, int]]:
    """(id, label, parent id, edge label, depth) of every node under ``fn``, in preorder
    (ids ``n<k>`` are assigned later, per drawing)."""
    out: list[tuple[str, str, str | None, str, int]] = [("", _label(fn), None, "", 0)]
    # an explicit stack, not recursion: a deeply nested expression must not overflow
    stack: list[tuple[int, Node, int]] = [(0, fn, 0)]
    while stack:
        parent, node, depth = stack.pop()
        pending: list[tuple[int, Node, int]] = []
        for edge_label, child in _children(node):
            out.append(("", _label(child), str(parent), edge_label, depth + 1))
            pending.append((len(out) - 1, child, depth + 1))
        stack.extend(reversed(pending))  # first child on top: preorder, source order
    return out


def ast_to_dot(program: ast.Program, options: DrawOptions | None = None) -> str:
    """The program's syntax tree as deterministic DOT text (one cluster per function).
    ``options`` picks the functions; past its budget the deepest levels are left out
    and the caption says how many nodes that was."""
    options = options_or_default(options)
    if options.around is not None:
        raise UsageError("around= names a node of a graph (son, cfg, julia, ...); the "
                         "syntax tree has none: use function= instead")
    walks = {name: _walk(fn) for name, fn in program.functions.items()}
    names = options.pick_functions(list(walks), {n: len(w) for n, w in walks.items()})
    rows = [(name, k, row) for name in names for k, row in enumerate(walks[name])]
    total = len(rows)
    keep = None
    if options.budget is not None and total > options.budget:
        # breadth first: a node is kept when every shallower node is (ties: source order)
        ranked = sorted(range(total), key=lambda i: (rows[i][2][4], i))
        keep = set(ranked[:options.budget])
    lines = ["digraph ast {", '  node [shape=box, fontname="monospace", fontsize=10];',
             "  edge [fontsize=8];"]
    notes = []
    others = [n for n in program.functions if n not in names]
    if others:
        notes.append(f"function {', '.join(names)} (not drawn: {', '.join(others)}; "
                     "pick one with function=)")
    if keep is not None:
        notes.append(f"{len(keep)} of {total} syntax nodes shown; {total - len(keep)} "
                     "deeper ones left out: use function=, or a larger budget=")
    if notes:
        lines.append(f"  label={_quote('; '.join(notes))};")
        lines.append("  labelloc=t;")
    ids: dict[tuple[str, int], str] = {}
    current = None
    for i, (name, k, (_, label, parent, edge_label, _depth)) in enumerate(rows):
        if keep is not None and i not in keep:
            continue
        if name != current:
            if current is not None:
                lines.append("  }")
            current = name
            lines.append(f"  subgraph cluster_{name} {{")
            lines.append(f"    label={_quote('fn ' + name)};")
        nid = ids[(name, k)] = f"n{len(ids)}"
        if parent is None:
            lines.append(f"    {nid} [label={_quote(label)}, style=filled, "
                         "fillcolor=lightyellow];")
        else:
            lines.append(f"    {nid} [label={_quote(label)}];")
            lines.append(f"    {ids[(name, int(parent))]} -> {nid} "
                         f"[label={_quote(edge_label)}];")
    if current is not None:
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"
