"""Tiny's parser: handwritten recursive descent, one method per grammar rule.

It reads tokens from :mod:`ssa_course.tiny.lexer` and builds the tree of
:mod:`ssa_course.tiny.ast`. The grammar is LANGUAGE.md's; each ``parse_*`` method below
names the rule it implements. Binary operators of one precedence level are parsed with a
loop (``1+1+...+1`` of any length is fine); parentheses, unary operators and blocks
recurse, so their nesting is capped at :data:`MAX_NESTING` with a located error rather
than a Python crash.

Syntax errors say what was expected and point at the token found instead.
"""

from __future__ import annotations

from ssa_course.errors import Pos, SourceError
from ssa_course.runtime import INT_MAX, INT_MIN
from ssa_course.tiny import ast
from ssa_course.tiny.lexer import Token, tokenize
from ssa_course.tiny.types import BOOL, INT, ArrayType, StructType, Type

MAX_NESTING = 200

COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")


class Parser:
    def __init__(self, source: str, filename: str = "<input>"):
        self.source = source
        self.filename = filename
        self.tokens = tokenize(source, filename)
        self.i = 0
        self.depth = 0
        self.type_refs: list[tuple[str, Pos]] = []

    # -- token helpers --------------------------------------------------------

    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def peek(self, offset: int = 1) -> Token:
        return self.tokens[min(self.i + offset, len(self.tokens) - 1)]

    def at(self, text: str) -> bool:
        t = self.tok
        return t.text == text and t.kind in ("symbol", "keyword")

    def advance(self) -> Token:
        t = self.tokens[self.i]
        if t.kind != "eof":
            self.i += 1
        return t

    def error(self, message: str, tok: Token | None = None) -> SourceError:
        t = tok or self.tok
        return SourceError(message, t.pos, self.source, self.filename)

    def expected(self, what: str) -> SourceError:
        return self.error(f"expected {what}, found {self.tok.describe()}")

    def expect(self, text: str) -> Token:
        if not self.at(text):
            raise self.expected(f"'{text}'")
        return self.advance()

    def expect_name(self, what: str = "a name") -> Token:
        if self.tok.kind != "name":
            raise self.expected(what)
        return self.advance()

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error(f"program nested too deeply (more than {MAX_NESTING} levels)")

    def leave(self) -> None:
        self.depth -= 1

    # -- program = { struct_def | fn_def } -------------------------------------

    def parse_program(self) -> ast.Program:
        structs: dict[str, ast.StructDef] = {}
        functions: dict[str, ast.FnDef] = {}
        seen: dict[str, str] = {}
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
            while True:
                pname = self.expect_name("a parameter name")
                self.expect(":")
                params.append(ast.Param(pname.text, self.parse_type(), pname.pos))
                if not self.at(","):
                    break
                self.advance()
        self.expect(")")
        ret: Type = ast_void()
        if self.at("->"):
            self.advance()
            ret = self.parse_type()
        body = self.parse_block()
        return ast.FnDef(name.text, params, ret, body, name.pos)

    # type = "int" | "bool" | "[" type "]" | NAME
    def parse_type(self) -> Type:
        if self.at("int"):
            self.advance()
            return INT
        if self.at("bool"):
            self.advance()
            return BOOL
        if self.at("["):
            self.advance()
            self.enter()
            elem = self.parse_type()
            self.leave()
            self.expect("]")
            return ArrayType(elem)
        if self.tok.kind == "name":
            t = self.advance()
            self.type_refs.append((t.text, t.pos))
            return StructType(t.text)
        raise self.expected("a type")

    # -- statements -----------------------------------------------------------

    # block = "{" { stmt } "}"
    def parse_block(self) -> ast.Block:
        start = self.expect("{")
        self.enter()
        stmts: list[ast.Stmt] = []
        while not self.at("}"):
            if self.tok.kind == "eof":
                raise self.expected("'}'")
            stmts.append(self.parse_stmt())
        self.advance()
        self.leave()
        return ast.Block(start.pos, stmts)

    def parse_stmt(self) -> ast.Stmt:
        t = self.tok
        if t.kind == "keyword":
            method = _STATEMENT_KEYWORDS.get(t.text)
            if method is not None:
                return method(self)
        if self.at("{"):
            return self.parse_block()
        stmt = self.parse_simple_or_call()
        self.expect(";")
        return stmt

    def parse_var(self) -> ast.VarDecl:
        """``"var" NAME [ ":" type ] "=" expr`` (without the ``;``)."""
        start = self.expect("var")
        name = self.expect_name("a variable name")
        declared = None
        if self.at(":"):
            self.advance()
            declared = self.parse_type()
        self.expect("=")
        init = self.parse_expr()
        return ast.VarDecl(start.pos, name.text, declared, init, name.pos)

    def parse_simple_or_call(self) -> ast.Stmt:
        """``lvalue "=" expr`` or an expression statement (the checker insists on a call)."""
        start = self.tok
        expr = self.parse_expr()
        if self.at("="):
            if not isinstance(expr, ast.Name | ast.Index | ast.Field):
                raise self.error("cannot assign to this expression", start)
            self.advance()
            value = self.parse_expr()
            return ast.Assign(start.pos, expr, value)
        return ast.ExprStmt(start.pos, expr)

    def parse_simple(self) -> ast.VarDecl | ast.Assign:
        """``simple`` of a ``for`` header: a declaration or an assignment."""
        if self.at("var"):
            return self.parse_var()
        start = self.tok
        stmt = self.parse_simple_or_call()
        if not isinstance(stmt, ast.Assign):
            raise self.error("expected '=' (a for-loop part must be an assignment or 'var')",
                             self.tok if self.tok is not start else start)
        return stmt

    def parse_var_stmt(self) -> ast.Stmt:
        stmt = self.parse_var()
        self.expect(";")
        return stmt

    def parse_if(self) -> ast.If:
        start = self.expect("if")
        self.expect("(")
        cond = self.parse_expr()
        self.expect(")")
        then = self.parse_block()
        orelse: ast.Block | ast.If | None = None
        if self.at("else"):
            self.advance()
            if self.at("if"):
                self.enter()
                orelse = self.parse_if()
                self.leave()
            else:
                orelse = self.parse_block()
        return ast.If(start.pos, cond, then, orelse)

    def parse_while(self) -> ast.While:
        start = self.expect("while")
        self.expect("(")
        cond = self.parse_expr()
        self.expect(")")
        return ast.While(start.pos, cond, self.parse_block())

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

    def parse_break(self) -> ast.Break:
        start = self.advance()
        self.expect(";")
        return ast.Break(start.pos)

    def parse_continue(self) -> ast.Continue:
        start = self.advance()
        self.expect(";")
        return ast.Continue(start.pos)

    def parse_return(self) -> ast.Return:
        start = self.expect("return")
        value = None if self.at(";") else self.parse_expr()
        self.expect(";")
        return ast.Return(start.pos, value)

    def parse_print(self) -> ast.Print:
        start = self.expect("print")
        self.expect("(")
        args = self.parse_args(")")
        self.expect(";")
        return ast.Print(start.pos, args)

    def parse_try(self) -> ast.Try:
        start = self.expect("try")
        body = self.parse_block()
        self.expect("catch")
        self.expect("(")
        name = self.expect_name("the name of the caught value")
        self.expect(")")
        handler = self.parse_block()
        return ast.Try(start.pos, body, name.text, handler, name.pos)

    def parse_throw(self) -> ast.Throw:
        start = self.expect("throw")
        value = self.parse_expr()
        self.expect(";")
        return ast.Throw(start.pos, value)

    # -- expressions ----------------------------------------------------------

    def parse_expr(self) -> ast.Expr:
        return self.parse_or()

    # or = and { "||" and }      and = cmp { "&&" cmp }
    def parse_or(self) -> ast.Expr:
        left = self.parse_and()
        while self.at("||"):
            op = self.advance()
            left = ast.Binary(op.pos, "||", left, self.parse_and())
        return left

    def parse_and(self) -> ast.Expr:
        left = self.parse_cmp()
        while self.at("&&"):
            op = self.advance()
            left = ast.Binary(op.pos, "&&", left, self.parse_cmp())
        return left

    # cmp = sum [ ( "==" | "!=" | "<" | "<=" | ">" | ">=" ) sum ]   (no chaining)
    def parse_cmp(self) -> ast.Expr:
        left = self.parse_sum()
        if self.tok.kind == "symbol" and self.tok.text in COMPARISONS:
            op = self.advance()
            left = ast.Binary(op.pos, op.text, left, self.parse_sum())
            if self.tok.kind == "symbol" and self.tok.text in COMPARISONS:
                raise self.error(f"expected ';', found {self.tok.describe()} "
                                 "(comparisons do not chain)")
        return left

    # sum = term { ( "+" | "-" ) term }    term = unary { ( "*" | "/" | "%" ) unary }
    def parse_sum(self) -> ast.Expr:
        left = self.parse_term()
        while self.tok.kind == "symbol" and self.tok.text in ("+", "-"):
            op = self.advance()
            left = ast.Binary(op.pos, op.text, left, self.parse_term())
        return left

    def parse_term(self) -> ast.Expr:
        left = self.parse_unary()
        while self.tok.kind == "symbol" and self.tok.text in ("*", "/", "%"):
            op = self.advance()
            left = ast.Binary(op.pos, op.text, left, self.parse_unary())
        return left

    # unary = ( "-" | "!" ) unary | postfix
    def parse_unary(self) -> ast.Expr:
        if self.tok.kind == "symbol" and self.tok.text in ("-", "!"):
            op = self.advance()
            if op.text == "-" and self._at_int_min_literal():
                self.advance()
                return ast.IntLit(op.pos, INT_MIN)
            self.enter()
            operand = self.parse_unary()
            self.leave()
            return ast.Unary(op.pos, op.text, operand)
        return self.parse_postfix()

    # postfix = primary { "[" expr "]" | "." NAME | "(" args ")" }
    def parse_postfix(self) -> ast.Expr:
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
                if not isinstance(expr, ast.Name):
                    raise self.error("only a function name can be called")
                self.advance()
                args = self.parse_args(")")
                expr = ast.Call(expr.pos, expr.name, args)
            else:
                return expr

    def parse_args(self, close: str) -> list[ast.Expr]:
        """``[ expr { "," expr } ] close`` -- consumes the closing symbol."""
        args: list[ast.Expr] = []
        if not self.at(close):
            while True:
                args.append(self.parse_expr())
                if not self.at(","):
                    break
                self.advance()
        self.expect(close)
        return args

    def _at_int_min_literal(self) -> bool:
        """After a unary minus: is the next token 9223372036854775808, used as a whole?

        That literal is legal only as the direct operand of ``-`` (the one way to write
        INT_MIN); the parser folds the pair into the literal -9223372036854775808.
        """
        t = self.tok
        return (t.kind == "int" and _literal_value(t.text) == -INT_MIN
                and self.peek().text not in ("[", ".", "("))

    def parse_primary(self) -> ast.Expr:
        t = self.tok
        if t.kind == "int":
            if _literal_value(t.text) > INT_MAX:
                raise self.error("integer literal too large (the largest int is "
                                 f"{INT_MAX})")
            self.advance()
            return ast.IntLit(t.pos, _literal_value(t.text))
        if t.kind == "name":
            self.advance()
            return ast.Name(t.pos, t.text)
        if self.at("true") or self.at("false"):
            self.advance()
            return ast.BoolLit(t.pos, t.text == "true")
        if self.at("("):
            self.advance()
            self.enter()
            inner = self.parse_expr()
            self.leave()
            self.expect(")")
            return inner
        if self.at("len"):
            self.advance()
            self.expect("(")
            self.enter()
            operand = self.parse_expr()
            self.leave()
            self.expect(")")
            return ast.Len(t.pos, operand)
        if self.at("new"):
            return self.parse_new()
        raise self.expected("an expression")

    # "new" type "[" expr "]"  |  "new" NAME "{" [ NAME ":" expr { "," ... } ] "}"
    def parse_new(self) -> ast.Expr:
        start = self.expect("new")
        if self.tok.kind == "name" and self.peek().text == "{":
            name = self.advance()
            self.advance()
            self.type_refs.append((name.text, name.pos))
            fields: list[tuple[str, ast.Expr, Pos]] = []
            if not self.at("}"):
                while True:
                    fname = self.expect_name("a field name")
                    self.expect(":")
                    fields.append((fname.text, self.parse_expr(), fname.pos))
                    if not self.at(","):
                        break
                    self.advance()
            self.expect("}")
            return ast.NewStruct(start.pos, name.text, fields, None, name.pos)
        elem = self.parse_type()
        self.expect("[")
        length = self.parse_expr()
        self.expect("]")
        return ast.NewArray(start.pos, elem, length)


_STATEMENT_KEYWORDS = {
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
    """The value of a decimal literal; absurdly long ones count as "too large"."""
    digits = digits.lstrip("0") or "0"
    return int(digits) if len(digits) <= 20 else INT_MAX + 2


def ast_void() -> Type:
    from ssa_course.tiny.types import VOID

    return VOID


def parse(source: str, filename: str = "<input>") -> ast.Program:
    """Parse a Tiny program (syntax only); raises :class:`SourceError` on the first error."""
    return Parser(source, filename).parse_program()
