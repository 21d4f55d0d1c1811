"""Bril interop: read Bril text and JSON into quads, and write quads back out in both.

Bril is the teaching IR many compiler courses share. Our quads *are* Bril for the core
operations (see ``docs/quads.md`` for Tiny's extensions), so a Bril program read here runs
exactly the instructions written: no jumps are added for fall-through, and ``--profile``
counts match Bril's reference interpreter.

Text form (as ``bril2txt`` prints it)::

    @main(n: int) {
      one: int = const 1;
      r: int = call @fact n;
      print r;
    }

Labels are written ``.name:`` at the start of a line; operands may come in any order
(``@f`` is a function, ``.L`` a label, anything else a variable). Malformed input is a
located :class:`~ssa_course.errors.SourceError`.

Reading checks the whole program before anything runs: JSON field by field
(:mod:`~ssa_course.quads.bril_json`), then operation shapes and, unless ``typecheck=False``
(our own round trips), Bril's type rules and definedness
(:mod:`~ssa_course.quads.bril_check`, :mod:`~ssa_course.quads.bril_defined`). The writers
live in :mod:`~ssa_course.quads.bril_write`; SSA-form Bril is translated for the other
stages by :mod:`~ssa_course.quads.bril_ssa`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NamedTuple

from ssa_course.errors import Pos, SourceError
from ssa_course.quads.bril_check import FIELD_OPS, check_shapes, check_types
from ssa_course.quads.bril_problem import BrilProblem
from ssa_course.quads.bril_write import (  # the writers are part of this API
    dumps_json as dumps_json,
)
from ssa_course.quads.bril_write import (
    format_function as format_function,
)
from ssa_course.quads.bril_write import (
    format_instr as format_instr,
)
from ssa_course.quads.bril_write import (
    format_type as format_type,
)
from ssa_course.quads.bril_write import (
    instr_json as instr_json,
)
from ssa_course.quads.bril_write import (
    to_bril_json as to_bril_json,
)
from ssa_course.quads.bril_write import (
    to_bril_text as to_bril_text,
)
from ssa_course.quads.ir import (
    Function,
    Instr,
    Label,
    Program,
    StructInfo,
    is_known_op,
    may_trap,
)
from ssa_course.quads.memory import CHAR, CHAR_ESCAPES, PtrType
from ssa_course.runtime import INT_MAX, INT_MIN, decimal_value
from ssa_course.tiny.lexer import split_lines
from ssa_course.tiny.types import BOOL, FLOAT, INT, ArrayType, StructType, Type

_FLOAT_TEXT = re.compile(r"[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
                         r"|[-+]?[0-9]+[eE][-+]?[0-9]+")


def _float_constant(parser: _TextParser, v: _Tok) -> float:
    """A float literal of Bril text (``1.5``, ``-1E+6``, ``+.11e12``): finite, as brili
    reads it (a literal too large for a double is refused: it would be an infinity)."""
    value = float(v.text)
    if value in (float("inf"), float("-inf")):
        raise parser.error("float constant out of range", v)
    return value


MAX_TYPE_DEPTH = 64  # [[...[int]...]]: Tiny types are compared and printed recursively
# Bril's interop extension (several files linked by name) is not read: one message, in the
# text and the JSON reader alike.
UNSUPPORTED_IMPORTS = ("unsupported Bril extension: imports (ssa_course reads one "
                       "self-contained program; link the files first)")

# ---------------------------------------------------------------- text: tokens

# One alternation, tried in order at each position: the first group that matches names
# the token. ``# at 5:14`` at the end of a line is not a comment to us: it is the source
# position our writer appends (bril_write.format_instr), read back onto the instruction.
_TOKEN = re.compile(
    r"""(?P<space>[ \t\r\f\v]+)
      | (?P<newline>\n)
      | (?P<srcpos>\#\ at\ [0-9]+:[0-9]+[ \t]*(?=\n|$))
      | (?P<comment>\#[^\n]*)
      | (?P<func>@[A-Za-z_%.0-9]+)
      | (?P<label>\.[A-Za-z_%.0-9]+)
      | (?P<float>[-+]?(?:[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+
                       |\.[0-9]+(?:[eE][-+]?[0-9]+)?))
      | (?P<number>-?[0-9]+)
      | (?P<char>'(?:\\[0abtnvfr]|[^\n])')
      | (?P<ident>[A-Za-z_%][A-Za-z_%.0-9]*)
      | (?P<sym>[:=;{}(),<>\[\]])""",
    re.VERBOSE,
)


class _Tok(NamedTuple):
    # a tuple: a program of 60k instructions has a few hundred thousand tokens, and a tuple
    # is made several times faster than a frozen dataclass
    kind: str
    text: str
    line: int
    col: int
    length: int = 1

    @property
    def pos(self) -> Pos:
        """Where the token is (made when asked: most tokens are never asked)."""
        return Pos(self.line, self.col, self.length)

    def describe(self) -> str:
        return "end of file" if self.kind == "eof" else f"'{self.text}'"


def _tokens(text: str, filename: str) -> list[_Tok]:
    out: list[_Tok] = []
    append = out.append
    # positions are counted here, once: every later error points at a token's line:col
    line, line_start, i = 1, 0, 0
    # ``finditer`` finds each match where a match tried at every position in turn would:
    # the characters it steps over match nothing, each a "bad" token (reported only if the
    # parser gets there: an unsupported type first)
    for m in _TOKEN.finditer(text):
        start = m.start()
        while i < start:
            append(_Tok("bad", text[i], line, i - line_start + 1))
            i += 1
        kind = m.lastgroup or ""
        i = m.end()
        if kind == "newline":
            line, line_start = line + 1, i
        elif kind != "space" and kind != "comment":  # (Bril's comments are dropped here)
            append(_Tok(kind, m.group(), line, start - line_start + 1, i - start))
    while i < len(text):
        append(_Tok("bad", text[i], line, i - line_start + 1))
        i += 1
    append(_Tok("eof", "", line, i - line_start + 1))
    return out


# ---------------------------------------------------------------- text: parser


class _TextParser:
    def __init__(self, text: str, filename: str):
        self.text = text
        self.filename = filename
        self.toks = _tokens(text, filename)
        self.i = 0
        self.structs: dict[str, StructInfo] = {}
        self.has_positions = False  # any "# at L:C" comment (a text ssa_course printed)

    # A recursive-descent parser over the token list: ``tok`` is the current token,
    # ``advance`` consumes it, ``expect`` consumes a required symbol or reports what was
    # found instead (one located message, never a traceback).
    @property
    def tok(self) -> _Tok:
        t = self.toks[self.i]
        if t.kind == "bad":
            raise SourceError(f"unexpected character '{t.text}'", t.pos, self.text,
                              self.filename)
        return t

    def advance(self) -> _Tok:
        t = self.toks[self.i]  # (what ``tok`` checks, without the property's call)
        if t.kind == "bad":
            raise SourceError(f"unexpected character '{t.text}'", t.pos, self.text,
                              self.filename)
        if t.kind != "eof":
            self.i += 1
        return t

    def error(self, message: str, tok: _Tok | None = None) -> SourceError:
        return SourceError(message, (tok or self.tok).pos, self.text, self.filename)

    def expect(self, text: str) -> _Tok:
        t = self.toks[self.i]
        if t.text != text or t.kind != "sym":
            raise self.error(f"expected '{text}', found {self.tok.describe()}")
        self.i += 1  # (a symbol: neither bad nor the end of the file)
        return t

    def at(self, text: str) -> bool:
        # a bad token is never the symbol asked for; the caller's next ``tok`` or
        # ``advance`` reports it (no token is consumed without that check)
        t = self.toks[self.i]
        return t.kind == "sym" and t.text == text

    def program(self, typecheck: bool = True) -> Program:
        functions: dict[str, Function] = {}
        # id(instruction) -> where it was written: the checks that run on the whole
        # program afterwards (shapes, types) report their problems at that position
        where: dict[int, Pos] = {}
        fn_pos: dict[str, Pos] = {}
        while self.tok.kind != "eof":
            if self.tok.kind == "ident" and self.tok.text == "struct":
                self.struct()
                continue
            if self.tok.kind == "ident" and self.tok.text == "from":
                raise self.error(UNSUPPORTED_IMPORTS)
            if self.tok.kind != "func":
                raise self.error(f"expected a function like '@main {{', found "
                                 f"{self.tok.describe()}")
            name_tok = self.tok
            fn = self.function(where)
            if fn.name in functions:
                raise self.error(f"function '@{fn.name}' is already defined", name_tok)
            functions[fn.name] = fn
            fn_pos[fn.name] = name_tok.pos
        program = Program(functions, self.structs)
        if not self.has_positions:
            # A program as a person wrote it: each operation that can fail reports its
            # runtime error at its own word. (A text that carries "# at" comments is one we
            # printed: those are its positions, and an operation without one has none.)
            for fn in functions.values():
                for item in fn.body:
                    if isinstance(item, Instr) and item.pos is None and may_trap(item.op):
                        item.pos = where.get(id(item))

        # a problem found on the parsed program, turned into an error at its source line
        def locate(problem: BrilProblem) -> SourceError:
            pos = where.get(id(problem.item)) if problem.item is not None else None
            if pos is None:
                pos = fn_pos.get(problem.function or "", Pos(1, 1))
            return SourceError(problem.message, pos, self.text, self.filename)

        run_checks(program, typecheck, locate)
        return program

    def struct(self) -> None:
        # struct Name { field: type; ... }  (our extension: Bril has no structs)
        self.advance()
        name = self.tok
        if name.kind != "ident":
            raise self.error(f"expected a struct name, found {name.describe()}")
        if name.text in self.structs:
            raise self.error(f"struct '{name.text}' is defined twice", name)
        self.advance()
        self.expect("{")
        fields: list[tuple[str, Type]] = []
        while not self.at("}"):
            fname = self.advance()
            if fname.kind != "ident":
                raise self.error(f"expected a field name, found {fname.describe()}", fname)
            if any(fname.text == other for other, _ in fields):
                raise self.error(f"struct '{name.text}' has two fields '{fname.text}'", fname)
            self.expect(":")
            fields.append((fname.text, self.type()))
            self.expect(";")
        self.expect("}")
        self.structs[name.text] = StructInfo(name.text, fields)

    def type(self) -> Type:
        """A type; ``[[int]]`` nests with a counter, not recursion (any depth is fine)."""
        return self.type_at(0)

    def type_at(self, outer: int) -> Type:
        """A type inside ``outer`` levels of ``ptr<...>`` (pointers recurse, a level at a
        time, at most MAX_TYPE_DEPTH in all)."""
        depth = outer
        while self.at("["):
            if depth == MAX_TYPE_DEPTH:  # deeper types would overflow printing and ==
                raise self.error(f"array type nested more than {MAX_TYPE_DEPTH} deep")
            self.advance()
            depth += 1
        t = self.tok
        if t.kind != "ident":
            raise self.error(f"expected a type, found {t.describe()}")
        self.advance()
        result: Type
        if t.text == "int":
            result = INT
        elif t.text == "bool":
            result = BOOL
        elif t.text == "float":
            result = FLOAT
        elif t.text == "char":
            result = CHAR
        elif t.text == "ptr" and self.at("<"):
            result = self.pointer_type(depth)
        # Bril's other extensions' types: named, so the message says what is missing
        elif self.at("<") or t.text in ("ptr", "any"):
            raise self.error(f"unsupported Bril type '{t.text}' (ssa_course reads int, bool, "
                             "float, char, ptr<T>, [T] and struct types)", t)
        else:
            result = StructType(t.text)
        for _ in range(depth - outer):  # wrap the element type once per opening bracket
            self.expect("]")
            result = ArrayType(result)
        return result

    def pointer_type(self, depth: int) -> Type:
        """``ptr<T>`` after its ``ptr`` (Bril's memory extension); ``T`` may be a pointer,
        counted with the arrays around it against MAX_TYPE_DEPTH."""
        self.expect("<")
        if depth >= MAX_TYPE_DEPTH:
            raise self.error(f"type nested more than {MAX_TYPE_DEPTH} deep")
        elem = self.type_at(depth + 1)
        self.expect(">")
        return PtrType(elem)

    def function(self, where: dict[int, Pos]) -> Function:
        name = self.advance().text[1:]  # (without the @)
        params: list[tuple[str, Type]] = []
        if self.at("("):  # ``@main {`` has no parameter list at all
            self.advance()
            while not self.at(")"):
                p = self.advance()
                if p.kind != "ident":
                    raise self.error(f"expected a parameter name, found {p.describe()}", p)
                if any(p.text == other for other, _ in params):
                    raise self.error(f"@{name} has two parameters '{p.text}'", p)
                self.expect(":")
                params.append((p.text, self.type()))
                if self.at(","):
                    self.advance()
                elif not self.at(")"):
                    raise self.error(f"expected ',' or ')', found {self.tok.describe()}")
            self.advance()
        ret: Type | None = None
        if self.at(":"):
            self.advance()
            ret = self.type()
        self.expect("{")
        body: list[Instr | Label] = []
        while not self.at("}"):
            if self.tok.kind == "eof":
                raise self.error(f"expected '}}' to close @{name}, found end of file")
            # ``.L:`` is a label (one token of lookahead: ``.L`` alone is a jump's operand)
            if self.tok.kind == "label" and self.toks[self.i + 1].text == ":":
                tok = self.advance()
                label = Label(tok.text[1:], tok.pos.line)
                where[id(label)] = tok.pos
                body.append(label)
                self.advance()
                continue
            body.append(self.instr(where))
        self.advance()
        return Function(name, params, ret, body)

    def instr(self, where: dict[int, Pos]) -> Instr:
        first = self.tok
        if first.kind != "ident":
            raise self.error(f"expected an instruction, found {first.describe()}")
        dest = None
        ty = None
        # ``x: int = op ...`` defines a value, ``op ...;`` does not: the token after the
        # first word tells which (``x = op`` is caught here too, to say the type is missing)
        if self.toks[self.i + 1].text in (":", "="):
            dest = self.advance().text
            if not self.at(":"):
                raise self.error(f"expected ':' and a type after '{dest}'")
            self.advance()
            ty = self.type()
            self.expect("=")
        op_tok = self.advance()
        if op_tok.kind != "ident":
            raise self.error(f"expected an operation, found {op_tok.describe()}", op_tok)
        op = op_tok.text
        if not is_known_op(op):
            raise self.error(f"unsupported Bril op '{op}'", op_tok)
        instr = Instr(op, dest, ty, line=first.pos.line)  # Bril input: its own lines
        where[id(instr)] = op_tok.pos
        if op == "const":
            v = self.advance()
            if v.kind == "number":
                value = decimal_value(v.text)  # 0...05 is 5, as in Tiny and arguments
                if value is None or not INT_MIN <= value <= INT_MAX:
                    raise self.error("integer constant out of 64-bit range", v)
                instr.value = value
            elif v.text in ("true", "false"):
                instr.value = v.text == "true"
            elif v.kind == "float" or (v.kind == "label" and _FLOAT_TEXT.fullmatch(v.text)):
                instr.value = _float_constant(self, v)
            elif v.kind == "char":  # 'a', '\n' (Bril's escapes), any one character
                body = v.text[1:-1]
                instr.value = CHAR_ESCAPES[body[1]] if len(body) == 2 else body
            else:
                raise self.error(f"expected a constant value, found {v.describe()}", v)
            if ty == FLOAT and type(instr.value) is int:
                instr.value = float(instr.value)  # ``x: float = const 5;`` is 5.0
        else:
            # the operands in any order, sorted by their sigil: @functions, .labels and
            # plain variables (a numeral here is kept as a name: the checks that follow
            # report a use of an undefined variable)
            plain: list[str] = []
            while not self.at(";"):
                t = self.advance()
                if t.kind == "func":
                    instr.funcs.append(t.text[1:])
                elif t.kind == "label":
                    instr.labels.append(t.text[1:])
                elif t.kind in ("ident", "number"):
                    plain.append(t.text)
                else:
                    raise self.error(f"expected an operand or ';', found {t.describe()}", t)
            if op in FIELD_OPS and len(plain) >= 2:
                # getf p f / setf p f v: the second word is the field, not a variable
                instr.field = plain.pop(1)
            instr.args = plain
        self.expect(";")
        if self.tok.kind == "srcpos":  # "# at 5:14": where a runtime error points
            line, col = self.advance().text[len("# at "):].split(":")
            instr.pos = Pos(int(line), int(col))
            self.has_positions = True
        return instr


# ---------------------------------------------------------------- checks


def run_checks(program: Program, typecheck: bool,
               locate: Callable[[BrilProblem], SourceError]) -> None:
    """Shapes (always) and types (when ``typecheck``); ``locate(problem)`` turns a
    :class:`BrilProblem` into the reader's located :class:`SourceError`."""
    try:
        check_shapes(program)
        if typecheck:
            check_types(program)
    except BrilProblem as problem:
        raise locate(problem) from None


# ---------------------------------------------------------------- public readers


def parse_bril_text(text: str, filename: str = "<input>", typecheck: bool = True) -> Program:
    """Read a Bril text program; raises :class:`SourceError` with line:col on bad input.

    Shapes are always checked; ``typecheck`` adds Bril's type rules (``brilck``).
    """
    return _TextParser(text, filename).program(typecheck)


def bril_args(text: str) -> list[str] | None:
    """The arguments of a ``# ARGS: 3 6`` line (Bril also writes ``#ARGS:``), if any."""
    for line in split_lines(text):  # the first such line wins, wherever it is
        stripped = line.strip()
        if stripped.startswith("#"):
            rest = stripped[1:].lstrip()
            if rest.startswith("ARGS:"):
                return rest[len("ARGS:"):].split()
    return None


def parse_bril_json(data: str | bytes | dict[Any, Any], filename: str = "<input>",
                    typecheck: bool = True) -> Program:
    """Read a Bril JSON program (text or an already-loaded dict), checking every field
    first (see :mod:`ssa_course.quads.bril_json`), then shapes and, if ``typecheck``, types.
    """
    from ssa_course.quads.bril_json import read_bril_json

    program, reader = read_bril_json(data, filename)

    def locate(problem: BrilProblem) -> SourceError:
        path = reader.paths.get(id(problem.item)) if problem.item is not None else None
        if path is None:
            path = reader.fn_paths.get(problem.function or "", ())
            where = f"@{problem.function}" if problem.function else ""
        else:
            where = f"@{problem.function} instrs[{path[-1]}]"
            if problem.field is not None:
                path = path + (problem.field,)
        message = f"{where}: {problem.message}" if where else problem.message
        return reader.fail(message, path)

    run_checks(program, typecheck, locate)
    return program
