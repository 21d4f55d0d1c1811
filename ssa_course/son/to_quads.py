"""Scheduled graphs back to quads: SSA form first, then out of SSA (lesson 08).

After :func:`~ssa_course.son.gcm.schedule` every node has a block and a place in it, so
writing quads is a walk over the blocks: a Phi becomes a ``phi`` instruction (memory
Phis disappear: memory is implicit in quads), every other value node the instruction of
the same meaning, each block's end a ``br``, ``jmp``, ``call``, ``ret`` or ``throw``.

* An explicit check's ``Trap`` becomes the operation that fails in the same way (``div``
  by zero, ``aload`` out of bounds, ``newarr`` of a negative length) at the position the
  error message names; a test for an unset slot is the ``aload`` itself.
* A call inside ``try`` is wrapped in ``enter``/``leave``; its handler block starts with
  ``catch`` and jumps to where the graph's exceptional control goes.

The SSA result is checked by lesson 03's verifier and turned into ordinary quads by its
out-of-SSA pass (critical edges split, parallel copies sequentialized), so it runs on the
quads interpreter, becomes Julia-style IRCode, and prints as Bril.
"""

from __future__ import annotations

from typing import Any

from ssa_course import opcodes
from ssa_course.errors import Pos
from ssa_course.floats import FLOAT_TO_INT_TRAP, TWO_63
from ssa_course.quads.ir import (
    NEVER_RETURNS,
    UNDEFINED,
    Function,
    Instr,
    Item,
    Label,
    Program,
    never_returns,
    returns_somewhere,
)
from ssa_course.quads.memory import CHAR, PtrType
from ssa_course.runtime import ARRAY_LENGTH_TRAP, paused_gc
from ssa_course.son.bril_memory import BrilEffect, BrilPure, BrilValue
from ssa_course.son.cfg_blocks import Block
from ssa_course.son.control import Call, If, Phi, Proj, Return, Start, Throw, Trap
from ssa_course.son.data import (
    Add,
    Compare,
    Constant,
    Logic,
    Mul,
    Neg,
    Not,
    Operator,
    Sub,
    Undefined,
    constant_value,
)
from ssa_course.son.gcm import Schedule, schedule
from ssa_course.son.graph import Node
from ssa_course.son.memory import (
    InBounds,
    IsSet,
    KeepNew,
    Len,
    Load,
    LoadField,
    NewArray,
    NewStruct,
    Print,
    Store,
    StoreField,
)
from ssa_course.son.program import SeaOfNodes
from ssa_course.son.types import BoolType, FloatType, IntType, Type
from ssa_course.tiny import types as tt

_KINDS = {opcodes.INT: tt.INT, opcodes.BOOL: tt.BOOL, opcodes.FLOAT: tt.FLOAT}


UNDEFINED_PREFIX = "undefined variable '"  # the Trap of a ``checkdef`` (son/from_ssa.py)


def _row_trapping_with(message: str) -> opcodes.Opcode | None:
    """The first Bril row of the opcode table that fails with ``message`` when its divisor
    is zero (``div`` for ``division by zero``), or None."""
    for row in opcodes.all_opcodes():
        if row.bril and row.divisor is not None and row.trap == message \
                and row.operands == opcodes.INT:
            return row
    return None


def _row_of(n: Node | None) -> opcodes.Opcode | None:
    """The opcode table's row a node computes (operator nodes name theirs), or None."""
    name = getattr(n, "opcode", None)
    return opcodes.get(name) if isinstance(name, str) else None


def tiny_type(t: Type, fallback: tt.Type = tt.INT) -> tt.Type:
    """The Tiny type of a lattice type (references carry their Tiny type's name)."""
    if isinstance(t, IntType):
        return tt.INT
    if isinstance(t, BoolType):
        return tt.BOOL
    if isinstance(t, FloatType):
        return tt.FLOAT
    if t.kind.startswith("ref "):
        return parse_type(t.kind[4:])
    return fallback


def parse_type(text: str) -> tt.Type:
    if text.startswith("["):
        return tt.ArrayType(parse_type(text[1:-1]))
    if text.startswith("ptr<"):  # Bril's memory extension
        return PtrType(parse_type(text[4:-1]))
    if text == "char":
        return CHAR
    return {"int": tt.INT, "bool": tt.BOOL, "float": tt.FLOAT}.get(text) \
        or tt.StructType(text)


