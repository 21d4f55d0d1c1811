"""Two text faces of a Tiny syntax tree.

* :func:`format_ast` -- the tree itself, one node per line, indented by depth, with the
  checker's types and each node's ``line:col`` (what ``ssa-course show --as ast`` prints).
* :func:`format_source` -- the program pretty-printed back as Tiny source; it parses to
  the same tree (a property test holds it to that).

Both walk with explicit stacks, so a deep tree cannot overflow Python's stack.
"""

from __future__ import annotations

from ssa_course import opcodes
from ssa_course.floats import float_literal_text
from ssa_course.tiny import ast
from ssa_course.tiny.types import VOID


def _describe(node: object) -> str:
    """One line per node: its class, what tells it apart, its type, its position."""
    kind = type(node).__name__
    if isinstance(node, ast.IntLit):
        text = f"{kind} {node.value}"
    elif isinstance(node, ast.FloatLit):
        text = f"{kind} {float_literal_text(node.value)}"
    elif isinstance(node, ast.BoolLit):
        text = f"{kind} {'true' if node.value else 'false'}"
    elif isinstance(node, ast.Name):
        # resolved names print their variable's unique name: shadowing is visible
        text = f"{kind} {node.var.unique_name() if node.var else node.name}"
    elif isinstance(node, ast.Binary | ast.Unary):
        text = f"{kind} {node.op}"
    elif isinstance(node, ast.Call | ast.Field | ast.NewStruct):
        text = f"{kind} {node.name}"
    elif isinstance(node, ast.NewArray):
        text = f"{kind} {node.elem}"
    elif isinstance(node, ast.VarDecl):
        text = f"{kind} {node.var.unique_name() if node.var else node.name}"
    elif isinstance(node, ast.Try):
        text = f"{kind} catch {node.var.unique_name() if node.var else node.name}"
    else:
        text = kind
    ty = getattr(node, "ty", None)
    if ty is not None and isinstance(node, ast.Expr):
        text += f" : {ty}"
    pos = getattr(node, "pos", None)
    if pos is not None:
        text += f"  @{pos.line}:{pos.col}"
    return text


# Indentation stops growing here: a 10,000-arm else-if chain or a 100,000-term sum is a
# tree that deep, and indenting every line by its depth would make the text quadratic in
# the program. Deeper lines keep this indentation and start with their depth (``57| ``).
MAX_INDENT = 40


def _indent(depth: int) -> str:
    if depth <= MAX_INDENT:
        return "  " * depth
    return "  " * MAX_INDENT + f"{depth}| "


def format_ast(program: ast.Program) -> str:
    """The syntax tree as indented text (stable: same program, same text); past depth
    :data:`MAX_INDENT` a line shows its depth instead of more indentation."""
    lines: list[str] = []
    for s in program.structs.values():
        fields = ", ".join(f"{n}: {t}" for n, t, _ in s.fields)
        lines.append(f"struct {s.name} {{ {fields} }}  @{s.pos.line}:{s.pos.col}")
    for fn in program.functions.values():
        params = ", ".join(f"{p.name}: {p.ty}" for p in fn.params)
        ret = "" if fn.ret == VOID else f" -> {fn.ret}"
        lines.append(f"fn {fn.name}({params}){ret}  @{fn.pos.line}:{fn.pos.col}")
        # preorder with an explicit stack (deep trees must not overflow Python's)
        stack: list[tuple[int, str, ast.Node]] = [(1, "", fn.body)]
        while stack:
            depth, role, node = stack.pop()
            # a role is shown where it tells something: not for a list's items
            prefix = f"{role}: " if role and "[" not in role else ""
            lines.append(_indent(depth) + prefix + _describe(node))
            kids = ast.children(node)
            stack.extend((depth + 1, r, k) for r, k in reversed(kids))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- back to source

# Binary operators' precedence levels come from the opcode table.
_COMPARISON = opcodes.CMP_LEVEL
_UNARY = opcodes.PREFIX_LEVEL
_POSTFIX = 7  # primaries and postfix expressions: never need parentheses

