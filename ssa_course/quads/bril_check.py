"""Static checks of a Bril program, before anything runs: shapes, then types.

:func:`check_shapes` is what every reader needs: each operation has the right number of
arguments, labels and function names, a destination exactly when it must, labels and
callees that exist. :func:`check_types` then type-checks like Bril's ``brilck``: every
variable has one type in its function, every operation gets operands of the types it
takes, calls match their callee's signature, a function with a result type returns a
value on every ``ret``, and no variable is read where no assignment can have happened.

Both raise :class:`BrilProblem`; the text and JSON readers turn it into a located
:class:`~ssa_course.errors.SourceError` (a line:col for text, the JSON value for JSON).
"""

from __future__ import annotations

import math

from ssa_course import opcodes
from ssa_course.quads.bril_defined import check_defined
from ssa_course.quads.bril_problem import BrilProblem
from ssa_course.quads.ir import Function, Instr, Label, Program
from ssa_course.quads.memory import CHAR, CHAR_SIGS, PtrType, is_char
from ssa_course.quads.memory import SHAPES as MEMORY_SHAPES
from ssa_course.tiny.types import BOOL, FLOAT, INT, ArrayType, StructType, Type

# op -> (number of variable args or None, dest: True required / False forbidden / None
#        optional, number of labels (-1: one per argument), number of funcs)
SHAPES: dict[str, tuple[int | None, bool | None, int, int]] = {
    "const": (0, True, 0, 0),
    "id": (1, True, 0, 0),
    "jmp": (0, False, 1, 0), "br": (1, False, 2, 0),
    "call": (None, None, 0, 1), "ret": (None, False, 0, 0),
    "print": (None, False, 0, 0), "nop": (0, False, 0, 0),
    "alen": (1, True, 0, 0), "newarr": (1, True, 0, 0),
    "aload": (2, True, 0, 0), "astore": (3, False, 0, 0),
    "newstruct": (None, True, 0, 0), "getf": (1, True, 0, 0), "setf": (2, False, 0, 0),
    "enter": (0, False, 2, 0), "leave": (0, False, 0, 0), "throw": (1, False, 0, 0),
    "catch": (0, True, 0, 0), "checkdef": (1, False, 0, 0),
    "phi": (None, True, -1, 0),
    "set": (2, False, 0, 0), "get": (0, True, 0, 0), "undef": (0, True, 0, 0),
    # Bril's memory and char extensions (quads/memory.py)
    **{op: (nargs, dest, 0, 0) for op, (nargs, dest) in MEMORY_SHAPES.items()},
}


def shape(op: str) -> tuple[int | None, bool | None, int, int]:
    """The shape of a known op; a value operator's comes from the opcode table."""
    value_op = opcodes.bril_op(op)
    return (value_op.arity, True, 0, 0) if value_op is not None else SHAPES[op]


FIELD_OPS = ("getf", "setf", "checkdef")  # checkdef's "field" names the variable

# Operations with a fixed signature: argument types and result type (None: no result).
# (The value operators' signatures are their rows in the opcode table.)
_SIGS: dict[str, tuple[tuple[Type, ...], Type | None]] = {
    "br": ((BOOL,), None), "throw": ((INT,), None), "catch": ((), INT),
    "checkdef": ((BOOL,), None),
    **CHAR_SIGS,
}
_KINDS: dict[str, Type] = {opcodes.INT: INT, opcodes.BOOL: BOOL, opcodes.FLOAT: FLOAT}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


# ---------------------------------------------------------------- shapes


def check_shapes(program: Program) -> None:
    """Operation shapes, labels, callees and call arity (what any reader must check)."""
    for struct in program.structs.values():
        for _, ty in struct.fields:
            _known_type(program, ty, None, None)
    for fn in program.functions.values():
        for _, ty in fn.params:
            _known_type(program, ty, fn.name, None)
        _known_type(program, fn.ret, fn.name, None)
        for instr in fn.instrs():
            _known_type(program, instr.type, fn.name, instr)
        labels: set[str] = set()
        for item in fn.body:
            if isinstance(item, Label):
                if item.name in labels:
                    raise BrilProblem(f"label '.{item.name}' is defined twice in @{fn.name}",
                                      fn.name, item)
                labels.add(item.name)
        for instr in fn.instrs():
            _check_shape(program, fn, instr, labels)


