"""Tiny's parser: handwritten recursive descent, one method per grammar rule.

It reads tokens from :mod:`ssa_course.tiny.lexer` and builds the tree of
:mod:`ssa_course.tiny.ast`. The grammar is LANGUAGE.md's; the comment above each
``parse_*`` method is the rule it implements, so the code reads top-down like the grammar.

Three things a textbook parser leaves out, and this one does not:

* **Positions.** Every node gets the position LANGUAGE.md's "where errors point" table asks
  for: a binary or unary operator at the operator, ``a[i]`` at the ``[``, ``p.f`` at ``f``,
  ``new`` expressions at ``new``, a call at the function's name, a statement at its first
  token.
* **Deep input.** Operators of one precedence level are parsed with a loop, so
  ``1+1+...+1`` of any length is fine, and so is an ``else if`` chain of any length.
  Parentheses, prefix operators, blocks and array types nest; their depth is capped
  (:data:`MAX_EXPR_DEPTH`, :data:`MAX_BLOCK_DEPTH`, :data:`MAX_TYPE_DEPTH`) with a located
  error, never a Python crash.
* **INT_MIN.** ``-9223372036854775808`` (unary minus applied directly to 2^63) is folded
  into one :class:`~ssa_course.tiny.ast.IntLit`; 2^63 anywhere else is "too large".

Syntax errors say what was expected and point at the token found instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ssa_course import opcodes
from ssa_course.errors import Pos, SourceError
from ssa_course.runtime import INT_MAX, INT_MIN, decimal_value, deep_recursion
from ssa_course.tiny import ast
from ssa_course.tiny.lexer import Token, tokenize
from ssa_course.tiny.types import BOOL, FLOAT, INT, VOID, ArrayType, StructType, Type

MAX_EXPR_DEPTH = 200  # nested parentheses, prefix operators, brackets, call arguments
MAX_BLOCK_DEPTH = 200  # nested blocks ({ ... } and the bodies of if/while/for/try)
MAX_TYPE_DEPTH = 100  # nested array types [[[int]]]

POSTFIX_STARTS = frozenset({"[", ".", "("})


class Parser:
    """Parses one source text; :meth:`parse_program` is the entry point."""

    def __init__(self, source: str, filename: str = "<input>"):
        self.source = source
        self.filename = filename
        self.tokens = tokenize(source, filename)
        self.i = 0
        self.expr_depth = 0
        self.block_depth = 0
        self.type_refs: list[tuple[str, Pos]] = []
        # The operator symbols of each precedence level, read from the opcode table.
        self.or_ops = opcodes.binary_symbols(opcodes.OR_LEVEL)
        self.and_ops = opcodes.binary_symbols(opcodes.AND_LEVEL)
        self.cmp_ops = opcodes.binary_symbols(opcodes.CMP_LEVEL)
        self.sum_ops = opcodes.binary_symbols(opcodes.SUM_LEVEL)
        self.term_ops = opcodes.binary_symbols(opcodes.TERM_LEVEL)
        self.prefix_ops = opcodes.prefix_symbols()

    # -- token helpers --------------------------------------------------------

    @property
    def tok(self) -> Token:
        """The current token (the last one is always ``eof``)."""
        return self.tokens[self.i]

    def peek(self, offset: int = 1) -> Token:
        return self.tokens[min(self.i + offset, len(self.tokens) - 1)]

    def at(self, text: str) -> bool:
        """Is the current token the symbol or keyword ``text``?"""
        t = self.tokens[self.i]
        return t.text == text and (t.kind == "symbol" or t.kind == "keyword")

    def at_symbol_in(self, symbols: frozenset[str]) -> bool:
        t = self.tokens[self.i]
        return t.kind == "symbol" and t.text in symbols

    def advance(self) -> Token:
        t = self.tokens[self.i]
        if t.kind != "eof":
            self.i += 1
        return t

    def error(self, message: str, tok: Token | None = None) -> SourceError:
        t = tok or self.tok
        return SourceError(message, t.pos, self.source, self.filename)

    def expected(self, what: str) -> SourceError:
        """``expected X, found Y``, pointing at Y (the token found instead)."""
        return self.error(f"expected {what}, found {self.tok.describe()}")

    def expect(self, text: str) -> Token:
        if not self.at(text):
            raise self.expected(f"'{text}'")
        return self.advance()

    def expect_name(self, what: str = "a name") -> Token:
        if self.tok.kind != "name":
            raise self.expected(what)
        return self.advance()

    # -- program = { struct_def | fn_def } -------------------------------------

    def parse_program(self) -> ast.Program:
        structs: dict[str, ast.StructDef] = {}
        functions: dict[str, ast.FnDef] = {}
        seen: dict[str, str] = {}  # every global name -> "struct" or "function"
        while self.tok.kind != "eof":
            if self.at("struct"):
                s = self.parse_struct_def()
                self._declare_global(seen, s.name, "struct", s.pos)
                structs[s.name] = s
            elif self.at("fn"):
                f = self.parse_fn_def()
                self._declare_global(seen, f.name, "function", f.pos)
                functions[f.name] = f
            else:
                raise self.expected("'fn' or 'struct'")
        return ast.Program(structs, functions, self.source, self.filename, self.type_refs)

    def _declare_global(self, seen: dict[str, str], name: str, kind: str, pos: Pos) -> None:
        """Functions and structs share one global namespace: a name is used once."""
        if name in seen:
            raise SourceError(f"'{name}' is already declared (as a {seen[name]})", pos,
                              self.source, self.filename)
        seen[name] = kind

    # struct_def = "struct" NAME "{" { NAME ":" type ";" } "}"
    def parse_struct_def(self) -> ast.StructDef:
        self.expect("struct")
        name = self.expect_name("a struct name")
        self.expect("{")
        fields: list[tuple[str, Type, Pos]] = []
        names: set[str] = set()
        while not self.at("}"):
            fname = self.expect_name("a field name or '}'")
            if fname.text in names:
                raise self.error(f"field '{fname.text}' is already declared", fname)
            names.add(fname.text)
            self.expect(":")
            fty = self.parse_type()
            self.expect(";")
            fields.append((fname.text, fty, fname.pos))
        self.expect("}")
        return ast.StructDef(name.text, fields, name.pos)

    # fn_def = "fn" NAME "(" [ param { "," param } ] ")" [ "->" type ] block
    def parse_fn_def(self) -> ast.FnDef:
        self.expect("fn")
        name = self.expect_name("a function name")
        self.expect("(")
        params: list[ast.Param] = []
        if not self.at(")"):
            params.append(self.parse_param())
            while self.at(","):
                self.advance()
                params.append(self.parse_param())
        self.expect(")")
        ret: Type = VOID
        if self.at("->"):
            self.advance()
            ret = self.parse_type()
        body = self.parse_block()
        return ast.FnDef(name.text, params, ret, body, name.pos)

    # param = NAME ":" type
    def parse_param(self) -> ast.Param:
        name = self.expect_name("a parameter name")
        self.expect(":")
        return ast.Param(name.text, self.parse_type(), name.pos)

    # type = "int" | "bool" | "[" type "]" | NAME
    def parse_type(self) -> Type:
        # "[" type "]" nests; the loop counts the brackets instead of recursing.
        opened: list[Token] = []
        while self.at("["):
            opened.append(self.advance())
            if len(opened) > MAX_TYPE_DEPTH:
                raise self.error(f"type nested too deeply (more than {MAX_TYPE_DEPTH} "
                                 "levels)", opened[-1])
        ty: Type
        if self.at("int"):
            self.advance()
            ty = INT
        elif self.at("bool"):
            self.advance()
            ty = BOOL
        elif self.at("float"):
            self.advance()
            ty = FLOAT
        elif self.tok.kind == "name":
            t = self.advance()
            self.type_refs.append((t.text, t.pos))
            ty = StructType(t.text)
        else:
            raise self.expected("a type")
        for _ in opened:
            self.expect("]")
            ty = ArrayType(ty)
        return ty

    # -- statements -----------------------------------------------------------

    # block = "{" { stmt } "}"
    def parse_block(self) -> ast.Block:
        start = self.expect("{")
        self.block_depth += 1
        if self.block_depth > MAX_BLOCK_DEPTH:
            raise self.error(f"blocks nested too deeply (more than {MAX_BLOCK_DEPTH} levels)",
                             start)
        stmts: list[ast.Stmt] = []
        while not self.at("}"):
            if self.tok.kind == "eof":
                raise self.expected("'}'")
            stmts.append(self.parse_stmt())
        self.advance()
        self.block_depth -= 1
        return ast.Block(start.pos, stmts)

    # stmt = "var" ... | "if" ... | "while" ... | "for" ... | "break" ";" | "continue" ";"
    #      | "return" ... | "print" ... | "try" ... | "throw" ... | block
    #      | lvalue "=" expr ";" | expr ";"
    def parse_stmt(self) -> ast.Stmt:
        t = self.tok
        if t.kind == "keyword":
            method = _STATEMENT_KEYWORDS.get(t.text)
            if method is not None:
                return method(self)
        if self.at("{"):
            return self.parse_block()
        stmt = self.parse_assign_or_call()
        self.expect(";")
        return stmt

    # "var" NAME [ ":" type ] "=" expr ";"
    def parse_var_stmt(self) -> ast.VarDecl:
        stmt = self.parse_var()
        self.expect(";")
        return stmt

    def parse_var(self) -> ast.VarDecl:
        """``"var" NAME [ ":" type ] "=" expr`` (without the ``;``, shared with ``for``)."""
        start = self.expect("var")
        name = self.expect_name("a variable name")
        declared = None
        if self.at(":"):
            self.advance()
            declared = self.parse_type()
        self.expect("=")
        init = self.parse_expr()
        return ast.VarDecl(start.pos, name.text, declared, init, name.pos)

    # lvalue "=" expr   |   expr          (the checker insists the expression is a call)
    def parse_assign_or_call(self) -> ast.Assign | ast.ExprStmt:
        start = self.tok
        expr = self.parse_expr()
        if self.at("="):
            if not isinstance(expr, ast.Name | ast.Index | ast.Field):
                raise self.error("cannot assign to this expression", start)
            self.advance()
            value = self.parse_expr()
            return ast.Assign(start.pos, expr, value)
        return ast.ExprStmt(start.pos, expr)

    # simple = "var" NAME [ ":" type ] "=" expr | lvalue "=" expr
    def parse_simple(self) -> ast.VarDecl | ast.Assign:
        if self.at("var"):
            return self.parse_var()
        stmt = self.parse_assign_or_call()
        if not isinstance(stmt, ast.Assign):
            raise self.expected("'=' (a part of a for header is 'var' or an assignment)")
        return stmt

    # "if" "(" expr ")" block [ "else" ( block | if_stmt ) ]
    def parse_if(self) -> ast.If:
        # An "else if" chain is read with a loop: each link becomes the previous one's orelse.
        first = last = self._parse_if_head()
        while self.at("else"):
            self.advance()
            if not self.at("if"):
                last.orelse = self.parse_block()
                break
            link = self._parse_if_head()
            last.orelse = link
            last = link
        return first

    def _parse_if_head(self) -> ast.If:
        """``"if" "(" expr ")" block`` -- one link of an if/else-if chain."""
        start = self.expect("if")
        self.expect("(")
        cond = self.parse_expr()
        self.expect(")")
        return ast.If(start.pos, cond, self.parse_block())

    # "while" "(" expr ")" block
    def parse_while(self) -> ast.While:
        start = self.expect("while")
        self.expect("(")
        cond = self.parse_expr()
        self.expect(")")
        return ast.While(start.pos, cond, self.parse_block())

    # "for" "(" [ simple ] ";" [ expr ] ";" [ simple ] ")" block
    def parse_for(self) -> ast.For:
        start = self.expect("for")
        self.expect("(")
        init = None if self.at(";") else self.parse_simple()
        self.expect(";")
        cond = None if self.at(";") else self.parse_expr()
        self.expect(";")
        step = None if self.at(")") else self.parse_simple()
        self.expect(")")
        return ast.For(start.pos, init, cond, step, self.parse_block())

    # "break" ";"
    def parse_break(self) -> ast.Break:
        start = self.expect("break")
        self.expect(";")
        return ast.Break(start.pos)

    # "continue" ";"
    def parse_continue(self) -> ast.Continue:
        start = self.expect("continue")
        self.expect(";")
        return ast.Continue(start.pos)

    # "return" [ expr ] ";"
    def parse_return(self) -> ast.Return:
        start = self.expect("return")
        value = None if self.at(";") else self.parse_expr()
        self.expect(";")
        return ast.Return(start.pos, value)

    # "print" "(" [ expr { "," expr } ] ")" ";"
    def parse_print(self) -> ast.Print:
        start = self.expect("print")
        self.expect("(")
        args = self.parse_args()
        self.expect(";")
        return ast.Print(start.pos, args)

    # "try" block "catch" "(" NAME ")" block
    def parse_try(self) -> ast.Try:
        start = self.expect("try")
        body = self.parse_block()
        self.expect("catch")
        self.expect("(")
        name = self.expect_name("the name of the caught value")
        self.expect(")")
        handler = self.parse_block()
        return ast.Try(start.pos, body, name.text, handler, name.pos)

    # "throw" expr ";"
    def parse_throw(self) -> ast.Throw:
        start = self.expect("throw")
        value = self.parse_expr()
        self.expect(";")
        return ast.Throw(start.pos, value)

    # -- expressions ----------------------------------------------------------

    # expr = or
    def parse_expr(self) -> ast.Expr:
        # Every nested expression (in parentheses, brackets, arguments, fields...) starts
        # here, so this is where nesting is counted.
        self.expr_depth += 1
        if self.expr_depth > MAX_EXPR_DEPTH:
            raise self.error(f"expression nested too deeply (more than {MAX_EXPR_DEPTH} "
                             "levels)")
        e = self.parse_or()
        self.expr_depth -= 1
        return e

    # or = and { "||" and }
    def parse_or(self) -> ast.Expr:
        left = self.parse_and()
        while self.at_symbol_in(self.or_ops):
            op = self.advance()
            left = ast.Binary(op.pos, op.text, left, self.parse_and())
        return left

    # and = cmp { "&&" cmp }
    def parse_and(self) -> ast.Expr:
        left = self.parse_cmp()
        while self.at_symbol_in(self.and_ops):
            op = self.advance()
            left = ast.Binary(op.pos, op.text, left, self.parse_cmp())
        return left

    # cmp = sum [ ( "==" | "!=" | "<" | "<=" | ">" | ">=" ) sum ]      (no chaining)
    def parse_cmp(self) -> ast.Expr:
        left = self.parse_sum()
        if self.at_symbol_in(self.cmp_ops):
            op = self.advance()
            left = ast.Binary(op.pos, op.text, left, self.parse_sum())
            if self.at_symbol_in(self.cmp_ops):
                raise self.error(f"expected ';', found {self.tok.describe()} "
                                 "(comparisons do not chain)")
        return left

    # sum = term { ( "+" | "-" ) term }
    def parse_sum(self) -> ast.Expr:
        left = self.parse_term()
        while self.at_symbol_in(self.sum_ops):
            op = self.advance()
            left = ast.Binary(op.pos, op.text, left, self.parse_term())
        return left

    # term = unary { ( "*" | "/" | "%" ) unary }
    def parse_term(self) -> ast.Expr:
        left = self.parse_unary()
        while self.at_symbol_in(self.term_ops):
            op = self.advance()
            left = ast.Binary(op.pos, op.text, left, self.parse_unary())
        return left

    # unary = ( "-" | "!" ) unary | postfix
    def parse_unary(self) -> ast.Expr:
        # A run of prefix operators is collected with a loop, then applied inside out.
        ops: list[Token] = []
        while self.at_symbol_in(self.prefix_ops):
            ops.append(self.advance())
            if self.expr_depth + len(ops) > MAX_EXPR_DEPTH:
                raise self.error(f"expression nested too deeply (more than {MAX_EXPR_DEPTH} "
                                 "levels)", ops[-1])
        if ops and ops[-1].text == "-" and self._at_int_min_operand():
            # "-" applied directly to 2^63: the one way to write INT_MIN.
            self.advance()
            operand: ast.Expr = ast.IntLit(ops.pop().pos, INT_MIN)
        else:
            operand = self.parse_postfix()
        for op in reversed(ops):
            operand = ast.Unary(op.pos, op.text, operand)
        return operand

    def _at_int_min_operand(self) -> bool:
        """Is the current token 9223372036854775808, used whole (no ``[``, ``.`` or ``(``
        after it, which would bind tighter than the minus)?"""
        t = self.tok
        if t.kind != "int" or _literal_value(t.text) != -INT_MIN:
            return False
        after = self.peek()
        return not (after.kind == "symbol" and after.text in POSTFIX_STARTS)

    # postfix = primary { "[" expr "]" | "." NAME | "(" [ expr { "," expr } ] ")" }
    def parse_postfix(self) -> ast.Expr:
        # Calls name a function directly: only a bare NAME may be followed by "(".
        bare_name = self.tok.kind == "name"
        expr = self.parse_primary()
        while True:
            if self.at("["):
                bracket = self.advance()
                index = self.parse_expr()
                self.expect("]")
                expr = ast.Index(bracket.pos, expr, index)
            elif self.at("."):
                self.advance()
                name = self.expect_name("a field name")
                expr = ast.Field(name.pos, expr, name.text)
            elif self.at("("):
                if not (bare_name and isinstance(expr, ast.Name)):
                    raise self.error("only a function name can be called (write f(...))")
                self.advance()
                expr = ast.Call(expr.pos, expr.name, self.parse_args())
            else:
                return expr
            bare_name = False

    def parse_args(self) -> list[ast.Expr]:
        """``[ expr { "," expr } ] ")"`` -- after a ``(``; consumes the ``)``."""
        args: list[ast.Expr] = []
        if not self.at(")"):
            args.append(self.parse_expr())
            while self.at(","):
                self.advance()
                args.append(self.parse_expr())
        self.expect(")")
        return args

    # primary = INT | FLOAT | "true" | "false" | NAME | "(" expr ")" | "len" "(" expr ")"
    #         | "new" ...
    def parse_primary(self) -> ast.Expr:
        t = self.tok
        if t.kind == "int":
            value = _literal_value(t.text)
            if value > INT_MAX:
                raise self.error(f"integer literal too large (the largest int is {INT_MAX})")
            self.advance()
            return ast.IntLit(t.pos, value)
        if t.kind == "float":
            number = float(t.text)
            if math.isinf(number):
                raise self.error("float literal too large (the largest float is about "
                                 "1.8e308)")
            self.advance()
            return ast.FloatLit(t.pos, number)
        if t.kind == "name":
            self.advance()
            return ast.Name(t.pos, t.text)
        if (self.at("int") or self.at("float")) and self.peek().text == "(":
            # int(x) and float(n): a conversion, a prefix operator written like a call
            self.advance()
            self.expect("(")
            operand = self.parse_expr()
            self.expect(")")
            return ast.Unary(t.pos, t.text, operand)
        if self.at("true") or self.at("false"):
            self.advance()
            return ast.BoolLit(t.pos, t.text == "true")
        if self.at("("):
            self.advance()
            inner = self.parse_expr()
            self.expect(")")
            return inner
        if self.at("len"):
            self.advance()
            self.expect("(")
            operand = self.parse_expr()
            self.expect(")")
            return ast.Len(t.pos, operand)
        if self.at("new"):
            return self.parse_new()
        raise self.expected("an expression")

    # "new" type "[" expr "]"  |  "new" NAME "{" [ NAME ":" expr { "," NAME ":" expr } ] "}"
    def parse_new(self) -> ast.NewArray | ast.NewStruct:
        start = self.expect("new")
        if self.tok.kind == "name" and self.peek().text == "{":
            name = self.advance()
            self.type_refs.append((name.text, name.pos))
            self.expect("{")
            fields: list[tuple[str, ast.Expr, Pos]] = []
            if not self.at("}"):
                fields.append(self.parse_field_init())
                while self.at(","):
                    self.advance()
                    fields.append(self.parse_field_init())
            self.expect("}")
            return ast.NewStruct(start.pos, name.text, fields, None, name.pos)
        elem = self.parse_type()
        self.expect("[")
        length = self.parse_expr()
        self.expect("]")
        return ast.NewArray(start.pos, elem, length)

    # NAME ":" expr      (one field of a struct literal)
    def parse_field_init(self) -> tuple[str, ast.Expr, Pos]:
        name = self.expect_name("a field name")
        self.expect(":")
        return (name.text, self.parse_expr(), name.pos)


_STATEMENT_KEYWORDS: dict[str, Callable[[Parser], ast.Stmt]] = {
    "var": Parser.parse_var_stmt,
    "if": Parser.parse_if,
    "while": Parser.parse_while,
    "for": Parser.parse_for,
    "break": Parser.parse_break,
    "continue": Parser.parse_continue,
    "return": Parser.parse_return,
    "print": Parser.parse_print,
    "try": Parser.parse_try,
    "throw": Parser.parse_throw,
}


def _literal_value(digits: str) -> int:
    """The value of a decimal literal (leading zeros count for nothing, as in Bril and in
    program arguments); one beyond 64 bits is some int above ``INT_MAX + 1``."""
    value = decimal_value(digits)
    assert value is not None  # the lexer matched [0-9]+
    return value


def parse(source: str, filename: str = "<input>") -> ast.Program:
    """Parse a Tiny program (syntax only); raises :class:`SourceError` on the first error."""
    with deep_recursion():
        return Parser(source, filename).parse_program()
