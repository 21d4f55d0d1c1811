"""Two ways to clean up naive quads (lesson 02): a fixed window, and use-def information.

* :func:`window_peephole` looks at ``size`` neighbouring instructions at a time, like the
  classic peephole optimizer. It folds an operation whose operands were made constant
  *inside the window*, forwards a copy made inside the window, and applies algebraic
  identities. Whatever happened outside the window is invisible to it.
* :func:`local_value_numbering` follows use-def information through a whole basic block:
  every value gets a number; an expression already computed (same operation on the same
  numbers -- commutative operands sorted) is reused, constants are folded and copies are
  forwarded, whatever the distance. The table is flushed at block ends, as in the paper.
* :func:`dead_code` removes pure instructions whose result nobody reads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ssa_course.floats import const_key
from ssa_course.quads.fold import COMMUTATIVE, DIVISION, PURE, fold, identity
from ssa_course.quads.ir import Function, Instr, Label, Program


def _const(instr: Instr, value: object) -> Instr:
    assert isinstance(value, int | float)  # the table's constants: ints, bools, floats
    return Instr("const", instr.dest, instr.type, value=value, pos=instr.pos)


def _copy(instr: Instr, var: str) -> Instr:
    return Instr("id", instr.dest, instr.type, [var], pos=instr.pos)


# ---------------------------------------------------------------- the fixed window


def _rewrite_in_window(window: list[Instr], instr: Instr) -> Instr:
    """Rewrite ``instr`` using only what the instructions in ``window`` (before it) say."""
    if instr.op not in PURE and instr.op not in DIVISION:
        return instr
    known: dict[str, Instr] = {}
    for w in window:  # the latest definition inside the window wins
        if w.dest is not None:
            known[w.dest] = w
    args = []
    for a in instr.args:  # forward copies made inside the window
        d = known.get(a)
        args.append(d.args[0] if d is not None and d.op == "id" and d.args[0] not in
                    [x.dest for x in window[window.index(d) + 1:]] else a)
    consts = [known[a].value if a in known and known[a].op == "const" else None
              for a in instr.args]
    if instr.op == "const":
        return instr
    if all(c is not None for c in consts) and instr.args:
        value = fold(instr.op, consts)
        if value is not None:
            return _const(instr, value)
    rule = identity(instr.op, args, consts)
    if rule is not None and not (instr.op in DIVISION and consts[1] in (0, None)
                                 and rule[0] == "const"):
        kind, what = rule
        if kind == "const":
            return _const(instr, what)
        assert isinstance(what, str)  # ("copy", the variable to read)
        return _copy(instr, what)
    new = instr.copy()
    new.args = args
    return new


def window_peephole(fn: Function, size: int = 3) -> Function:
    """Slide a window of ``size`` instructions through each straight-line run."""
    body: list[Instr | Label] = []
    window: list[Instr] = []
    for item in fn.body:
        if isinstance(item, Label):
            window = []  # control may arrive here from elsewhere: forget everything
            body.append(item)
            continue
        # the instruction sees only the ``size - 1`` instructions before it
        new = _rewrite_in_window(window[-(size - 1):] if size > 1 else [], item)
        body.append(new)
        window.append(new)  # (rewritten: a folded constant helps the next one)
        if new.is_terminator() or new.op == "call":
            window = []  # a block ends; a call may change what the window knew
    return Function(fn.name, list(fn.params), fn.ret, body)


# ---------------------------------------------------------------- local value numbering


class _Table:
    """The value-numbering table of one basic block."""

    def __init__(self) -> None:
        self.var2num: dict[str, int] = {}  # the value each variable holds now
        self.expr2num: dict[tuple[Any, ...], int] = {}  # (op, value numbers...) -> its value
        self.num2const: dict[int, object] = {}  # values known to be constants
        # a variable that still holds the value: where a later use can read it from
        # (Bril's lvn.py calls it the canonical variable)
        self.num2home: dict[int, str] = {}
        self.next = 0

    def fresh(self) -> int:
        self.next += 1
        return self.next

    def num_of(self, var: str) -> int:
        n = self.var2num.get(var)
        if n is None:  # defined before the block: a value of its own
            n = self.var2num[var] = self.fresh()
            self.num2home[n] = var
        return n

    def home(self, n: int) -> str | None:
        return self.num2home.get(n)

    def assign(self, var: str, n: int) -> None:
        old = self.var2num.get(var)
        if old is not None and self.num2home.get(old) == var:
            # ``var`` no longer holds ``old``: find another holder, or forget the home
            other = next((v for v, m in self.var2num.items() if m == old and v != var), None)
            if other is None:
                del self.num2home[old]
            else:
                self.num2home[old] = other
        self.var2num[var] = n
        self.num2home.setdefault(n, var)


def _lvn_block(instrs: list[Instr]) -> list[Instr]:
    t = _Table()
    out: list[Instr] = []
    for instr in instrs:
        nums = [t.num_of(a) for a in instr.args]
        # forward copies: read each value from its home
        args = [t.home(n) or a for n, a in zip(nums, instr.args, strict=True)]
        new = instr.copy()
        new.args = args
        if instr.dest is None or (instr.op not in PURE and instr.op not in DIVISION):
            # an effect (print, store, call...) or a load: its result is a value nobody
            # computed before -- a fresh number, never merged with another
            out.append(new)
            if instr.dest is not None:
                t.assign(instr.dest, t.fresh())
            continue
        # The key says when two instructions compute the same value: the operation on
        # the same value numbers (sorted when the order does not matter: a+b is b+a).
        consts = [t.num2const.get(n) for n in nums]
        if instr.op == "const":
            key: tuple[Any, ...] = ("const", *const_key(instr.value))
        elif instr.op == "id":
            key = ("num", nums[0])  # a copy is its operand's value itself
        else:
            ordered = sorted(nums) if instr.op in COMMUTATIVE else nums
            key = (instr.op, *ordered)
        n: int | None = None
        value: object | None = None
        if instr.op == "const":
            value = instr.value
        elif instr.op != "id" and instr.args and all(c is not None for c in consts):
            # every operand known: fold (None when it would trap, e.g. 1 / 0)
            value = fold(instr.op, consts)
            if value is not None:
                key = ("const", *const_key(value))
                new = _const(instr, value)
        if value is None and instr.op not in ("const", "id"):
            # algebra: x*0 is 0, x+0 is x, x-x is 0 (the opcode table's identities)
            rule = identity(instr.op, args, consts)
            if rule is not None:
                kind, what = rule
                if kind == "const":
                    value = what
                    key = ("const", *const_key(what))
                    new = _const(instr, what)
                else:
                    assert isinstance(what, str)  # ("copy", the variable to read)
                    key = ("num", t.var2num.get(what, t.num_of(what)))
        n = key[1] if key[0] == "num" else t.expr2num.get(key)
        home = t.home(n) if n is not None else None
        if n is not None and home is not None and home != instr.dest:
            # computed before and still held by ``home``: copy it (or remake the
            # constant) instead of computing it again
            out.append(_copy(instr, home) if n not in t.num2const
                       else _const(instr, t.num2const[n]))
            t.assign(instr.dest, n)
            continue
        if n is None:  # a new value: number it, so a later twin finds it
            n = t.fresh()
            if key[0] != "num":
                t.expr2num[key] = n
        if value is not None:
            t.num2const[n] = value
        out.append(new)
        t.assign(instr.dest, n)
    return out


def local_value_numbering(fn: Function) -> Function:
    """Value-number each basic block; labels and jumps stay where they are.

    A block ends at a label (control may arrive from elsewhere) and after a terminator;
    the table starts empty in each block. Each instruction is rewritten one for one.
    """
    body: list[Instr | Label] = []
    run: list[Instr] = []  # the instructions of the block being collected
    for item in fn.body:
        if isinstance(item, Label):
            # control may also arrive here from a jump: what the table knew may not hold
            body.extend(_lvn_block(run))
            run = []
            body.append(item)
            continue
        run.append(item)
        if item.is_terminator():
            body.extend(_lvn_block(run))
            run = []
    body.extend(_lvn_block(run))
    return Function(fn.name, list(fn.params), fn.ret, body)


# ---------------------------------------------------------------- dead code


def dead_code(fn: Function) -> Function:
    """Drop pure instructions whose result is never read (repeat until nothing changes)."""
    body = list(fn.body)
    # Without liveness a read anywhere keeps a definition; removing one instruction may
    # leave its operands unread, hence the rounds (Bril's tdce.py does the same).
    while True:
        used = {a for item in body if isinstance(item, Instr) for a in item.args}
        keep = [item for item in body
                if not (isinstance(item, Instr) and item.dest is not None
                        and item.op in PURE and item.dest not in used)]
        if len(keep) == len(body):
            return Function(fn.name, list(fn.params), fn.ret, keep)
        body = keep


def on_program(pass_fn: Callable[[Function], Function], program: Program) -> Program:
    """Apply a function pass to every function of a program."""
    return Program({n: pass_fn(f) for n, f in program.functions.items()}, program.structs)
