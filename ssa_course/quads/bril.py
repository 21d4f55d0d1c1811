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
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ssa_course.errors import Pos, SourceError
from ssa_course.quads.ir import ALL_OPS, Function, Instr, Label, Program, StructInfo
from ssa_course.tiny.types import BOOL, INT, ArrayType, StructType, Type

# ---------------------------------------------------------------- operation shapes

# op -> (number of variable args or None, dest: True required / False forbidden / None
#        optional, number of labels, number of funcs)
_SHAPE: dict[str, tuple[int | None, bool | None, int, int]] = {
    "const": (0, True, 0, 0),
    "id": (1, True, 0, 0), "not": (1, True, 0, 0),
    "jmp": (0, False, 1, 0), "br": (1, False, 2, 0),
    "call": (None, None, 0, 1), "ret": (None, False, 0, 0),
    "print": (None, False, 0, 0), "nop": (0, False, 0, 0),
    "alen": (1, True, 0, 0), "newarr": (1, True, 0, 0),
    "aload": (2, True, 0, 0), "astore": (3, False, 0, 0),
    "newstruct": (None, True, 0, 0), "getf": (1, True, 0, 0), "setf": (2, False, 0, 0),
    "enter": (0, False, 2, 0), "leave": (0, False, 0, 0), "throw": (1, False, 0, 0),
    "catch": (0, True, 0, 0),
    "phi": (None, True, -1, 0),  # -1: one label per argument
}
for _op in ("add", "sub", "mul", "div", "rem", "eq", "lt", "gt", "le", "ge", "and", "or"):
    _SHAPE[_op] = (2, True, 0, 0)

_FIELD_OPS = ("getf", "setf")

# ---------------------------------------------------------------- text: tokens

_TOKEN = re.compile(
    r"""(?P<space>[ \t\r\f\v]+)
      | (?P<newline>\n)
      | (?P<srcpos>\#\ at\ [0-9]+:[0-9]+[ \t]*(?=\n|$))
      | (?P<comment>\#[^\n]*)
      | (?P<func>@[A-Za-z_%.0-9]+)
      | (?P<label>\.[A-Za-z_%.0-9]+)
      | (?P<number>-?[0-9]+)
      | (?P<ident>[A-Za-z_%][A-Za-z_%.0-9]*)
      | (?P<sym>[:=;{}(),<>\[\]])""",
    re.VERBOSE,
)


@dataclass(frozen=True, slots=True)
class _Tok:
    kind: str
    text: str
    pos: Pos

    def describe(self) -> str:
        return "end of file" if self.kind == "eof" else f"'{self.text}'"


def _tokens(text: str, filename: str) -> list[_Tok]:
    out: list[_Tok] = []
    line, line_start, i = 1, 0, 0
    while i < len(text):
        m = _TOKEN.match(text, i)
        if m is None:
            raise SourceError(f"unexpected character '{text[i]}'",
                              Pos(line, i - line_start + 1), text, filename)
        kind = m.lastgroup or ""
        if kind == "newline":
            line, line_start = line + 1, m.end()
        elif kind not in ("space", "comment"):
            out.append(_Tok(kind, m.group(), Pos(line, i - line_start + 1, m.end() - i)))
        i = m.end()
    out.append(_Tok("eof", "", Pos(line, i - line_start + 1)))
    return out


# ---------------------------------------------------------------- text: parser


