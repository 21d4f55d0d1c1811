"""Writing quads as Bril: the text form (as ``bril2txt`` prints it) and canonical JSON."""

from __future__ import annotations

import json
from typing import Any

from ssa_course.quads.ir import Function, Instr, Label, Program
from ssa_course.quads.memory import PtrType, char_literal
from ssa_course.tiny.types import ArrayType, StructType, Type


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
        # bool before int: in Python True == 1, and Bril writes ``true``, not ``1``
        parts.append("true" if value is True else "false" if value is False
                     else char_literal(value) if isinstance(value, str) else str(value))
    else:
        plain = list(instr.args)
        if instr.field is not None:  # getf p f / setf p f v: the field after the object
            plain.insert(1, instr.field)
        # Bril's order: functions (@f), then variables, then labels (.L)
        parts += [f"@{f}" for f in instr.funcs] + plain + [f".{lb}" for lb in instr.labels]
    text = " ".join(parts) + ";"
    if instr.dest is not None:
        text = f"{instr.dest}: {format_type(instr.type)} = {text}"
    if instr.pos is not None:
        text += f"  # at {instr.pos.line}:{instr.pos.col}"
    return text


def format_function(fn: Function) -> str:
    params = ", ".join(f"{n}: {t}" for n, t in fn.params)
    # ``@main {`` without parentheses when there are no parameters, as Bril writes it
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
    # Bril JSON writes a scalar type as a string and a parametrized one as an object
    # (the memory extension's ``{"ptr": ...}``; ours: ``{"array": ...}``, ``{"struct": ...}``)
    if isinstance(ty, ArrayType):
        return {"array": _type_json(ty.elem)}
    if isinstance(ty, StructType):
        return {"struct": ty.name}
    if isinstance(ty, PtrType):
        return {"ptr": _type_json(ty.elem)}
    return str(ty)


def instr_json(instr: Instr) -> dict[Any, Any]:
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
    if instr.pos is not None:  # Bril's source-position field (``bril2json -p``)
        out["pos"] = {"row": instr.pos.line, "col": instr.pos.col}
    return out


def to_bril_json(program: Program) -> dict[Any, Any]:
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
    # sorted keys and fixed indentation: the same program always gives the same bytes
    # (golden files and diffs stay stable)
    return json.dumps(to_bril_json(program), indent=2, sort_keys=True) + "\n"