def _free_prefix(kept: set[str]) -> str:
    """The prefix of the names made from node ids (``v12``, ``v12_r``, ``v12_probe``): ``v``
    unless a name the function keeps (a parameter, an unassigned variable's) is spelled like
    one of them -- ``coalesce`` can leave a parameter called ``v6`` -- then ``vv``, ``vvv``..."""
    prefix = "v"
    while any(name.startswith(prefix) and name[len(prefix):len(prefix) + 1].isdigit()
              for name in kept):
        prefix += "v"
    return prefix


class _Writer:
    def __init__(self, sched: Schedule, returns: dict[str, tt.Type | None]):
        self.s = sched
        self.returns = returns  # function name -> what it returns (None: nothing)
        self.fg = sched.fg
        self.lines = sched.fg.graph.lines  # the source line of each node (listings)
        self.line = 0
        self.body: list[Item] = []
        # Node id -> the quad variable that holds its value: one name per node (SSA), so a
        # value used in many places is computed once, where GCM put it.
        self.names: dict[int, str] = {}
        self.trap_pos: dict[int, Pos | None] = {}  # guarded op -> where its check reports
        self.probes: dict[int, tuple[Node, Node, Instr]] = {}  # If id -> its probe
        self.block_at = {b.head.id: b for b in sched.blocks.values()}
        for i, (name, _) in enumerate(self.fg.params):
            parm = next((u for u in self.fg.start.outputs
                         if isinstance(u, Proj) and u.index == 2 + i), None)
            if parm is not None:
                self.names[parm.id] = name
        self._name_phis()

    def _name_phis(self) -> None:
        """A phi is named after its source variable (``i.12`` for a phi of ``i``), so
        the printed code is easier to read and copy coalescing knows which names the
        source kept in one variable."""
        # every parameter's name, used or not (a Parm nothing reads has no node)
        taken = {name for name, _ in self.fg.params}
        phis = []
        for block in self.s.order():
            for n in block.nodes:
                if isinstance(n, Undefined):
                    taken.add(n.name)
                elif isinstance(n, Phi):
                    phis.append(n)
                    taken.update(x.name for x in n.inputs if isinstance(x, Undefined))
        self.prefix = _free_prefix(taken)
        for phi in phis:
            var = phi.var_name
            name = f"{var}.{phi.id}"
            if var and not var.startswith("$") and name not in taken:
                self.names[phi.id] = name
                taken.add(name)

    def name(self, n: Node) -> str:
        if isinstance(n, Undefined):
            return n.name  # read only where the program reads an unassigned variable
        return self.names.get(n.id) or f"{self.prefix}{n.id}"

    def label(self, control: Node) -> str:
        return self.s.block_of_control(control)

    def emit(self, instr: Instr) -> None:
        if instr.line is None and self.line:
            instr.line = self.line
        self.body.append(instr)

    def write(self) -> Function:
        ret = self.fg.returns
        # The checks not written out as tests: the quad they guard fails by itself in the
        # same way (and a test for an unset slot is the aload itself).
        self.implied = {b.end.id for b in self.s.order() if isinstance(b.end, If) and (
            isinstance(b.end.inputs[1], IsSet) or self.check_is_implied(b.end))}
        unused = self._only_for_implied_checks()
        for block in self.s.order():
            self.body.append(Label(block.name))
            head = block.head
            # A handler block (a call's exceptional side) first reads the thrown value.
            if isinstance(head, Proj) and head.index == 3 and isinstance(head.inputs[0], Call):
                thrown = next((u for u in head.inputs[0].outputs
                               if isinstance(u, Proj) and u.index == 4), None)
                if thrown is not None:
                    self.emit(Instr("catch", self.name(thrown), tt.INT))
            for n in block.nodes:
                if n.id not in unused:
                    self.node(n)
            self.end(block, ret)
        if ret is not None and not returns_somewhere(self.body):
            # Every path runs into a loop that never ends (its exits are Never nodes, which
            # write nothing): a block no jump reaches holds the ``ret`` Bril wants.
            self.body.append(Label(NEVER_RETURNS))
            self.body.extend(never_returns())
        params = [(name, t) for name, t in self.fg.params]
        return Function(self.fg.name, params, ret, self.body)

    def _only_for_implied_checks(self) -> set[int]:
        """Pure nodes whose every use is a check that is not written out (its test is
        the guarded quad itself), or another such node: the bounds test and the length
        it reads are not written either."""
        pure = (Constant, Add, Sub, Mul, Neg, Compare, Not, Logic, InBounds, Len, IsSet)
        probed = {x.id for a, b, _ in self.probes.values() for x in (a, b)}
        candidates = {n.id: n for b in self.s.order() for n in b.nodes
                      if (isinstance(n, pure)
                          or (isinstance(n, Operator) and not n.row.may_trap))
                      and n.id not in probed}
        # A worklist, not repeated sweeps (a chain of k such nodes would take k sweeps):
        # ``waiting`` counts a candidate's uses that are neither an implied check nor
        # unused yet; it goes when the count reaches zero.
        waiting = {i: sum(1 for u in n.outputs if u.id not in self.implied)
                   for i, n in candidates.items()}
        work = [i for i, count in waiting.items() if count == 0]
        unused: set[int] = set()
        while work:
            i = work.pop()
            unused.add(i)
            for x in candidates[i].inputs:
                if x is not None and x.id in waiting and x.id not in unused:
                    waiting[x.id] -= 1
                    if waiting[x.id] == 0:
                        work.append(x.id)
        return unused

    # -- nodes ----------------------------------------------------------------------

    def node(self, n: Node) -> None:
        self.line = self.lines.get(n.id, 0)
        d = self.name(n)
        t = tiny_type(n.type)
        a = [self.name(x) for x in n.inputs[1:] if x is not None]
        if isinstance(n, Phi):
            # Memory is implicit in quads: the order of the instructions is the memory order.
            if n.type.kind == "mem" or n.declared.kind == "mem":
                return
            region = n.operand(0)
            args, labels = [], []
            for i in range(1, len(region.inputs)):
                path = region.inputs[i]
                # A path that is gone has no predecessor block: its phi argument goes with it.
                if path is None:
                    continue
                v = n.inputs[i]
                args.append(UNDEFINED if v is None or isinstance(v, Undefined)
                            else self.name(v))
                labels.append(self.label(path))
            self.emit(Instr("phi", d, tiny_type(n.type, tiny_type(n.declared)), args, [],
                            labels))
        elif isinstance(n, Constant):
            self.emit(Instr("const", d, t, value=constant_value(n.value)))
        # Any operator of the opcode table: one function writes them all (operator below).
        elif (row := _row_of(n)) is not None:
            self.operator(n, row, d, a)
        # Written out only where no guarded quad stands in for it: ``0 <= i and i < n``.
        elif isinstance(n, InBounds):
            self.emit(Instr("const", d + "_z", tt.INT, value=0))
            self.emit(Instr("ge", d + "_lo", tt.BOOL, [a[0], d + "_z"]))
            self.emit(Instr("lt", d + "_hi", tt.BOOL, [a[0], a[1]]))
            self.emit(Instr("and", d, tt.BOOL, [d + "_lo", d + "_hi"]))
        elif isinstance(n, IsSet):
            self.emit(Instr("const", d, tt.BOOL, value=True))  # the aload checked it
        elif isinstance(n, Len):
            self.emit(Instr("alen", d, tt.INT, a[:1]))
        elif isinstance(n, Load):
            self.emit(Instr("aload", d, tiny_type(n.value_type), a[1:3],
                            pos=self.trap_pos.get(n.id, n.pos),
                            in_bounds=self._in_bounds(n)))
        elif isinstance(n, Store):
            self.emit(Instr("astore", None, None, a[1:4], pos=self.trap_pos.get(n.id),
                            in_bounds=self._in_bounds(n)))
        elif isinstance(n, LoadField):
            self.emit(Instr("getf", d, tiny_type(n.value_type), a[1:2], field=n.field))
        elif isinstance(n, StoreField):
            self.emit(Instr("setf", None, None, a[1:3], field=n.field))
        elif isinstance(n, NewArray):
            self.emit(Instr("newarr", d, tiny_type(n.ref_type), a[:1],
                            pos=self.trap_pos.get(n.id, n.pos)))
        elif isinstance(n, NewStruct):
            self.emit(Instr("newstruct", d, tiny_type(n.ref_type), a))
        elif isinstance(n, Print):
            self.emit(Instr("print", None, None, a[1:]))
        elif isinstance(n, BrilPure):
            if n.op == "const":
                self.emit(Instr("const", d, t, value=n.value))
            else:
                self.emit(Instr(n.op, d, t, a))
        elif isinstance(n, BrilValue):
            self.emit(Instr(n.op, d, t, a[1:], pos=n.pos))
        elif isinstance(n, BrilEffect):
            if n.op != "keep":  # (keep only orders the memory chain)
                self.emit(Instr(n.op, None, None, a[1:], pos=n.pos))
        elif isinstance(n, (Proj, Start, Undefined, KeepNew)):
            # parameters, call results, memory: named where they are made; KeepNew only
            # keeps its ``newarr`` (which charges the run's total) alive and in order
            pass
        else:
            raise TypeError(f"no quads for {n!r}")

    # -- block ends -----------------------------------------------------------------

    def end(self, block: Block, ret: tt.Type | None) -> None:
        end = block.end
        self.line = self.lines.get(end.id, 0) if end is not None else 0
        if end is None:
            if block.falls_into is not None:
                # A block that falls into a merge: an explicit jump to it (the block order need not
                # put the merge next).
                self.emit(Instr("jmp", labels=[self.label(block.falls_into)]))
            else:
                self.emit(Instr("ret"))
            return
        if isinstance(end, If) and len(block.succs) == 1:
            # one projection left (the other side was proven dead, or both sides of a
            # quads ``br`` named one block): the branch goes one way
            self.emit(Instr("jmp", labels=[block.succs[0]]))
        elif isinstance(end, If):
            t, f = block.succs
            # The test is not written: its block goes straight on, and the guarded quad (or a
            # probe standing in for it) fails where the check would have.
            if end.id in self.implied:
                if end.id in self.probes:
                    a, b, probe = self.probes[end.id]
                    probe.args = [self.name(a), self.name(b)]
                    self.emit(probe)
                self.emit(Instr("jmp", labels=[t]))  # the guarded quad fails by itself
            else:
                self.emit(Instr("br", None, None, [self.name(end.operand(1))], [], [t, f]))
        elif isinstance(end, Call):
            self.call(block, end)
        elif isinstance(end, Return):
            value = end.inputs[2]
            if value is None and ret is not None:
                # Falling off the end of a function with a result: the front end proved
                # this path never runs (``while (true)``), though the graph -- peepholes
                # off -- still has it.
                self.unreachable_end(f"{self.prefix}{end.id}", ret)
            else:
                self.emit(Instr("ret", args=[self.name(value)] if value is not None else []))
        elif isinstance(end, Throw):
            self.emit(Instr("throw", args=[self.name(end.operand(2))]))
        elif isinstance(end, Trap):
            self.trap(end, ret)

    def operator(self, n: Node, row: opcodes.Opcode, d: str, a: list[str]) -> None:
        """A row of the opcode table: one quad, or two for Tiny's operators Bril lacks."""
        if row.name == "neg":  # 0 - x
            self.emit(Instr("const", d + "_z", tt.INT, value=0))
            self.emit(Instr("sub", d, tt.INT, [d + "_z", a[0]]))
        elif row.name in ("ne", "fne"):  # not (eq a b), not (feq a b)
            self.emit(Instr("eq" if row.name == "ne" else "feq", d + "_e", tt.BOOL, a[:2]))
            self.emit(Instr("not", d, tt.BOOL, [d + "_e"]))
        elif row.name == "fneg":  # x * -1.0 (0.0 - x is 0.0 for x = 0.0, not -0.0)
            self.emit(Instr("const", d + "_m", tt.FLOAT, value=-1.0))
            self.emit(Instr("fmul", d, tt.FLOAT, [a[0], d + "_m"]))
        else:
            self.emit(Instr(row.name, d, _KINDS[row.result], a[:row.arity],
                            pos=self.trap_pos.get(n.id)))

    def _in_bounds(self, access: Node) -> bool:
        """Proven in bounds by lesson 09 -- unless the access stands in for a check that
        stays (it took that check's position: it must keep testing)."""
        return access.id in self.fg.graph.in_bounds and access.id not in self.trap_pos

    def check_is_implied(self, iff: If) -> bool:
        """True when this If is a check whose failing side is a Trap that the guarded
        operation itself raises in quads (``div`` by zero, ``aload``/``astore`` out of
        bounds, ``newarr`` of a negative length): then the test is not written out, and
        the operation reports the error at the check's position."""
        projs = {u.index: u for u in iff.outputs if isinstance(u, Proj)}
        ok, bad = self.block_at.get(projs.get(0, iff).id), self.block_at.get(
            projs.get(1, iff).id)
        if ok is None or bad is None or not isinstance(bad.end, Trap):
            return False
        # Something runs on the failing side before the trap (a print): the test must stay.
        if any(n.is_pinned() for n in bad.nodes):
            return False
        trap, pred = bad.end, iff.operand(1)
        # The guarded operation is the first pinned node on the passing side, hanging right
        # on the check's projection; anything else in between would run before the failure
        # (a KeepNew runs nothing: it only keeps its allocation).
        first = next((n for n in ok.nodes if n.is_pinned() and not isinstance(n, KeepNew)),
                     None)
        if first is not None and first.inputs[0] is not projs[0]:
            first = None
        row = _row_of(first)
        if row is not None and row.divisor is not None and trap.message == row.trap:
            # a division-like operator fails by itself when its divisor is zero
            hit = isinstance(pred, Compare) and pred.op == "!=" and first is not None \
                and first.inputs[1 + row.divisor] is pred.inputs[1]
        elif trap.message == "index out of bounds":
            hit = isinstance(first, (Load, Store)) and isinstance(pred, InBounds) \
                and first.inputs[3] is pred.inputs[1] \
                and _is_length_of(pred.operand(2), first.operand(2))
            if hit and isinstance(first, Load):
                # One aload reports both of its errors at one position: when the slot
                # test names another place (the bounds test was shared with an earlier
                # access by GVN), the bounds test is written out and the aload keeps the
                # position of its own slot test.
                unset = _unset_pos(first)
                if unset is not None and unset != trap.pos:
                    self.trap_pos[first.id] = unset
                    hit = False
        elif trap.message == ARRAY_LENGTH_TRAP:
            hit = isinstance(first, NewArray) and isinstance(pred, InBounds) \
                and first.inputs[1] is pred.inputs[1]
        else:
            hit = False
        if hit and first is not None:  # (a hit is a test of ``first``)
            self.trap_pos[first.id] = trap.pos
            return True
        # No guarded quad to stand in (its result was never used, so it is gone): a probe.
        probe = self._probe(pred, trap, f"{self.prefix}{iff.id}_probe")
        if probe is not None:
            self.probes[iff.id] = probe
        return probe is not None

    def _probe(self, pred: Node, trap: Trap, name: str) -> tuple[Node, Node, Instr] | None:
        """A check whose guarded operation is gone (its result was never used) still has
        to fail when the operation would have: one quad that fails in the same way, and
        does nothing otherwise, replaces the whole test -- ``div x x`` for a divisor
        ``x``, ``aload a i`` for an index into an array of ints or bools (whose slots are
        never unset). Returns the two nodes it reads and the quad (names filled in later)."""
        if trap.message == "division by zero" and isinstance(pred, Compare) \
                and pred.op == "!=" and isinstance(pred.inputs[2], Constant) \
                and constant_value(pred.inputs[2].value) == 0:
            x = pred.operand(1)
            return x, x, Instr("div", name, tt.INT, pos=trap.pos)
        if trap.message == "index out of bounds" and isinstance(pred, InBounds) \
                and len(trap.inputs) == 4 and trap.inputs[3] is pred.inputs[1] \
                and _is_length_of(pred.operand(2), trap.operand(2)):
            array, index = trap.operand(2), pred.operand(1)
            t = tiny_type(array.type, tt.INT)
            if isinstance(t, tt.ArrayType) and t.elem in (tt.INT, tt.BOOL):
                return array, index, Instr("aload", name, t.elem, pos=trap.pos)
        return None

    def call(self, block: Block, call: Call) -> None:
        projs = {u.index: u for u in call.outputs if isinstance(u, Proj)}
        ret = self.returns.get(call.fn)
        if 2 in projs:
            dest, t = self.name(projs[2]), tiny_type(projs[2].type, ret or tt.INT)
        elif ret is not None:  # an unused result still needs a name: Bril insists
            dest, t = f"{self.prefix}{call.id}_unused", ret
        else:
            dest, t = None, None
        args = [self.name(call.operand(i)) for i in range(2, len(call.inputs))]
        instr = Instr("call", dest, t, args, [call.fn])
        normal = self.label(projs[0])
        # Bril's try regions are lexical (enter ... leave): one around the single call gives it
        # exactly the graph's exceptional edge.
        if 3 in projs:  # inside try: a handler around just this call
            inner = f"{block.name}_call"
            self.emit(Instr("enter", labels=[inner, self.label(projs[3])]))
            self.body.append(Label(inner))
            self.emit(instr)
            self.emit(Instr("leave"))
        else:
            self.emit(instr)
        self.emit(Instr("jmp", labels=[normal]))

    def trap(self, trap: Trap, ret: tt.Type | None) -> None:
        d = f"{self.prefix}{trap.id}"
        w = [self.name(trap.operand(i)) for i in range(2, len(trap.inputs))]
        # A Trap is written as the quad that fails with the same message, so every executor
        # reports the error its own way, at the same position.
        row = _row_trapping_with(trap.message)
        if row is not None:  # div (or any division-like row) with every operand zero
            self.emit(Instr("const", d + "_z", _KINDS[row.operands], value=0))
            self.emit(Instr(row.name, d, _KINDS[row.result], [d + "_z"] * row.arity,
                            pos=trap.pos))
        elif trap.message == FLOAT_TO_INT_TRAP:  # int(x) of a float out of range
            self.emit(Instr("const", d + "_f", tt.FLOAT, value=TWO_63))
            self.emit(Instr("ftoi", d, tt.INT, [d + "_f"], pos=trap.pos))
        elif trap.message.startswith(UNDEFINED_PREFIX):  # a Bril read with no value
            self.emit(Instr("const", d + "_f", tt.BOOL, value=False))
            self.emit(Instr("checkdef", args=[d + "_f"],
                            field=trap.message[len(UNDEFINED_PREFIX):-1]))
        elif trap.message == ARRAY_LENGTH_TRAP:  # newarr reports which end failed
            self.emit(Instr("newarr", d, tt.ArrayType(tt.INT), w[:1], pos=trap.pos))
        else:  # out of bounds, unset slot: the load fails the same way
            elem: tt.Type = tt.INT
            base = trap.operand(2)
            # a Phi's type may still be TOP in a raw graph (peepholes off): its declared
            # type says what it holds (fuzz seed 5003, opt -p parse-raw)
            for ty in (base.type, base.declared if isinstance(base, Phi) else None):
                if ty is not None and ty.kind.startswith("ref ["):
                    array_type = parse_type(ty.kind[4:])
                    assert isinstance(array_type, tt.ArrayType)  # its text starts with [
                    elem = array_type.elem
                    break
            self.emit(Instr("aload", d, elem, w[:2], pos=trap.pos))
        self.unreachable_end(d, ret)  # never reached: the instruction above stops

    def unreachable_end(self, d: str, ret: tt.Type | None) -> None:
        """End a block control never reaches the way the function's type demands, so
        the quads verifier (and Bril's type rules) accept it: a value of the result type,
        or -- when no constant of that type exists (arrays, structs) -- a throw, which
        Tiny's rules accept in place of a ret (a function may end only in throws)."""
        if ret is None:
            self.emit(Instr("ret"))
            return
        zero = {tt.INT: 0, tt.BOOL: False}.get(ret)
        if zero is not None:
            self.emit(Instr("const", d + "_r", ret, value=zero))
            self.emit(Instr("ret", args=[d + "_r"]))
            return
        self.emit(Instr("const", d + "_r", tt.INT, value=0))
        self.emit(Instr("throw", args=[d + "_r"]))