class _TextParser:
    def __init__(self, text: str, filename: str):
        self.text = text
        self.filename = filename
        self.toks = _tokens(text, filename)
        self.i = 0
        self.structs: dict[str, StructInfo] = {}

    @property
    def tok(self) -> _Tok:
        return self.toks[self.i]

    def advance(self) -> _Tok:
        t = self.toks[self.i]
        if t.kind != "eof":
            self.i += 1
        return t

    def error(self, message: str, tok: _Tok | None = None) -> SourceError:
        return SourceError(message, (tok or self.tok).pos, self.text, self.filename)

    def expect(self, text: str) -> _Tok:
        if self.tok.text != text or self.tok.kind not in ("sym",):
            raise self.error(f"expected '{text}', found {self.tok.describe()}")
        return self.advance()

    def at(self, text: str) -> bool:
        return self.tok.kind == "sym" and self.tok.text == text

    def program(self) -> tuple[Program, dict[int, tuple[Pos, str]]]:
        functions: dict[str, Function] = {}
        where: dict[int, tuple[Pos, str]] = {}
        fn_pos: dict[str, Pos] = {}
        while self.tok.kind != "eof":
            if self.tok.kind == "ident" and self.tok.text == "struct":
                self.struct()
                continue
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
        _validate(program, where, self.text, self.filename)
        return program, where

    def struct(self) -> None:
        self.advance()
        name = self.tok
        if name.kind != "ident":
            raise self.error(f"expected a struct name, found {name.describe()}")
        self.advance()
        self.expect("{")
        fields: list[tuple[str, Type]] = []
        while not self.at("}"):
            fname = self.advance()
            if fname.kind != "ident":
                raise self.error(f"expected a field name, found {fname.describe()}", fname)
            self.expect(":")
            fields.append((fname.text, self.type()))
            self.expect(";")
        self.expect("}")
        self.structs[name.text] = StructInfo(name.text, fields)

    def type(self) -> Type:
        t = self.tok
        if self.at("["):
            self.advance()
            elem = self.type()
            self.expect("]")
            return ArrayType(elem)
        if t.kind != "ident":
            raise self.error(f"expected a type, found {t.describe()}")
        self.advance()
        if t.text == "int":
            return INT
        if t.text == "bool":
            return BOOL
        if self.at("<") or t.text in ("float", "char", "ptr"):
            raise self.error(f"unsupported Bril type '{t.text}' (ssa_course reads int, bool, "
                             "[T] and struct types)", t)
        return StructType(t.text)

    def function(self, where: dict[int, tuple[Pos, str]]) -> Function:
        name = self.advance().text[1:]
        params: list[tuple[str, Type]] = []
        if self.at("("):
            self.advance()
            while not self.at(")"):
                p = self.advance()
                if p.kind != "ident":
                    raise self.error(f"expected a parameter name, found {p.describe()}", p)
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
            if self.tok.kind == "label" and self.toks[self.i + 1].text == ":":
                tok = self.advance()
                label = Label(tok.text[1:])
                where[id(label)] = (tok.pos, "")
                body.append(label)
                self.advance()
                continue
            body.append(self.instr(where))
        self.advance()
        return Function(name, params, ret, body)

    def instr(self, where: dict[int, tuple[Pos, str]]) -> Instr:
        first = self.tok
        if first.kind != "ident":
            raise self.error(f"expected an instruction, found {first.describe()}")
        dest = None
        ty = None
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
        if op not in ALL_OPS:
            raise self.error(f"unsupported Bril op '{op}'", op_tok)
        instr = Instr(op, dest, ty)
        where[id(instr)] = (op_tok.pos, "")
        if op == "const":
            v = self.advance()
            if v.kind == "number":
                instr.value = int(v.text)
            elif v.text in ("true", "false"):
                instr.value = v.text == "true"
            else:
                raise self.error(f"expected a constant value, found {v.describe()}", v)
        else:
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
            if op in _FIELD_OPS and len(plain) >= 2:
                instr.field = plain.pop(1)
            instr.args = plain
        self.expect(";")
        if self.tok.kind == "srcpos":  # "# at 5:14": where a runtime error points
            line, col = self.advance().text[len("# at "):].split(":")
            instr.pos = Pos(int(line), int(col))
        return instr


# ---------------------------------------------------------------- validation


def _validate(program: Program, where: dict[int, tuple[Pos, str]], text: str,
              filename: str) -> None:
    """Static checks: operation shapes, labels, called functions and their arity.

    ``where`` locates each instruction and label: a text position, and for JSON (which
    has no useful line:col) a suffix naming the instruction's path.
    """

    def fail(message: str, item: Instr | Label) -> SourceError:
        pos, suffix = where.get(id(item), (Pos(1, 1), ""))
        return SourceError(message + suffix, pos, text, filename)

    for fn in program.functions.values():
        labels: set[str] = set()
        for item in fn.body:
            if isinstance(item, Label):
                if item.name in labels:
                    raise fail(f"label '.{item.name}' is defined twice in @{fn.name}", item)
                labels.add(item.name)
        for item in fn.body:
            if not isinstance(item, Instr):
                continue
            nargs, dest, nlabels, nfuncs = _SHAPE[item.op]
            if dest is True and item.dest is None:
                raise fail(f"'{item.op}' needs a destination ('x: type = {item.op} ...')", item)
            if dest is False and item.dest is not None:
                raise fail(f"'{item.op}' has no result; remove '{item.dest}: ... ='", item)
            if nargs is not None and len(item.args) != nargs:
                raise fail(f"'{item.op}' takes {nargs} argument{'s' * (nargs != 1)}, "
                           f"found {len(item.args)}", item)
            if item.op == "ret" and len(item.args) > 1:
                raise fail("'ret' takes at most one argument", item)
            if nlabels == -1:
                if len(item.labels) != len(item.args):
                    raise fail(f"'phi' pairs each argument with a label: {len(item.args)} "
                               f"arguments, {len(item.labels)} labels", item)
            elif len(item.labels) != nlabels:
                raise fail(f"'{item.op}' takes {nlabels} label{'s' * (nlabels != 1)}, "
                           f"found {len(item.labels)}", item)
            if len(item.funcs) != nfuncs:
                raise fail(f"'{item.op}' takes {nfuncs} function name"
                           f"{'s' * (nfuncs != 1)}, found {len(item.funcs)}", item)
            if item.op in _FIELD_OPS and item.field is None:
                raise fail(f"'{item.op}' needs a field name", item)
            if item.op == "const":
                if item.value is None:
                    raise fail("'const' needs a value", item)
                if item.type == BOOL and not isinstance(item.value, bool):
                    raise fail("a bool constant must be true or false", item)
                if item.type == INT and isinstance(item.value, bool):
                    raise fail("an int constant must be a number", item)
                if isinstance(item.value, int) and not -(1 << 63) <= item.value < (1 << 63):
                    raise fail("integer constant out of 64-bit range", item)
            for label in item.labels:
                if label not in labels:
                    raise fail(f"unknown label '.{label}' in @{fn.name}", item)
            if item.op == "call":
                callee = program.functions.get(item.funcs[0])
                if callee is None:
                    raise fail(f"call of undefined function '@{item.funcs[0]}'", item)
                if len(callee.params) != len(item.args):
                    raise fail(f"@{callee.name} takes {len(callee.params)} argument"
                               f"{'s' * (len(callee.params) != 1)}, found {len(item.args)}",
                               item)


