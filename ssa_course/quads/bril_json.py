"""Reading Bril JSON: a schema check with located messages, then quads.

Bril's JSON form (``bril2json``) is checked field by field before anything is built, so a
malformed document gets one message naming the function, the instruction and the field,
located at the line and column of the offending JSON value::

    prog.json:7:18: error: @main instrs[2] "value": an int constant needs a whole number,
    found "5"

Hostile documents are normal input too: nesting deeper than :data:`MAX_DEPTH`, numbers of
thousands of digits, ``NaN`` and ``Infinity`` all give such a message, never a crash.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ssa_course.errors import Pos, SourceError
from ssa_course.quads.ir import Function, Instr, Label, Program, StructInfo, is_known_op
from ssa_course.quads.memory import CHAR, PtrType, is_char
from ssa_course.tiny.types import BOOL, FLOAT, INT, ArrayType, StructType, Type

MAX_TYPE_DEPTH = 64  # as in Bril text: [[...[int]...]]
MAX_DEPTH = 200  # Bril documents nest about 8 deep; the cap keeps json.loads off the C stack
_MAX_DIGITS = 40  # longer integer literals are kept as text: out of range anyway

Path = tuple[str | int, ...]

# Names as Bril's text form spells them, so every program also round-trips through text:
# variables, fields and structs are identifiers; functions and labels may start with a digit.
_IDENT = re.compile(r"[A-Za-z_%][A-Za-z_%.0-9]*")
_NAME = re.compile(r"[A-Za-z_%.0-9]+")


class _Huge:
    """An integer literal too long to be worth converting (reported as out of range)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return f"{self.text[:12]}... ({len(self.text)} digits)"


class _NonFinite:
    """``NaN``, ``Infinity`` or ``-Infinity``, which Python's json accepts but JSON does not."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


def _parse_int(text: str) -> int | _Huge:
    return _Huge(text) if len(text.lstrip("-")) > _MAX_DIGITS else int(text)


def _line_col(text: str, offset: int) -> Pos:
    line = text.count("\n", 0, offset) + 1
    return Pos(line, offset - (text.rfind("\n", 0, offset) + 1) + 1)


def _check_depth(text: str, filename: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH, scanning iteratively (no recursion)."""
    depth, i, n = 0, 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise SourceError(f"JSON nested more than {MAX_DEPTH} levels deep",
                                  _line_col(text, i), text, filename)
        elif c in "]}":
            depth -= 1
        i += 1


def locate(text: str, path: Path) -> Pos:
    """Line and column of the JSON value at ``path`` (keys and indices) in ``text``.

    Used only to point at an error, so it rescans the text; when the path is absent it
    returns the position of its longest present prefix.
    """
    stack: list[list[Any]] = []  # [kind, key or index]; key None: an object awaiting its key
    best, best_len = 0, -1
    i, n = 0, len(text)

    def value_here(offset: int) -> bool:
        nonlocal best, best_len
        here = tuple(frame[1] for frame in stack)
        if len(here) > best_len and path[:len(here)] == here:
            best, best_len = offset, len(here)
        return here == path

    while i < n:
        c = text[i]
        if c in " \t\r\n:":
            i += 1
        elif c in "{[":
            if value_here(i):
                return _line_col(text, i)
            stack.append([c, None if c == "{" else 0])
            i += 1
        elif c in "}]":
            if stack:
                stack.pop()
            i += 1
        elif c == ",":
            if stack:
                top = stack[-1]
                top[1] = top[1] + 1 if top[0] == "[" else None
            i += 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if stack and stack[-1][0] == "{" and stack[-1][1] is None:
                try:
                    stack[-1][1] = json.loads(text[i:j + 1])
                except ValueError:
                    stack[-1][1] = text[i + 1:j]
            elif value_here(i):
                return _line_col(text, i)
            i = j + 1
        else:  # a number or a literal
            if value_here(i):
                return _line_col(text, i)
            while i < n and text[i] not in ",]} \t\r\n":
                i += 1
    return _line_col(text, best) if best_len >= 0 else Pos(1, 1)