# A piece of printed expression: text as is, or a sub-expression with the precedence its
# place needs (it gets parentheses when its own precedence is lower).
_Piece = str | tuple[ast.Expr, int]


def format_expr(e: ast.Expr) -> str:
    """An expression as Tiny source, with only the parentheses it needs.

    Pieces are expanded left to right from an explicit stack, so the work is linear in
    the size of the expression and deep trees (``1+1+...+1``) cannot overflow.
    """
    out: list[str] = []
    work: list[_Piece] = [(e, 0)]
    while work:
        item = work.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        node, need = item
        pieces = _pieces(node)
        if _prec(node) < need:
            pieces = ["(", *pieces, ")"]
        work.extend(reversed(pieces))
    return "".join(out)


def _prec(e: ast.Expr) -> int:
    if isinstance(e, ast.Binary):
        return opcodes.precedence(e.op)
    if isinstance(e, ast.Unary) and e.op in opcodes.CONVERSIONS:
        return _POSTFIX  # written like a call
    if isinstance(e, ast.Unary) or (isinstance(e, ast.IntLit) and e.value < 0):
        return _UNARY  # a folded INT_MIN literal prints as "-9223372036854775808"
    return _POSTFIX


def _comma_separated(items: list[ast.Expr]) -> list[_Piece]:
    # each item at precedence 0: an argument never needs parentheses
    pieces: list[_Piece] = []
    for i, x in enumerate(items):
        if i:
            pieces.append(", ")
        pieces.append((x, 0))
    return pieces


def _pieces(e: ast.Expr) -> list[_Piece]:
    """How ``e`` prints, one level deep."""
    if isinstance(e, ast.IntLit):
        return [str(e.value)]
    if isinstance(e, ast.FloatLit):
        return [float_literal_text(e.value)]
    if isinstance(e, ast.BoolLit):
        return ["true" if e.value else "false"]
    if isinstance(e, ast.Name):
        return [e.name]
    if isinstance(e, ast.Unary) and e.op in opcodes.CONVERSIONS:
        return [e.op, "(", (e.operand, 0), ")"]  # int(x), float(n)
    if isinstance(e, ast.Unary):
        # -(a + b) keeps its parentheses, -x needs none
        return [e.op, (e.operand, _UNARY)]
    if isinstance(e, ast.Binary):
        p = opcodes.precedence(e.op)
        # Left-associative: the right operand needs a strictly higher precedence;
        # comparisons do not chain, so both sides of one need a higher precedence.
        left_need = p + 1 if p in opcodes.NON_ASSOCIATIVE else p
        return [(e.left, left_need), f" {e.op} ", (e.right, p + 1)]
    if isinstance(e, ast.Call):
        return [e.name, "(", *_comma_separated(e.args), ")"]
    if isinstance(e, ast.Index):
        # the base binds tightest ((a + b)[0]); inside brackets anything goes
        return [(e.base, _POSTFIX), "[", (e.index, 0), "]"]
    if isinstance(e, ast.Field):
        return [(e.base, _POSTFIX), "." + e.name]
    if isinstance(e, ast.Len):
        return ["len(", (e.operand, 0), ")"]
    if isinstance(e, ast.NewArray):
        return [f"new {e.elem}[", (e.length, 0), "]"]
    if isinstance(e, ast.NewStruct):
        if not e.fields:
            return [f"new {e.name} {{}}"]
        pieces: list[_Piece] = [f"new {e.name} {{ "]
        for i, (name, value, _) in enumerate(e.fields):
            pieces += [", " if i else "", f"{name}: ", (value, 0)]
        return [*pieces, " }"]
    raise TypeError(f"not a Tiny expression: {type(e).__name__}")


def _simple(s: ast.Stmt) -> str:
    """A declaration or assignment without its ``;`` (a ``for`` header uses it too)."""
    if isinstance(s, ast.VarDecl):
        ty = f": {s.declared}" if s.declared is not None else ""
        return f"var {s.name}{ty} = {format_expr(s.init)}"
    if isinstance(s, ast.Assign):
        return f"{format_expr(s.target)} = {format_expr(s.value)}"
    raise TypeError(type(s).__name__)