# ---------------------------------------------------------------- public readers


def parse_bril_text(text: str, filename: str = "<input>") -> Program:
    """Read a Bril text program; raises :class:`SourceError` with line:col on bad input."""
    program, _ = _TextParser(text, filename).program()
    return program


def bril_args(text: str) -> list[str] | None:
    """The arguments of a ``# ARGS: 3 6`` line, if the file has one."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("# ARGS:"):
            return stripped[len("# ARGS:"):].split()
    return None


def _json_type(value: object, path: str, fail) -> Type:
    if value == "int":
        return INT
    if value == "bool":
        return BOOL
    if isinstance(value, dict) and len(value) == 1:
        (key, inner), = value.items()
        if key == "array":
            return ArrayType(_json_type(inner, path, fail))
        if key == "struct" and isinstance(inner, str):
            return StructType(inner)
    raise fail(f"unsupported Bril type {json.dumps(value)} at {path}")


def parse_bril_json(data: str | bytes | dict, filename: str = "<input>") -> Program:
    """Read a Bril JSON program (text or an already-loaded dict)."""
    source = data if isinstance(data, str) else ""

    def fail(message: str) -> SourceError:
        return SourceError(message, Pos(1, 1), source, filename)

    if isinstance(data, str | bytes):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as e:
            raise SourceError(f"invalid JSON: {e.msg}", Pos(e.lineno, e.colno), source,
                              filename) from None
    if not isinstance(data, dict) or not isinstance(data.get("functions"), list):
        raise fail("a Bril JSON program is an object with a \"functions\" list")
    structs: dict[str, StructInfo] = {}
    for si, s in enumerate(data.get("structs", [])):
        try:
            fields = [(f["name"], _json_type(f["type"], f"structs[{si}]", fail))
                      for f in s["fields"]]
            structs[s["name"]] = StructInfo(s["name"], fields)
        except (KeyError, TypeError):
            raise fail(f"structs[{si}] needs a \"name\" and \"fields\"") from None
    functions: dict[str, Function] = {}
    where: dict[int, tuple[Pos, str]] = {}
    for fi, f in enumerate(data["functions"]):
        path = f"functions[{fi}]"
        if not isinstance(f, dict) or not isinstance(f.get("name"), str):
            raise fail(f"{path} needs a \"name\"")
        name = f["name"]
        try:
            params = [(a["name"], _json_type(a["type"], f"{path}.args", fail))
                      for a in f.get("args", [])]
        except (KeyError, TypeError):
            raise fail(f"{path}.args: each argument needs \"name\" and \"type\"") from None
        ret = _json_type(f["type"], f"{path}.type", fail) if "type" in f else None
        body: list[Instr | Label] = []
        for ii, raw in enumerate(f.get("instrs", [])):
            ipath = f"{path} (@{name}) instrs[{ii}]"
            if not isinstance(raw, dict):
                raise fail(f"{ipath} is not an object")
            if "label" in raw:
                label = Label(str(raw["label"]))
                where[id(label)] = (Pos(1, 1), f" (at {ipath})")
                body.append(label)
                continue
            op = raw.get("op")
            if op not in ALL_OPS:
                raise fail(f"unsupported Bril op {json.dumps(op)} at {ipath}")
            ty = _json_type(raw["type"], ipath, fail) if "type" in raw else None
            instr = Instr(op, raw.get("dest"), ty, list(raw.get("args", [])),
                          list(raw.get("funcs", [])), list(raw.get("labels", [])),
                          raw.get("value"), raw.get("field"))
            pos = raw.get("pos")
            if isinstance(pos, dict) and "row" in pos and "col" in pos:
                instr.pos = Pos(int(pos["row"]), int(pos["col"]))
            where[id(instr)] = (Pos(1, 1), f" (at {ipath})")
            body.append(instr)
        functions[name] = Function(name, params, ret, body)
    program = Program(functions, structs)
    _validate(program, where, source, filename)
    return program


# ---------------------------------------------------------------- writers


def format_type(ty: Type | None) -> str:
    return str(ty)


def format_instr(instr: Instr) -> str:
    """One instruction in Bril text, without indentation (``v: int = add a b;``).

    An instruction that reports a runtime error at a Tiny source position ends with a
    comment saying where (``t3: int = div a b;  # at 5:14``); Bril tools ignore it, our
    reader restores the position from it.
    """
    parts = [instr.op]
    if instr.op == "const":
        value = instr.value
        parts.append("true" if value is True else "false" if value is False else str(value))
    else:
        plain = list(instr.args)
        if instr.field is not None:
            plain.insert(1, instr.field)
        parts += [f"@{f}" for f in instr.funcs] + plain + [f".{lb}" for lb in instr.labels]
    text = " ".join(parts) + ";"
    if instr.dest is not None:
        text = f"{instr.dest}: {format_type(instr.type)} = {text}"
    if instr.pos is not None:
        text += f"  # at {instr.pos.line}:{instr.pos.col}"
    return text


def format_function(fn: Function) -> str:
    params = ", ".join(f"{n}: {t}" for n, t in fn.params)
    head = f"@{fn.name}" + (f"({params})" if fn.params else "")
    if fn.ret is not None:
        head += f": {fn.ret}"
    lines = [head + " {"]
    for item in fn.body:
        if isinstance(item, Label):
            lines.append(f".{item.name}:")
        else:
            lines.append("  " + format_instr(item))
    lines.append("}")
    return "\n".join(lines)


def to_bril_text(program: Program) -> str:
    """The whole program as Bril text (struct declarations first)."""
    parts = []
    for s in program.structs.values():
        fields = " ".join(f"{n}: {t};" for n, t in s.fields)
        parts.append(f"struct {s.name} {{ {fields} }}")
    parts += [format_function(fn) for fn in program.functions.values()]
    return "\n".join(parts) + "\n"


def _type_json(ty: Type) -> object:
    if isinstance(ty, ArrayType):
        return {"array": _type_json(ty.elem)}
    if isinstance(ty, StructType):
        return {"struct": ty.name}
    return str(ty)


def instr_json(instr: Instr) -> dict:
    out: dict[str, object] = {"op": instr.op}
    if instr.dest is not None:
        out["dest"] = instr.dest
    if instr.type is not None:
        out["type"] = _type_json(instr.type)
    if instr.op == "const":
        out["value"] = instr.value
    if instr.args:
        out["args"] = list(instr.args)
    if instr.funcs:
        out["funcs"] = list(instr.funcs)
    if instr.labels:
        out["labels"] = list(instr.labels)
    if instr.field is not None:
        out["field"] = instr.field
    if instr.pos is not None:
        out["pos"] = {"row": instr.pos.line, "col": instr.pos.col}
    return out


def to_bril_json(program: Program) -> dict:
    """The canonical Bril JSON object of a program."""
    functions = []
    for fn in program.functions.values():
        f: dict[str, object] = {"name": fn.name}
        if fn.params:
            f["args"] = [{"name": n, "type": _type_json(t)} for n, t in fn.params]
        if fn.ret is not None:
            f["type"] = _type_json(fn.ret)
        f["instrs"] = [{"label": item.name} if isinstance(item, Label) else instr_json(item)
                       for item in fn.body]
        functions.append(f)
    out: dict[str, object] = {"functions": functions}
    if program.structs:
        out["structs"] = [{"name": s.name,
                           "fields": [{"name": n, "type": _type_json(t)} for n, t in s.fields]}
                          for s in program.structs.values()]
    return out


def dumps_json(program: Program) -> str:
    """Deterministic JSON text of a program."""
    return json.dumps(to_bril_json(program), indent=2, sort_keys=True) + "\n"
