"""A small machine-IR simulator: run a function before and after register allocation.

It executes a subset of x86-64 over *any* registers -- virtual ones (one value each, never
clobbered) or physical ones -- and stack slots, so the same function can be run before
allocation and after it and the two runs compared:

- ``mov`` between registers, immediates and slots; ``add sub imul and or xor`` (two
  operands, the first is read and written), ``neg``, ``xchg``;
- ``cmp``/``test`` then ``jcc`` (signed conditions ``e ne l le g ge``), ``jmp``, ``ret``
  (the result is ``rax``); a block that ends without a jump falls through to the next;
- ``cqo`` and ``idiv`` (rax, rdx) with truncating division; a zero divisor ends the run
  with ``trap: division by zero``;
- ``call``: ``rt_print_int`` appends ``rdi`` to the output; ``rt_throw`` clobbers every
  allocatable register, puts ``rdi`` in ``rax`` and jumps to the block's ``handler``
  successor; any other symbol is an opaque function of the registers the call reads
  (its ``uses``), returned in ``rax``. Every call clobbers the caller-saved registers with
  recognisable garbage, so a value wrongly kept in one of them changes the result.

``fuel`` bounds the number of blocks entered, so an endless loop ends (``fuel``) at the same
point before and after allocation (spill code adds instructions, never blocks).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ssa_course.codegen.mir import (
    ALLOCATABLE,
    ARG_REGS,
    CALLER_SAVED,
    Imm,
    LabelRef,
    MFunction,
    MInstr,
    PReg,
    Slot,
    VReg,
)

MASK = (1 << 64) - 1


def wrap(value: int) -> int:
    """Two's complement 64-bit."""
    value &= MASK
    return value - (1 << 64) if value >> 63 else value


class SimulationError(ValueError):
    """The function does something the simulator cannot run (the message says what)."""


@dataclass(slots=True)
class SimResult:
    """How a run ended (``return``, ``fuel``, ``trap: ...``, ``uncaught``), the printed
    values and the returned value."""

    status: str
    output: list[int] = field(default_factory=list)
    value: int | None = None


_TESTS = {"e": lambda a, b: a == b, "ne": lambda a, b: a != b, "l": lambda a, b: a < b,
          "le": lambda a, b: a <= b, "g": lambda a, b: a > b, "ge": lambda a, b: a >= b}
_ARITH = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "imul": lambda a, b: a * b,
          "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b}


class _Machine:
    def __init__(self, fn: MFunction):
        self.fn = fn
        self.regs: dict[object, int] = {}
        self.slots: dict[int, int] = {}
        self.flags: tuple[int, int] = (0, 0)
        self.calls = 0

    def read(self, o: object) -> int:
        if isinstance(o, Imm):
            return o.value
        if isinstance(o, Slot):
            if o.index not in self.slots:
                raise SimulationError(f"{o} read before it was written")
            return self.slots[o.index]
        if isinstance(o, VReg | PReg):
            if o not in self.regs:
                raise SimulationError(f"{o} read before it was written")
            return self.regs[o]
        raise SimulationError(f"cannot read operand {o}")

    def write(self, o: object, value: int) -> None:
        if isinstance(o, Slot):
            self.slots[o.index] = wrap(value)
        elif isinstance(o, VReg | PReg):
            self.regs[o] = wrap(value)
        else:
            raise SimulationError(f"cannot write operand {o}")

    def clobber(self, names: Sequence[str]) -> None:
        self.calls += 1
        for k, name in enumerate(names):
            self.regs[PReg(name)] = -(7919 * self.calls + k)  # garbage, recognisably


def simulate(fn: MFunction, args: Sequence[int] = (), fuel: int = 1000) -> SimResult:
    """Run ``fn`` with ``args`` in the argument registers (see the module docstring)."""
    m = _Machine(fn)
    for name, value in zip(ARG_REGS, args, strict=False):
        m.regs[PReg(name)] = wrap(value)
    if not fn.blocks:
        raise SimulationError(f"{fn.name} has no blocks")
    blocks = fn.block_map()
    order = [b.label for b in fn.blocks]
    result = SimResult("running")
    label = fn.blocks[0].label
    while True:
        if fuel <= 0:
            result.status = "fuel"
            return result
        fuel -= 1
        block = blocks[label]
        for instr in block.instrs:
            jump = _step(m, instr, block.succs, blocks, result)
            if result.status != "running":
                return result
            if jump is not None:
                label = jump
                break
        else:
            at = order.index(block.label)
            if at + 1 == len(order):
                raise SimulationError(f"block {block.label} falls off the end of {fn.name}")
            label = order[at + 1]


def _step(m: _Machine, instr: MInstr, succs: list[str], blocks: dict, result: SimResult
          ) -> str | None:
    """Execute one instruction; return the label to jump to, if it jumps."""
    op, ops = instr.op, instr.operands
    if op == "mov":
        m.write(ops[0], m.read(ops[1]))
    elif op in _ARITH:
        m.write(ops[0], _ARITH[op](m.read(ops[0]), m.read(ops[1])))
    elif op == "neg":
        m.write(ops[0], -m.read(ops[0]))
    elif op == "xchg":
        a, b = m.read(ops[0]), m.read(ops[1])
        m.write(ops[0], b)
        m.write(ops[1], a)
    elif op == "cmp":
        m.flags = (m.read(ops[0]), m.read(ops[1]))
    elif op == "test":
        m.flags = (m.read(ops[0]) & m.read(ops[1]), 0)
    elif op == "jcc":
        if instr.cond not in _TESTS:
            raise SimulationError(f"unknown condition {instr.cond}")
        if _TESTS[instr.cond](*m.flags):
            return _target(ops[0])
    elif op == "jmp":
        return _target(ops[0])
    elif op == "ret":
        result.value = m.read(PReg("rax"))
        result.status = "return"
    elif op == "cqo":
        m.regs[PReg("rdx")] = -1 if m.read(PReg("rax")) < 0 else 0
    elif op == "idiv":
        divisor = m.read(ops[0])
        if divisor == 0:
            result.status = "trap: division by zero"
            return None
        dividend = m.read(PReg("rax"))
        quotient = abs(dividend) // abs(divisor) * (1 if (dividend < 0) == (divisor < 0) else -1)
        m.regs[PReg("rax")] = wrap(quotient)
        m.regs[PReg("rdx")] = wrap(dividend - quotient * divisor)
    elif op == "call":
        return _call(m, instr, succs, blocks, result)
    else:
        raise SimulationError(f"the simulator cannot run `{op}`")
    return None


def _target(o: object) -> str:
    if not isinstance(o, LabelRef):
        raise SimulationError(f"a jump needs a label, not {o}")
    return o.name


def _call(m: _Machine, instr: MInstr, succs: list[str], blocks: dict, result: SimResult
          ) -> str | None:
    callee = instr.operands[0].name if instr.operands and isinstance(
        instr.operands[0], LabelRef) else "?"
    if callee == "rt_throw":
        value = m.read(PReg("rdi"))
        m.clobber(ALLOCATABLE)
        m.regs[PReg("rax")] = value
        handler = next((s for s in succs if blocks[s].handler), None)
        if handler is None:
            result.status = "uncaught"
            result.value = value
        return handler
    args = [m.read(r) for r in instr.uses]
    if callee == "rt_print_int":
        result.output.append(args[0] if args else 0)
        m.clobber(CALLER_SAVED)
        return None
    mixed = len(callee)
    for a in args:
        mixed = wrap(mixed * 1_000_003 + a)
    m.clobber(CALLER_SAVED)
    m.regs[PReg("rax")] = mixed
    return None
