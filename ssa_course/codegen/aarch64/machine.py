"""AArch64 as a :class:`ssa_course.codegen.machine.Machine`: the one object the neutral
code generator asks about this CPU (selection, allocation, frames, listing, runtime)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ssa_course.codegen import regalloc, toolchain
from ssa_course.codegen.aarch64 import emit, frame, minstr, peep, select_effects, select_ops
from ssa_course.codegen.aarch64 import toolchain as a64_toolchain
from ssa_course.codegen.aarch64.frame import Incoming
from ssa_course.codegen.aarch64.registers import (
    AARCH64,
    AARCH64_UNFUELLED,
    ARG_REGS,
    FUEL_REG,
    NEGATE,
)
from ssa_course.codegen.aarch64.runtime import program_source
from ssa_course.codegen.aarch64.select import A64State, a64_state
from ssa_course.codegen.machine import Machine, SelectTable
from ssa_course.codegen.minstr import fits32
from ssa_course.codegen.mir import Imm, LabelRef, MFunction, MInstr, MProgram, PReg
from ssa_course.codegen.patterns import CodegenError
from ssa_course.codegen.target import RegisterFile
from ssa_course.codegen.thread import Shapes

if TYPE_CHECKING:
    from ssa_course.codegen.isel import Selector
    from ssa_course.codegen.quadcfg import QBlock
    from ssa_course.codegen.runtime_abi import RuntimeConfig


class A64Machine:
    """AAPCS64: eight argument registers, three-address ALU, fixed 32-bit instructions."""

    name = "aarch64"
    floats = True  # float operations in d0/d1 (select_float.py), values as bits in x registers
    arg_regs: tuple[str, ...] = ARG_REGS
    cond_eq = "eq"
    bool_shapes = Shapes(zero="z", nonzero="nz", test_op=None, setcc="cset", widen=None,
                         negate_op="eor", negate=NEGATE, no_flags=frozenset({
                             "mov", "add", "sub", "lsl", "lsr", "asr", "and", "orr", "eor",
                             "mul", "madd", "msub", "neg", "smulh", "sdiv", "udiv", "ldr",
                             "str", "ldur", "stur", "ldrb", "strb", "lea", "cset", "csel", "cneg",
                             # the FP ops but fcmp leave NZCV alone
                             "fmov", "fadd", "fsub", "fmul", "fdiv", "fneg", "fabs", "scvtf",
                             "fcvtzs"}),
                         # full writes only: a movk reads what the movz before it wrote,
                         # which its defs/uses do not say, so neither is listed
                         pure=frozenset({
                             "mov", "add", "sub", "lsl", "lsr", "asr", "and", "orr", "eor",
                             "mul", "madd", "msub", "neg", "smulh", "sdiv", "udiv", "cset",
                             "csel", "cneg"}))
    effects = select_effects.EFFECTS
    select_table: SelectTable = select_ops.SELECT
    select_home = ("aarch64", "ssa_course/codegen/aarch64/select_ops.py")

    def make(self, op: str, *operands: Any, cond: str | None = None,
             defs: tuple[Any, ...] = (), uses: tuple[Any, ...] = (),
             line: int | None = None, comment: str = "") -> MInstr:
        return minstr.ins(op, *operands, cond=cond, defs=defs, uses=uses, line=line,
                          comment=comment)

    def make_call(self, symbol: str, nargs: int = 0, line: int | None = None) -> MInstr:
        return minstr.call(symbol, nargs, line)

    def immediate(self, value: int) -> bool:
        # what the shared patterns (select_effects) may pass on as an Imm; AArch64's own
        # patterns check their fields themselves (immediates.py)
        return fits32(value)

    def wide(self, value: int) -> bool:
        """Every constant that needs a register is worth keeping in one across a call-free
        loop (31 registers: a movz/movk sequence per iteration costs more than one)."""
        return True

    def fuel_check(self, sel: Selector, steps: int) -> None:
        """``subs x27, x27, #K; b.mi rt_step_limit``: the fuel lives in a register."""
        sel.emit("subs", FUEL_REG, FUEL_REG, Imm(min(steps, 4095)), comment="fuel")
        sel.emit("jcc", LabelRef("rt_step_limit"), cond="mi")

    def param_source(self, k: int) -> PReg | Incoming:
        if k < len(ARG_REGS):
            return PReg(ARG_REGS[k])
        return Incoming(k - len(ARG_REGS))  # above the frame, addressed once it is laid out

    def function_state(self) -> A64State:
        return A64State()

    def start_block(self, sel: Selector, qb: QBlock) -> None:
        a64_state(sel).madds = select_ops.fusible_multiplies(sel, qb.body)

    def register_file(self, fuel: bool) -> RegisterFile:
        # Without fuel checks x27 holds no counter and becomes one more callee-saved
        # register for values (registers.py).
        return AARCH64 if fuel else AARCH64_UNFUELLED

    def allocators(self) -> tuple[str, ...]:
        return ("color",)

    def allocate(self, fn: MFunction, allocator: str, fuel: bool) -> object:
        if allocator not in self.allocators():
            raise CodegenError(f"the aarch64 target has the 'color' allocator only, not "
                               f"{allocator!r}")
        return regalloc.allocate(fn, regfile=self.register_file(fuel))

    def peephole(self, fn: MFunction) -> int:
        # loads are folded into operands at selection already; what is left is a float's
        # bits copied back into the d register they just came from
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
        return {"gnu": a64_toolchain.gnu_missing, "keystone": a64_toolchain.keystone_missing,
                "own": toolchain.own_missing}


# Typed as the protocol: mypy checks here that AArch64 implements all of it.
AARCH64_MACHINE: Machine = A64Machine()