def _check_shape(program: Program, fn: Function, item: Instr, labels: set[str]) -> None:
    def fail(message: str, field: str | None = None) -> BrilProblem:
        return BrilProblem(message, fn.name, item, field)

    nargs, dest, nlabels, nfuncs = shape(item.op)
    if dest is True and item.dest is None:
        raise fail(f"'{item.op}' needs a destination ('x: type = {item.op} ...')")
    if dest is False and item.dest is not None:
        raise fail(f"'{item.op}' has no result; remove '{item.dest}: ... ='", "dest")
    if item.dest is not None and item.type is None:
        raise fail(f"'{item.dest}' needs a type ('{item.dest}: int = ...')", "dest")
    if item.dest is None and item.type is not None:
        raise fail(f"'{item.op}' has a type but no destination", "type")
    if nargs is not None and len(item.args) != nargs:
        raise fail(f"'{item.op}' takes {_plural(nargs, 'argument')}, found {len(item.args)}",
                   "args")
    if item.op == "ret" and len(item.args) > 1:
        raise fail("'ret' takes at most one argument", "args")
    if nlabels == -1:
        if len(item.labels) != len(item.args):
            raise fail(f"'phi' pairs each argument with a label: {len(item.args)} "
                       f"arguments, {len(item.labels)} labels", "labels")
    elif len(item.labels) != nlabels:
        raise fail(f"'{item.op}' takes {_plural(nlabels, 'label')}, found "
                   f"{len(item.labels)}", "labels")
    if len(item.funcs) != nfuncs:
        raise fail(f"'{item.op}' takes {_plural(nfuncs, 'function name')}, found "
                   f"{len(item.funcs)}", "funcs")
    if item.op in FIELD_OPS and item.field is None:
        raise fail(f"'{item.op}' needs a field name")
    if item.op not in FIELD_OPS and item.field is not None:
        raise fail(f"only 'getf', 'setf' and 'checkdef' name a field, not '{item.op}'",
                   "field")
    if item.op == "const":
        if item.value is None:
            raise fail("'const' needs a value")
        if item.type == BOOL and not isinstance(item.value, bool):
            raise fail("a bool constant must be true or false", "value")
        if item.type == INT and (isinstance(item.value, bool)
                                 or not isinstance(item.value, int | float)):
            raise fail("an int constant must be a number", "value")
        if item.type == INT and isinstance(item.value, float):
            raise fail("an int constant must be a whole number", "value")
        if item.type == FLOAT and (not isinstance(item.value, float)
                                   or not math.isfinite(item.value)):
            raise fail("a float constant must be a finite number", "value")
        if item.type == CHAR and not is_char(item.value):
            raise fail("a char constant must be one Unicode character", "value")
        if item.type != CHAR and isinstance(item.value, str):
            raise fail(f"a character constant must have type char, not {item.type}", "type")
        if item.type not in (INT, BOOL, FLOAT, CHAR):
            raise fail(f"a constant must be an int, a bool, a float or a char, not {item.type}",
                       "type")
        if isinstance(item.value, int) and not -(1 << 63) <= item.value < (1 << 63):
            raise fail("integer constant out of 64-bit range", "value")
    for label in item.labels:
        if label not in labels:
            raise fail(f"unknown label '.{label}' in @{fn.name}", "labels")
    if item.op == "call":
        callee = program.functions.get(item.funcs[0])
        if callee is None:
            raise fail(f"call of undefined function '@{item.funcs[0]}'", "funcs")
        if len(callee.params) != len(item.args):
            raise fail(f"@{callee.name} takes {_plural(len(callee.params), 'argument')}, "
                       f"found {len(item.args)}", "args")


# ---------------------------------------------------------------- types


def check_types(program: Program, runtime_errors_allowed: bool = False) -> None:
    """Type-check every function like ``brilck`` (see the module docstring).

    With ``runtime_errors_allowed`` (the quads verifier), reads that fail whenever they
    run -- a variable no path assigns, one only ever ``undef`` -- are not rejected: they
    are the program's own runtime errors, which an optimizer keeps."""
    for fn in program.functions.values():
        _FunctionChecker(program, fn, runtime_errors_allowed).run()
    main = program.functions.get("main")
    if main is not None and main.ret is not None:
        raise BrilProblem(f"@main must not return a value (it is declared {main.ret})",
                          "main")
    for name, ty in main.params if main is not None else ():
        if ty not in (INT, BOOL, FLOAT, CHAR):  # its arguments come from the command line
            raise BrilProblem(f"parameter '{name}' of @main must be int, bool, float or char, "
                              f"not {ty}", "main")


def _known_type(program: Program, ty: Type | None, fn: str | None,
                item: Instr | None) -> None:
    while isinstance(ty, ArrayType | PtrType):
        ty = ty.elem
    if isinstance(ty, StructType) and ty.name not in program.structs:
        raise BrilProblem(f"unknown type '{ty.name}' (not int, bool, [T] or a declared "
                          "struct)", fn, item, "type")


