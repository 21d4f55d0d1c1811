"""A machine-IR simulator: run code before and after register allocation and compare.

A test oracle, kept with the tests (docs/codegen.md, "Executors", says why it is not an
executor of the package): it runs MIR over virtual registers, which no machine can.

It executes the x86-64 subset that instruction selection and the allocator produce, over
*any* registers -- virtual ones (one value each per call, never clobbered) or physical
ones -- stack slots and a heap, so the same function or program can be run before
allocation and after it:

- ``mov`` (registers, immediates, slots, memory), ``lea``, ``add sub imul and or xor``,
  ``shl sar shr``, ``neg not``, ``imul3``, ``imul1`` (rdx:rax), ``xchg``, ``movzx`` (of
  a register or a byte in memory), ``movb`` (a byte store),
  ``setcc``, ``cmp``/``test`` then ``jcc`` (signed, unsigned and sign conditions),
  ``jmp``, ``ret``, ``cqo``/``idiv``
  (a zero divisor ends the run: ``error: division by zero``), ``push`` and ``add/sub rsp``
  for stack arguments; a block that ends without a jump falls through to the next;
- calls: the runtime's ``rt_print_*``, ``rt_new_array``, ``rt_new_bytes``,
  ``rt_new_struct``, ``rt_trap``, ``rt_enter``/``rt_leave``/``rt_throw`` behave as
  docs/codegen.md says; a function of the program (``functions``: symbol -> MFunction)
  runs as a new activation whose prologue saves only its ``used_callee_saved`` registers;
  any other symbol is an opaque function of the registers the call reads, returned in
  ``rax``. Every call clobbers the caller-saved registers with recognisable garbage and
  a throw clobbers every register, so a value wrongly kept in one changes the result.

Without ``rt_enter`` records (hand-written functions), ``rt_throw`` jumps to the block's
``handler`` successor. ``fuel`` bounds the blocks entered plus calls made, so an endless
loop ends (``fuel``) at the same point before and after allocation (spill code adds
instructions, never blocks).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from mir_sim_runtime import RUNTIME

from ssa_course.codegen.mir import (
    Imm,
    LabelRef,
    Mem,
    MFunction,
    MInstr,
    PReg,
    Slot,
    VReg,
)
from ssa_course.codegen.x86_64.registers import ALLOCATABLE, ARG_REGS, CALLEE_SAVED, CALLER_SAVED

MASK = (1 << 64) - 1
RAX, RDX, RDI, RSI, RBP, RSP = (PReg(n) for n in ("rax", "rdx", "rdi", "rsi", "rbp", "rsp"))


def wrap(value: int) -> int:
    """Two's complement 64-bit."""
    value &= MASK
    return value - (1 << 64) if value >> 63 else value


class SimulationError(ValueError):
    """The code does something the simulator cannot run (the message says what)."""


@dataclass(slots=True)
class SimResult:
    """How a run ended (``return``, ``fuel``, ``error: ...``), the printed text, the
    values printed by ``rt_print_int`` and the returned value."""

    status: str
    output: list[int] = field(default_factory=list)
    value: int | None = None
    text: str = ""


_TESTS = {"e": lambda a, b: a == b, "ne": lambda a, b: a != b, "l": lambda a, b: a < b,
          "le": lambda a, b: a <= b, "g": lambda a, b: a > b, "ge": lambda a, b: a >= b,
          "b": lambda a, b: a & MASK < b & MASK, "ae": lambda a, b: a & MASK >= b & MASK,
          "a": lambda a, b: a & MASK > b & MASK, "be": lambda a, b: a & MASK <= b & MASK,
          "s": lambda a, b: wrap(a - b) < 0, "ns": lambda a, b: wrap(a - b) >= 0}
_ARITH = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "imul": lambda a, b: a * b,
          "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
          "shl": lambda a, b: a << (b & 63), "sar": lambda a, b: a >> (b & 63),
          "shr": lambda a, b: (a & MASK) >> (b & 63)}


@dataclass(slots=True)
class _Frame:
    """One activation: where it is, its virtual registers, slots and stack arguments."""

    fn: MFunction
    blocks: dict
    label: str
    index: int = 0
    vregs: dict = field(default_factory=dict)
    slots: dict = field(default_factory=dict)
    stack_args: list = field(default_factory=list)
    pushed: list = field(default_factory=list)
    saved: dict = field(default_factory=dict)  # callee-saved registers its prologue saved
    entry_regs: dict = field(default_factory=dict)  # every callee-saved one, for check_abi
    arrays: dict = field(default_factory=dict)  # slot index -> address of an array in the frame