def _nested(value: object) -> object:
    """How :func:`_show` writes a value Python's json cannot (NaN as NaN, huge as text)."""
    return float(value.name) if isinstance(value, _NonFinite) else repr(value)


def _show(value: object) -> str:
    """A short rendering of a JSON value for a message."""
    if isinstance(value, _Huge | _NonFinite):
        return repr(value)
    # (_nested: a _Huge or _NonFinite inside a list or object, e.g. [[NaN]])
    text = json.dumps(value, default=_nested) \
        if not isinstance(value, float) or math.isfinite(value) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class _Reader:
    """Turns a loaded JSON document into a Program, checking every field on the way."""

    def __init__(self, text: str, filename: str):
        self.text = text
        self.filename = filename
        self.paths: dict[int, Path] = {}  # id(Instr | Label) -> where it is in the document
        self.fn_paths: dict[str, Path] = {}

    def fail(self, message: str, path: Path) -> SourceError:
        pos = locate(self.text, path) if self.text else Pos(1, 1)
        return SourceError(message, pos, self.text, self.filename)

    # -- small field checkers --------------------------------------------------

    def string(self, value: object, path: Path, what: str, name: re.Pattern[str] = _IDENT) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(f"{what} must be a non-empty string, found {_show(value)}", path)
        if not name.fullmatch(value):
            raise self.fail(f"{what} {_show(value)} is not a Bril name (letters, digits, "
                            "'_', '%' and '.'" + (", not starting with a digit or '.')"
                                                  if name is _IDENT else ")"), path)
        return value

    def strings(self, obj: dict[Any, Any], key: str, path: Path, where: str) -> list[str]:
        value = obj.get(key, [])
        if not isinstance(value, list):
            raise self.fail(f"{where} \"{key}\" must be a list of names, found "
                            f"{_show(value)}", path + (key,))
        name = _IDENT if key == "args" else _NAME
        for k, item in enumerate(value):
            self.string(item, path + (key, k), f"{where} \"{key}\"[{k}]", name)
        return list(value)

    def type(self, value: object, path: Path, where: str, structs: set[str]) -> Type:
        """A Bril type; nested arrays are walked with a loop, not recursion."""
        depth = 0
        wraps: list[str] = []  # "array" or "ptr", outermost first
        while isinstance(value, dict) and len(value) == 1 and (
                "array" in value or "ptr" in value):
            if depth == MAX_TYPE_DEPTH:  # deeper types would overflow printing and ==
                kind = "array type" if set(wraps) == {"array"} else "type"
                raise self.fail(f"{where}: {kind} nested more than {MAX_TYPE_DEPTH} "
                                "deep", path)
            key = "array" if "array" in value else "ptr"
            wraps.append(key)
            value, depth = value[key], depth + 1
            path = path + (key,)
        result: Type
        if value == "int":
            result = INT
        elif value == "bool":
            result = BOOL
        elif value == "char":
            result = CHAR
        elif isinstance(value, dict) and len(value) == 1 and "struct" in value:
            name = value["struct"]
            if not isinstance(name, str) or name not in structs:
                raise self.fail(f"{where}: unknown struct type {_show(name)}", path)
            result = StructType(name)
        elif value == "float":
            result = FLOAT
        elif value == "any":
            raise self.fail(f"{where}: Bril's {_show(value)} type is not supported "
                            "(ssa_course reads int, bool, float, char, pointers, arrays and "
                            "structs)", path)
        else:
            raise self.fail(f"{where}: unknown type {_show(value)}", path)
        for key in reversed(wraps):
            result = ArrayType(result) if key == "array" else PtrType(result)
        return result

    def pos(self, instr: Instr, raw: dict[Any, Any], path: Path, where: str) -> None:
        if "pos" not in raw:
            return
        pos = raw["pos"]
        ok = isinstance(pos, dict) and all(
            isinstance(pos.get(k), int) and not isinstance(pos.get(k), bool)
            and 1 <= pos[k] < 1 << 31 for k in ("row", "col"))
        if not ok:
            raise self.fail(f"{where} \"pos\" must be {{\"row\": N, \"col\": N}} with "
                            f"positive whole numbers, found {_show(pos)}", path + ("pos",))
        instr.pos = Pos(pos["row"], pos["col"])

    # -- the document ----------------------------------------------------------

    def program(self, data: object) -> Program:
        if not isinstance(data, dict) or not isinstance(data.get("functions"), list):
            raise self.fail("a Bril JSON program is an object with a \"functions\" list",
                            ("functions",) if isinstance(data, dict) else ())
        if "imports" in data:
            from ssa_course.quads.bril import UNSUPPORTED_IMPORTS

            raise self.fail(UNSUPPORTED_IMPORTS, ("imports",))
        raw_structs = data.get("structs", [])
        if not isinstance(raw_structs, list):
            raise self.fail("\"structs\" must be a list", ("structs",))
        names: set[str] = set()
        for si, s in enumerate(raw_structs):
            if not isinstance(s, dict):
                raise self.fail(f"structs[{si}] must be an object", ("structs", si))
            name = self.string(s.get("name"), ("structs", si, "name"), f"structs[{si}] name")
            if name in names:
                raise self.fail(f"struct '{name}' is defined twice", ("structs", si, "name"))
            names.add(name)
        structs: dict[str, StructInfo] = {}
        for si, s in enumerate(raw_structs):
            fields = s.get("fields")
            if not isinstance(fields, list):
                raise self.fail(f"struct '{s['name']}' needs a \"fields\" list",
                                ("structs", si, "fields"))
            out: list[tuple[str, Type]] = []
            for k, f in enumerate(fields):
                path = ("structs", si, "fields", k)
                if not isinstance(f, dict):
                    raise self.fail(f"struct '{s['name']}' field {k} must be an object", path)
                fname = self.string(f.get("name"), path + ("name",), "a field name")
                if any(fname == other for other, _ in out):
                    raise self.fail(f"struct '{s['name']}' has two fields '{fname}'", path)
                out.append((fname, self.type(f.get("type"), path + ("type",),
                                             f"field '{fname}'", names)))
            structs[s["name"]] = StructInfo(s["name"], out)
        functions: dict[str, Function] = {}
        for fi, f in enumerate(data["functions"]):
            fn = self.function(f, fi, names)
            if fn.name in functions:
                raise self.fail(f"function '@{fn.name}' is defined twice",
                                ("functions", fi, "name"))
            functions[fn.name] = fn
        return Program(functions, structs)

    def function(self, f: object, fi: int, structs: set[str]) -> Function:
        path: Path = ("functions", fi)
        if not isinstance(f, dict):
            raise self.fail(f"functions[{fi}] must be an object", path)
        name = self.string(f.get("name"), path + ("name",), f"functions[{fi}] \"name\"",
                           _NAME)
        self.fn_paths[name] = path
        raw_args = f.get("args", [])
        if not isinstance(raw_args, list):
            raise self.fail(f"@{name} \"args\" must be a list", path + ("args",))
        params: list[tuple[str, Type]] = []
        for k, a in enumerate(raw_args):
            apath = path + ("args", k)
            if not isinstance(a, dict):
                raise self.fail(f"@{name} args[{k}] must be an object", apath)
            pname = self.string(a.get("name"), apath + ("name",), f"@{name} args[{k}] name")
            if any(pname == other for other, _ in params):
                raise self.fail(f"@{name} has two parameters '{pname}'", apath)
            params.append((pname, self.type(a.get("type"), apath + ("type",),
                                            f"@{name} parameter '{pname}'", structs)))
        ret = self.type(f["type"], path + ("type",), f"@{name} return type", structs) \
            if "type" in f else None
        instrs = f.get("instrs")
        if not isinstance(instrs, list):
            raise self.fail(f"@{name} needs an \"instrs\" list, found {_show(instrs)}",
                            path + ("instrs",))
        body: list[Instr | Label] = []
        for ii, raw in enumerate(instrs):
            body.append(self.item(raw, path + ("instrs", ii), f"@{name} instrs[{ii}]",
                                  structs))
        return Function(name, params, ret, body)

    def item(self, raw: object, path: Path, where: str, structs: set[str]) -> Instr | Label:
        if not isinstance(raw, dict):
            raise self.fail(f"{where} must be an object (an instruction or a label)", path)
        if "label" in raw:
            if "op" in raw:
                raise self.fail(f"{where} has both \"label\" and \"op\"", path)
            label = Label(self.string(raw["label"], path + ("label",), f"{where} \"label\"",
                                      _NAME))
            self.paths[id(label)] = path
            return label
        if "op" not in raw:
            raise self.fail(f"{where} has neither \"op\" nor \"label\"", path)
        op = raw["op"]
        if not isinstance(op, str) or not is_known_op(op):
            raise self.fail(f"{where}: unsupported Bril op {_show(op)}", path + ("op",))
        dest = None
        if "dest" in raw:
            dest = self.string(raw["dest"], path + ("dest",), f"{where} \"dest\"")
        ty = self.type(raw["type"], path + ("type",), where, structs) if "type" in raw \
            else None
        instr = Instr(op, dest, ty, self.strings(raw, "args", path, where),
                      self.strings(raw, "funcs", path, where),
                      self.strings(raw, "labels", path, where))
        if "field" in raw:
            instr.field = self.string(raw["field"], path + ("field",), f"{where} \"field\"")
        if op == "const":
            instr.value = self.const_value(raw, ty, path, where)
        elif "value" in raw:
            raise self.fail(f"{where}: only 'const' has a \"value\"", path + ("value",))
        self.pos(instr, raw, path, where)
        self.paths[id(instr)] = path
        return instr

    def const_value(self, raw: dict[str, Any], ty: Type | None, path: Path,
                    where: str) -> int | bool | float | str:
        if "value" not in raw:
            raise self.fail(f"{where}: 'const' needs a \"value\"", path)
        value = raw["value"]
        vpath = path + ("value",)
        if ty == BOOL:
            if not isinstance(value, bool):
                raise self.fail(f"{where} \"value\": a bool constant must be true or false, "
                                f"found {_show(value)}", vpath)
            return value
        if ty == INT:
            if isinstance(value, _Huge) or (isinstance(value, int) and not isinstance(
                    value, bool) and not -(1 << 63) <= value < (1 << 63)):
                raise self.fail(f"{where} \"value\": integer constant {_show(value)} is out "
                                "of the 64-bit range", vpath)
            if isinstance(value, bool) or not isinstance(value, int):
                raise self.fail(f"{where} \"value\": an int constant needs a whole number, "
                                f"found {_show(value)}", vpath)
            return value
        if ty == FLOAT:  # a JSON number, whole or not, as brili reads it
            number = float(value.text) if isinstance(value, _Huge) else value
            if isinstance(number, bool) or not isinstance(number, int | float) \
                    or not math.isfinite(number):
                raise self.fail(f"{where} \"value\": a float constant needs a finite number, "
                                f"found {_show(value)}", vpath)
            return float(number)
        if ty == CHAR:
            if not isinstance(value, str) or not is_char(value):
                raise self.fail(f"{where} \"value\": a char constant is a string of one "
                                f"Unicode character, found {_show(value)}", vpath)
            return value
        if ty is None:
            raise self.fail(f"{where}: 'const' needs a \"type\"", path)
        raise self.fail(f"{where}: a constant must be an int, a bool, a float or a char, "
                        f"not {ty}",
                        path + ("type",))


def read_bril_json(data: str | bytes | dict[Any, Any], filename: str = "<input>",
                   ) -> tuple[Program, _Reader]:
    """Check and read a Bril JSON document; returns the program and the reader, whose
    ``paths`` locate every instruction and label for later messages."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise SourceError("the JSON document is not UTF-8 text", Pos(1, 1), "",
                              filename) from None
    text = data if isinstance(data, str) else ""
    if isinstance(data, str):
        _check_depth(data, filename)
        try:
            data = json.loads(data, parse_int=_parse_int, parse_constant=_NonFinite)
        except json.JSONDecodeError as e:
            raise SourceError(f"invalid JSON: {e.msg}", Pos(e.lineno, e.colno), text,
                              filename) from None
        except (ValueError, RecursionError) as e:  # e.g. a float literal of 10^6 digits
            raise SourceError(f"invalid JSON: {e}", Pos(1, 1), text, filename) from None
    reader = _Reader(text, filename)
    return reader.program(data), reader