class _FunctionChecker:
    def __init__(self, program: Program, fn: Function, runtime_errors_allowed: bool = False):
        self.program = program
        self.fn = fn
        self.lenient = runtime_errors_allowed
        self.types: dict[str, Type] = {}
        self.gets: set[str] = set()  # shadow variables some ``get`` reads

    def fail(self, message: str, item: Instr | None = None,
             field: str | None = None) -> BrilProblem:
        return BrilProblem(message, self.fn.name, item, field)

    def run(self) -> None:
        fn = self.fn
        for name, ty in fn.params:
            self.types[name] = ty
        for item in fn.instrs():
            if item.dest is None or item.type is None:  # (shapes: a dest has a type)
                continue
            old = self.types.setdefault(item.dest, item.type)
            if old != item.type:
                raise self.fail(f"'{item.dest}' is {old} elsewhere in @{fn.name} but "
                                f"{item.type} here", item, "type")
            if item.op == "get":
                self.gets.add(item.dest)
        for item in fn.instrs():
            if self.lenient and any(a not in self.types for a in item.args):
                continue  # reads a variable nothing assigns: it fails when it runs
            self.instr(item)
        if fn.ret is not None and not any(i.op in ("ret", "throw") for i in fn.instrs()):
            # brilck's rule; a function that only throws (Tiny's extension) is fine too
            raise self.fail(f"@{fn.name} returns {fn.ret} but has no 'ret'")
        if not self.lenient:
            self.undef_uses()
            check_defined(fn)

    def undef_uses(self) -> None:
        """A variable whose every assignment is ``undef`` (or a copy of such a variable)
        can only be copied: any other use is an error whenever it runs (brili: "print of
        undefined value"), so it is rejected here, the same way in every stage."""
        defs: dict[str, list[Instr]] = {}
        for item in self.fn.instrs():
            if item.dest is not None:
                defs.setdefault(item.dest, []).append(item)
        params = {name for name, _ in self.fn.params}
        only = {v for v, ds in defs.items() if v not in params
                and all(d.op in ("undef", "id") for d in ds)}
        changed = True
        while changed:  # drop variables that also copy a real value
            changed = False
            for v in list(only):
                if any(d.op == "id" and d.args[0] not in only for d in defs[v]):
                    only.discard(v)
                    changed = True
        if not only:
            return
        for item in self.fn.instrs():
            if item.op in ("id", "phi", "set"):  # copies (a set stores into a shadow)
                continue
            for var in item.args:
                if var in only:
                    raise self.fail(f"'{var}' is only ever undef, so '{item.op}' cannot "
                                    "use it", item, "args")

    def type_of(self, var: str, item: Instr) -> Type:
        ty = self.types.get(var)
        if ty is None:
            raise self.fail(f"undefined variable '{var}'", item, "args")
        return ty

    def need(self, item: Instr, k: int, want: Type | None, what: str = "") -> Type:
        have = self.type_of(item.args[k], item)
        if want is not None and have != want:
            raise self.fail(f"'{item.op}' needs {what or want} operands, but "
                            f"'{item.args[k]}' is {have}", item, "args")
        return have

    def result(self, item: Instr, want: Type) -> None:
        if item.type != want:
            raise self.fail(f"'{item.op}' produces {want}, but '{item.dest}' is declared "
                            f"{item.type}", item, "type")

    def instr(self, item: Instr) -> None:
        op = item.op
        sig = _SIGS.get(op)
        value_op = opcodes.bril_op(op)
        if sig is not None:
            for k, want in enumerate(sig[0]):
                self.need(item, k, want)
            if sig[1] is not None:
                self.result(item, sig[1])
        elif value_op is not None and value_op.operands == opcodes.SAME:
            a = self.need(item, 0, None)
            b = self.need(item, 1, None)
            if a != b:
                raise self.fail(f"'{op}' compares values of one type, not {a} and {b}", item,
                                "args")
            if a == FLOAT:  # as brilck: floats compare with feq
                raise self.fail(f"'{op}' does not compare floats (use 'feq')", item, "args")
            if isinstance(a, PtrType) or a == CHAR:  # brilck: eq takes ints (ceq: chars)
                raise self.fail(f"'{op}' cannot compare {a} values"
                                + (" (chars compare with 'ceq')" if a == CHAR else ""),
                                item, "args")
            self.result(item, _KINDS[value_op.result])
        elif value_op is not None:
            for k in range(value_op.arity):
                self.need(item, k, _KINDS[value_op.operands])
            self.result(item, _KINDS[value_op.result])
        elif op == "id":
            self.result(item, self.need(item, 0, None))
        elif op == "print":
            for k in range(len(item.args)):
                self.need(item, k, None)
        elif op == "ret":
            self.ret(item)
        elif op == "call":
            self.call(item)
        elif op in ("newarr", "alen", "aload", "astore"):
            self.array(item)
        elif op in ("newstruct", "getf", "setf"):
            self.struct(item)
        elif op in MEMORY_SHAPES:
            self.memory(item)
        elif op == "phi":
            for var in item.args:  # an argument may be undefined on its edge (Bril's rule)
                ty = self.types.get(var)
                if ty is not None and ty != item.type:
                    raise self.fail(f"'phi' of {item.type} has an argument '{var}' of type "
                                    f"{ty}", item, "args")
        elif op == "set":
            shadow = item.args[0]
            if shadow not in self.gets:
                raise self.fail(f"'set {shadow}' has no matching '{shadow}: T = get'", item,
                                "args")
            self.need(item, 1, self.types[shadow])

    def ret(self, item: Instr) -> None:
        fn = self.fn
        if fn.ret is None:
            if item.args:
                raise self.fail(f"@{fn.name} returns nothing, but 'ret' has a value", item,
                                "args")
            return
        if not item.args:
            raise self.fail(f"@{fn.name} returns {fn.ret}: 'ret' needs a value", item)
        have = self.type_of(item.args[0], item)
        if have != fn.ret:
            raise self.fail(f"@{fn.name} returns {fn.ret}, but '{item.args[0]}' is {have}",
                            item, "args")

    def call(self, item: Instr) -> None:
        callee = self.program.functions[item.funcs[0]]
        for k, (pname, pty) in enumerate(callee.params):
            have = self.type_of(item.args[k], item)
            if have != pty:
                raise self.fail(f"@{callee.name}'s parameter '{pname}' is {pty}, but "
                                f"'{item.args[k]}' is {have}", item, "args")
        if callee.ret is None and item.dest is not None:
            raise self.fail(f"@{callee.name} returns nothing; remove '{item.dest}: "
                            f"{item.type} ='", item, "dest")
        if callee.ret is not None and item.dest is None:
            raise self.fail(f"@{callee.name} returns {callee.ret}: the call needs a "
                            f"destination ('x: {callee.ret} = call @{callee.name} ...')",
                            item)
        if callee.ret is not None and item.type != callee.ret:
            raise self.fail(f"@{callee.name} returns {callee.ret}, but '{item.dest}' is "
                            f"declared {item.type}", item, "type")

    def array(self, item: Instr) -> None:
        op = item.op
        if op == "newarr":
            self.need(item, 0, INT)
            if not isinstance(item.type, ArrayType):
                raise self.fail(f"'newarr' makes an array, but '{item.dest}' is declared "
                                f"{item.type}", item, "type")
            return
        arr = self.type_of(item.args[0], item)
        if not isinstance(arr, ArrayType):
            raise self.fail(f"'{op}' needs an array, but '{item.args[0]}' is {arr}", item,
                            "args")
        if op == "alen":
            self.result(item, INT)
            return
        self.need(item, 1, INT, "an int index, not")
        if op == "aload":
            self.result(item, arr.elem)
        else:
            self.need(item, 2, arr.elem)

    def memory(self, item: Instr) -> None:
        """Bril's memory extension: ``alloc`` makes a ``ptr<T>``, ``load``/``store`` move
        a ``T`` through it, ``ptradd`` moves it by an int (brilck's signatures)."""
        op = item.op
        if op == "alloc":
            self.need(item, 0, INT)
            if not isinstance(item.type, PtrType):
                raise self.fail(f"'alloc' makes a pointer, but '{item.dest}' is declared "
                                f"{item.type}", item, "type")
            return
        ptr = self.type_of(item.args[0], item)
        if not isinstance(ptr, PtrType):
            raise self.fail(f"'{op}' needs a pointer, but '{item.args[0]}' is {ptr}", item,
                            "args")
        if op == "load":
            self.result(item, ptr.elem)
        elif op == "store":
            self.need(item, 1, ptr.elem)
        elif op == "ptradd":
            self.need(item, 1, INT, "an int offset, not")
            self.result(item, ptr)

    def struct(self, item: Instr) -> None:
        op = item.op
        sty = item.type if op == "newstruct" else self.type_of(item.args[0], item)
        if not isinstance(sty, StructType):
            raise self.fail(f"'{op}' needs a struct, not {sty}", item,
                            "type" if op == "newstruct" else "args")
        fields = self.program.structs[sty.name].fields
        if op == "newstruct":
            if len(item.args) != len(fields):
                raise self.fail(f"struct {sty.name} has {_plural(len(fields), 'field')}, "
                                f"'newstruct' gives {len(item.args)}", item, "args")
            for k, (_, fty) in enumerate(fields):
                self.need(item, k, fty)
            return
        ftype = dict(fields).get(item.field or "")
        if ftype is None:
            raise self.fail(f"struct {sty.name} has no field '{item.field}'", item, "field")
        if op == "getf":
            self.result(item, ftype)
        else:
            self.need(item, 1, ftype)
