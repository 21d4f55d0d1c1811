"""x86-64 as a :class:`ssa_course.codegen.machine.Machine`: the one object the neutral
code generator asks about this CPU (selection, allocation, frames, listing, runtime)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ssa_course.codegen import regalloc, toolchain
from ssa_course.codegen.machine import Machine, SelectTable
from ssa_course.codegen.minstr import fits32
from ssa_course.codegen.mir import (
    Mem,
    MFunction,
    MInstr,
    MProgram,
    PReg,
)
from ssa_course.codegen.patterns import CodegenError
from ssa_course.codegen.target import RegisterFile
from ssa_course.codegen.thread import Shapes
from ssa_course.codegen.x86_64 import emit, frame, peep, spill_all
from ssa_course.codegen.x86_64 import select_effects as x86_effects
from ssa_course.codegen.x86_64.minstr import call, ins
from ssa_course.codegen.x86_64.registers import ALLOCATABLE, ARG_REGS, NEGATE, X86_64
from ssa_course.codegen.x86_64.runtime import program_source
from ssa_course.codegen.x86_64.select import X86State
from ssa_course.codegen.x86_64.select_ops import SELECT

if TYPE_CHECKING:
    from ssa_course.codegen.isel import Selector
    from ssa_course.codegen.quadcfg import QBlock
    from ssa_course.codegen.runtime_abi import RuntimeConfig

# r15 carries the call depth through every function (frame.DEPTH_REG), so the colouring
# allocator never hands it to a value.
COLOURED = tuple(r for r in ALLOCATABLE if r != frame.DEPTH_REG.name)


class X86Machine:
    """System V AMD64: six argument registers, two-address ALU, flags, rbp frames."""

    name = "x86-64"
    floats = True  # SSE2: select_float.py
    arg_regs: tuple[str, ...] = ARG_REGS
    cond_eq = "e"
    # how bools are made and tested here (jump threading, :mod:`ssa_course.codegen.thread`)
    # (the unsigned conditions are a float order's after ucomisd: seta/setae bools are
    # threaded into ja/jae, their negations jbe/jb -- true on NaN, as !(a < b) is)
    bool_shapes = Shapes(zero="e", nonzero="ne", test_op="test", setcc="setcc",
                         widen="movzx", negate_op="xor",
                         negate={**NEGATE, "a": "be", "be": "a", "ae": "b", "b": "ae"},
                         no_flags=frozenset({"mov", "movzx", "lea", "setcc"}),
                         pure=frozenset({"mov", "lea", "movzx", "setcc", "add", "sub", "imul",
                                         "imul3", "and", "or", "xor", "shl", "sar", "shr",
                                         "neg", "not"}))
    effects = x86_effects.EFFECTS
    select_table: SelectTable = SELECT
    select_home = ("native", "ssa_course/codegen/x86_64/select_ops.py")

    def make(self, op: str, *operands: Any, cond: str | None = None,
             defs: tuple[Any, ...] = (), uses: tuple[Any, ...] = (),
             line: int | None = None, comment: str = "") -> MInstr:
        return ins(op, *operands, cond=cond, defs=defs, uses=uses, line=line,
                   comment=comment)

    def make_call(self, symbol: str, nargs: int = 0, line: int | None = None) -> MInstr:
        return call(symbol, nargs, line)

    def immediate(self, value: int) -> bool:
        # ALU instructions take at most a sign-extended 32-bit immediate; only
        # `mov r, imm64` holds 64 bits.
        return fits32(value)

    def wide(self, value: int) -> bool:
        return not fits32(value)

    def fuel_check(self, sel: Selector, steps: int) -> None:
        frame.fuel_check(sel, steps)

    def param_source(self, k: int) -> PReg | Mem:
        # System V: the first six integer arguments in rdi, rsi, rdx, rcx, r8, r9; the rest
        # on the stack, pushed right to left so argument 7 is nearest the return address.
        if k < len(ARG_REGS):
            return PReg(ARG_REGS[k])
        return Mem(PReg("rbp"), disp=16 + 8 * (k - len(ARG_REGS)))  # above ret + rbp

    def function_state(self) -> X86State:
        return X86State()

    def start_block(self, sel: Selector, qb: QBlock) -> None:
        return None

    def register_file(self, fuel: bool) -> RegisterFile:
        return X86_64

    def allocators(self) -> tuple[str, ...]:
        # graph colouring, and the baseline that keeps every value in a stack slot
        # (correct by construction, and the measure of what colouring saves)
        return ("color", "spill-all")

    def allocate(self, fn: MFunction, allocator: str, fuel: bool) -> object:
        if allocator not in self.allocators():
            raise CodegenError(f"unknown register allocator {allocator!r} (expected one of "
                               f"{', '.join(self.allocators())})")
        if allocator == "color":
            return regalloc.allocate(fn, COLOURED, X86_64)
        return spill_all.allocate(fn)

    def peephole(self, fn: MFunction) -> int:
        return peep.peephole(fn)

    def layout_frame(self, fn: MFunction) -> None:
        frame.layout(fn)

    def program_text(self, mprog: MProgram, lines: list[str] | None) -> str:
        return emit.program_text(mprog, lines)

    def instr_text(self, fn: MFunction, instr: MInstr) -> str:
        return emit.instr_text(fn, instr)

    def runtime_source(self, program_asm: str, config: RuntimeConfig) -> str:
        return program_source(program_asm, config)

    def assembler_checks(self) -> dict[str, Callable[[], str | None]]:
        return {"gnu": toolchain.gnu_missing, "keystone": toolchain.keystone_missing,
                "own": toolchain.own_missing}


# Typed as the protocol: mypy checks here that x86-64 implements all of it.
X86_64_MACHINE: Machine = X86Machine()