def _unset_pos(load: Node) -> Pos | None:
    """Where the test for an unset slot read by ``load`` reports its error, if it has one."""
    for use in load.outputs:
        if isinstance(use, IsSet):
            for iff in use.outputs:
                if isinstance(iff, If):
                    for proj in iff.outputs:  # the failing side: projection 1
                        if isinstance(proj, Proj) and proj.index == 1:
                            for end in proj.outputs:
                                if isinstance(end, Trap):
                                    return end.pos
    return None


def _is_length_of(length: Node, array: Node) -> bool:
    """Is ``length`` the length of ``array``: its ``Len``, or the constant it was
    allocated with (the peepholes fold ``len`` of a fresh array into its size)?"""
    if isinstance(length, Len):
        return length.inputs[1] is array
    if isinstance(array, NewArray):
        size = array.inputs[1]
        return size is length or (isinstance(size, Constant) and isinstance(length, Constant)
                                  and size.value == length.value)
    return False


def scheduled_ssa(program: SeaOfNodes, structs: dict[Any, Any] | None = None
                  ) -> tuple[Program, dict[str, Schedule]]:
    """Schedule every function and write it as SSA quads (phis at block tops)."""
    with paused_gc():  # a big live graph and the quads made from it: nothing is garbage
        schedules = {name: schedule(fg) for name, fg in program.functions.items()}
        returns = {name: fg.returns for name, fg in program.functions.items()}
        functions = {name: _Writer(s, returns).write() for name, s in schedules.items()}
    return Program(functions, structs or {}), schedules