class _Stop(Exception):
    pass


class Machine:
    """The state of one run; :func:`simulate` and :func:`simulate_program` drive it."""

    def __init__(self, functions: Mapping[str, MFunction] | None = None,
                 trap_sites: Sequence[tuple[int, int]] = (), fuel: int = 1000,
                 depth_limit: int = 1000, check_abi: bool = False):
        self.functions = functions
        self.check_abi = check_abi
        self.trap_sites = list(trap_sites)
        self.fuel = fuel
        self.depth_limit = depth_limit
        self.regs: dict[PReg, int] = {}
        self.heap: dict[int, int] = {}
        self.next_address = 1 << 20
        self.labels: list[str] = []
        self.flags = (0, 0)
        self.calls = 0
        self.frames: list[_Frame] = []
        self.handlers: list[tuple[int, str]] = []  # (frame depth, handler label)
        self.result = SimResult("running")

    # -- operands
    def read(self, o: object) -> int:
        if isinstance(o, Imm):
            return o.value
        if isinstance(o, VReg):
            vregs = self.frames[-1].vregs
            if o not in vregs:
                raise SimulationError(f"{o} read before it was written")
            return vregs[o]
        if isinstance(o, PReg):
            if o not in self.regs:
                raise SimulationError(f"{o} read before it was written")
            return self.regs[o]
        if isinstance(o, Slot):
            slots = self.frames[-1].slots
            if o.index not in slots:
                raise SimulationError(f"{o} read before it was written")
            return slots[o.index]
        if isinstance(o, Mem):
            if o.base == RBP and o.index is None and o.disp >= 16:  # a stack argument
                return self.frames[-1].stack_args[(o.disp - 16) // 8]
            address = self.address(o)
            if address not in self.heap:
                raise SimulationError(f"no memory at {address:#x} ({o})")
            return self.heap[address]
        raise SimulationError(f"cannot read operand {o}")

    def write(self, o: object, value: int) -> None:
        value = wrap(value)
        if isinstance(o, VReg):
            self.frames[-1].vregs[o] = value
        elif isinstance(o, PReg):
            self.regs[o] = value
        elif isinstance(o, Slot):
            self.frames[-1].slots[o.index] = value
        elif isinstance(o, Mem):
            address = self.address(o)
            if address not in self.heap:
                raise SimulationError(f"no memory at {address:#x} ({o})")
            self.heap[address] = value
        else:
            raise SimulationError(f"cannot write operand {o}")

    def read_byte(self, m: Mem) -> int:
        """The byte at ``m`` (the heap keeps qwords, little-endian: the byte's qword)."""
        address = self.address(m)
        cell = address & ~7
        if cell not in self.heap:
            raise SimulationError(f"no memory at {address:#x} ({m})")
        return (self.heap[cell] >> 8 * (address & 7)) & 0xFF

    def write_byte(self, m: Mem, value: int) -> None:
        address = self.address(m)
        cell, shift = address & ~7, 8 * (address & 7)
        if cell not in self.heap:
            raise SimulationError(f"no memory at {address:#x} ({m})")
        word = self.heap[cell] & ~(0xFF << shift) | (value & 0xFF) << shift
        self.heap[cell] = wrap(word)

    def address(self, m: Mem) -> int:
        if m.symbol is not None:
            self.labels.append(m.symbol)
            return len(self.labels) - 1
        base = self.read(m.base) if m.base is not None else 0
        index = self.read(m.index) if m.index is not None else 0
        return wrap(base + index * m.scale + m.disp)

    def clobber(self, names: Sequence[str]) -> None:
        self.calls += 1
        for k, name in enumerate(names):
            self.regs[PReg(name)] = -(7919 * self.calls + k)  # garbage, recognisably

    def allocate(self, words: int) -> int:
        address = self.next_address
        for k in range(words):
            self.heap[address + 8 * k] = 0
        self.next_address += 8 * max(words, 1) + 64
        return address

    def stop(self, status: str) -> None:
        self.result.status = status
        raise _Stop

    # -- running
    def enter(self, fn: MFunction) -> None:
        if not fn.blocks:
            raise SimulationError(f"{fn.name} has no blocks")
        if len(self.frames) >= self.depth_limit:
            self.stop("error: stack overflow")
        frame = _Frame(fn, fn.block_map(), fn.blocks[0].label)
        if self.frames:
            caller = self.frames[-1]
            frame.stack_args = list(reversed(caller.pushed))
        frame.saved = {r: self.regs[PReg(r)] for r in fn.used_callee_saved
                       if PReg(r) in self.regs}
        frame.entry_regs = {r: self.regs.get(PReg(r)) for r in CALLEE_SAVED}
        self.frames.append(frame)

    def run(self) -> SimResult:
        try:
            while True:
                self.step()
        except _Stop:
            return self.result

    def step(self) -> None:
        frame = self.frames[-1]
        block = frame.blocks[frame.label]
        if frame.index == 0:
            self.fuel -= 1
            if self.fuel < 0:
                self.stop("fuel")
        if frame.index >= len(block.instrs):  # fall through
            order = [b.label for b in frame.fn.blocks]
            at = order.index(frame.label)
            if at + 1 == len(order):
                raise SimulationError(f"block {frame.label} falls off the end of "
                                      f"{frame.fn.name}")
            self.goto(order[at + 1])
            return
        instr = block.instrs[frame.index]
        frame.index += 1
        self.execute(instr, block.succs)

    def goto(self, label: str) -> None:
        frame = self.frames[-1]
        if label not in frame.blocks:
            raise SimulationError(f"{frame.fn.name} has no block {label}")
        frame.label, frame.index = label, 0

    def execute(self, instr: MInstr, succs: list[str]) -> None:
        op, ops = instr.op, instr.operands
        if op == "movzx" and isinstance(ops[1], Mem):  # a [bool] element
            self.write(ops[0], self.read_byte(ops[1]))
        elif op == "movb":
            self.write_byte(ops[0], self.read(ops[1]))  # type: ignore[arg-type]  # a Mem
        elif op in ("mov", "movzx"):
            value = self.read(ops[1])
            self.write(ops[0], value & 0xFF if op == "movzx" else value)
        elif op == "lea" and isinstance(ops[1], Slot):  # an array kept in the frame
            frame = self.frames[-1]
            if ops[1].index not in frame.arrays:  # the same bytes each time, as on a stack
                frame.arrays[ops[1].index] = self.allocate(ops[1].index + 1)
            self.write(ops[0], frame.arrays[ops[1].index])
        elif op == "lea":
            self.write(ops[0], self.address(ops[1]))  # type: ignore[arg-type]
        elif op in ("add", "sub") and ops[0] == RSP:
            if op == "add":
                self.frames[-1].pushed.clear()  # the caller pops its stack arguments
        elif op in _ARITH:
            value = wrap(_ARITH[op](self.read(ops[0]), self.read(ops[1])))
            self.write(ops[0], value)
            self.flags = (value, 0)
        elif op == "imul1":  # rdx:rax = rax * operand, signed 128-bit
            product = self.read(RAX) * self.read(ops[0])
            self.regs[RAX] = wrap(product)
            self.regs[RDX] = wrap(product >> 64)
        elif op == "imul3":
            self.write(ops[0], self.read(ops[1]) * self.read(ops[2]))
        elif op in ("neg", "not"):
            value = self.read(ops[0])
            self.write(ops[0], -value if op == "neg" else ~value)
        elif op == "xchg":
            a, b = self.read(ops[0]), self.read(ops[1])
            self.write(ops[0], b)
            self.write(ops[1], a)
        elif op == "cmp":
            self.flags = (self.read(ops[0]), self.read(ops[1]))
        elif op == "test":
            self.flags = (self.read(ops[0]) & self.read(ops[1]), 0)
        elif op in ("jcc", "setcc"):
            if instr.cond not in _TESTS:
                raise SimulationError(f"unknown condition {instr.cond}")
            taken = _TESTS[instr.cond](*self.flags)
            if op == "setcc":
                self.write(ops[0], int(taken))
            elif taken:
                self.goto(_label(ops[0]))
        elif op == "jmp":
            self.goto(_label(ops[0]))
        elif op == "ret":
            self.leave()
        elif op == "push":
            self.frames[-1].pushed.append(self.read(ops[0]))
        elif op == "cqo":
            self.regs[RDX] = -1 if self.read(RAX) < 0 else 0
        elif op == "idiv":
            self.divide(self.read(ops[0]))
        elif op == "call":
            self.call(instr, succs)
        else:
            raise SimulationError(f"the simulator cannot run `{op}`")

    def divide(self, divisor: int) -> None:
        if divisor == 0:
            self.stop("error: division by zero")
        dividend = self.read(RAX)
        quotient = abs(dividend) // abs(divisor)
        if (dividend < 0) != (divisor < 0):
            quotient = -quotient
        self.regs[RAX] = wrap(quotient)
        self.regs[RDX] = wrap(dividend - quotient * divisor)

    def leave(self) -> None:
        frame = self.frames.pop()
        for r, value in frame.saved.items():  # the epilogue restores what it saved
            self.regs[PReg(r)] = value
        if self.check_abi:
            for r, value in frame.entry_regs.items():
                if self.regs.get(PReg(r)) != value:
                    raise SimulationError(f"{frame.fn.name} returns with callee-saved {r} "
                                          "changed")
        if not self.frames:
            self.result.value = self.regs.get(RAX)
            self.stop("return")
        rax = self.regs.get(RAX)
        self.clobber(CALLER_SAVED)  # what the callee did to them is not the caller's
        if rax is not None:
            self.regs[RAX] = rax

    def call(self, instr: MInstr, succs: list[str]) -> None:
        callee = _label(instr.operands[0]) if instr.operands else "?"
        self.fuel -= 1
        if self.fuel < 0:
            self.stop("fuel")
        if self.functions is not None and callee in self.functions:
            self.enter(self.functions[callee])
            return
        runtime = RUNTIME.get(callee)
        if runtime is not None:
            runtime(self, succs)
            return
        args = [self.read(r) for r in instr.uses]
        mixed = len(callee)
        for a in args:
            mixed = wrap(mixed * 1_000_003 + a)
        self.clobber(CALLER_SAVED)
        self.regs[RAX] = mixed

    def print_text(self, text: str) -> None:
        self.result.text += text
        self.clobber(CALLER_SAVED)

    def throw(self, succs: list[str]) -> None:
        value = self.read(RDI)
        if self.handlers:
            depth, label = self.handlers.pop()
            del self.frames[depth + 1:]
        else:
            handler = next((s for s in succs if self.frames[-1].blocks[s].handler), None)
            if handler is None or self.functions is not None:
                self.result.value = value
                self.stop(f"error: uncaught exception {value}")
            label = handler
        self.clobber(ALLOCATABLE)
        self.regs[RAX] = value
        self.goto(label)



def _label(o: object) -> str:
    if not isinstance(o, LabelRef):
        raise SimulationError(f"a jump or call needs a label, not {o}")
    return o.name


def simulate(fn: MFunction, args: Sequence[int] = (), fuel: int = 1000,
             check_abi: bool = False) -> SimResult:
    """Run one function with ``args`` in the argument registers; calls to anything but
    the runtime are opaque (see the module docstring). ``check_abi``: returning with a
    callee-saved register changed is an error (allocated code only)."""
    m = Machine(fuel=fuel, check_abi=check_abi)
    for name, value in zip(ARG_REGS, args, strict=False):
        m.regs[PReg(name)] = wrap(value)
    for name in CALLEE_SAVED:  # the caller's values: the prologue may save them
        m.regs[PReg(name)] = 0
    m.enter(fn)
    return m.run()


def simulate_program(functions: Mapping[str, MFunction], entry: str,
                     args: Sequence[int] = (), trap_sites: Sequence[tuple[int, int]] = (),
                     fuel: int = 100_000, depth_limit: int = 1000,
                     check_abi: bool = False) -> SimResult:
    """Run a whole program: ``functions`` maps call symbols (``tiny_main``) to functions,
    ``entry`` is the symbol to start at."""
    m = Machine(functions, trap_sites, fuel, depth_limit, check_abi)
    for name, value in zip(ARG_REGS, args, strict=False):
        m.regs[PReg(name)] = wrap(value)
    for name in CALLEE_SAVED:
        m.regs[PReg(name)] = 0
    m.enter(functions[entry])
    return m.run()