def format_source(program: ast.Program) -> str:
    """The program as Tiny source (4-space indentation, one statement per line)."""
    out: list[str] = []
    for s in program.structs.values():
        out.append(f"struct {s.name} {{")
        out.extend(f"    {n}: {t};" for n, t, _ in s.fields)
        out.append("}")
    for fn in program.functions.values():
        params = ", ".join(f"{p.name}: {p.ty}" for p in fn.params)
        ret = "" if fn.ret == VOID else f" -> {fn.ret}"
        out.append(f"fn {fn.name}({params}){ret} {{")
        _format_block(fn.body.stmts, 1, out)
        out.append("}")
    return "\n".join(out) + "\n"


def _format_block(stmts: list[ast.Stmt], depth: int, out: list[str]) -> None:
    # Work items: a statement to print at a depth, or a literal closing line.
    work: list[tuple[int, ast.Stmt | str]] = [(depth, s) for s in reversed(stmts)]
    while work:
        d, item = work.pop()
        pad = "    " * d
        if isinstance(item, str):
            out.append(pad + item)
            continue
        s = item
        if isinstance(s, ast.VarDecl | ast.Assign):
            out.append(pad + _simple(s) + ";")
        elif isinstance(s, ast.ExprStmt):
            out.append(pad + format_expr(s.expr) + ";")
        elif isinstance(s, ast.Print):
            out.append(pad + f"print({', '.join(format_expr(a) for a in s.args)});")
        elif isinstance(s, ast.Return):
            out.append(pad + ("return;" if s.value is None else
                              f"return {format_expr(s.value)};"))
        elif isinstance(s, ast.Break | ast.Continue):
            out.append(pad + type(s).__name__.lower() + ";")
        elif isinstance(s, ast.Throw):
            out.append(pad + f"throw {format_expr(s.value)};")
        else:
            _push_compound(s, d, pad, out, work)


def _push_compound(s: ast.Stmt, d: int, pad: str, out: list[str],
                   work: list[tuple[int, ast.Stmt | str]]) -> None:
    """Print a statement with nested blocks: its header now, its body via ``work``."""
    later: list[tuple[int, ast.Stmt | str]] = []
    if isinstance(s, ast.Block):
        out.append(pad + "{")
        later = [(d + 1, x) for x in s.stmts] + [(d, "}")]
    elif isinstance(s, ast.While):
        out.append(pad + f"while ({format_expr(s.cond)}) {{")
        later = [(d + 1, x) for x in s.body.stmts] + [(d, "}")]
    elif isinstance(s, ast.For):
        init = _simple(s.init) if s.init else ""
        cond = format_expr(s.cond) if s.cond else ""
        step = _simple(s.step) if s.step else ""
        out.append(pad + f"for ({init}; {cond}; {step}) {{")
        later = [(d + 1, x) for x in s.body.stmts] + [(d, "}")]
    elif isinstance(s, ast.If):
        out.append(pad + f"if ({format_expr(s.cond)}) {{")
        later = [(d + 1, x) for x in s.then.stmts]
        orelse = s.orelse
        # an else-if chain prints as "} else if (...) {" at the same depth
        while isinstance(orelse, ast.If):
            later.append((d, f"}} else if ({format_expr(orelse.cond)}) {{"))
            later += [(d + 1, x) for x in orelse.then.stmts]
            orelse = orelse.orelse
        if orelse is not None:
            later.append((d, "} else {"))
            later += [(d + 1, x) for x in orelse.stmts]
        later.append((d, "}"))
    elif isinstance(s, ast.Try):
        out.append(pad + "try {")
        later = [(d + 1, x) for x in s.body.stmts]
        later.append((d, f"}} catch ({s.name}) {{"))
        later += [(d + 1, x) for x in s.handler.stmts] + [(d, "}")]
    else:
        raise TypeError(type(s).__name__)
    work.extend(reversed(later))
