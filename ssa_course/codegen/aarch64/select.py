"""Instruction selection for AArch64: the x86-64 selector's walk, this machine's patterns.

:class:`A64Selector` is :class:`ssa_course.codegen.isel.Selector` (the same walk over the
scheduled blocks, the same constants, phis, trap stubs, hoisting of wide constants out of
loops) with the target's parts replaced: its argument registers, how an instruction's
defs/uses are derived (:mod:`.minstr`), the fuel check, where parameters arrive, and the
pattern table's emitting half (:mod:`.select_ops`).
"""

from __future__ import annotations

from ssa_course.codegen.aarch64 import minstr, select_effects, select_ops
from ssa_course.codegen.aarch64.frame import Incoming
from ssa_course.codegen.aarch64.registers import ARG_REGS, FUEL_REG, NEGATE
from ssa_course.codegen.hoist import ENTRY
from ssa_course.codegen.isel import Selector, select_program_functions
from ssa_course.codegen.mir import Imm, LabelRef, Mem, MFunction, PReg, VReg
from ssa_course.codegen.phis import EdgeCopies
from ssa_course.codegen.quadcfg import QBlock
from ssa_course.codegen.thread import Shapes
from ssa_course.quads.domtree import Dominance
from ssa_course.quads.ir import Instr, Program


class A64Selector(Selector):
    """Selection state for one function, AArch64 flavour."""

    def __init__(self, *args, **kw) -> None:
        super().__init__(*args, **kw)
        self._lengths: dict[tuple[str, str], VReg] = {}
        # dominance and each value's defining block, computed at the first hoisted length
        self._definitions: tuple[Dominance, dict[str, str]] | None = None
        self.madds: dict[str, Instr] = {}

    arg_regs = ARG_REGS
    cond_eq = "eq"
    bool_shapes = Shapes(zero="z", nonzero="nz", test_op=None, setcc="cset", widen=None,
                         negate_op="eor", negate=NEGATE, no_flags=frozenset({
                             "mov", "add", "sub", "lsl", "lsr", "asr", "and", "orr", "eor",
                             "mul", "madd", "msub", "neg", "smulh", "sdiv", "udiv", "ldr",
                             "str", "ldur", "stur", "ldrb", "strb", "lea", "cset", "csel", "cneg"}),
                         # full writes only: a movk reads what the movz before it wrote,
                         # which its defs/uses do not say, so neither is listed
                         pure=frozenset({
                             "mov", "add", "sub", "lsl", "lsr", "asr", "and", "orr", "eor",
                             "mul", "madd", "msub", "neg", "smulh", "sdiv", "udiv", "cset",
                             "csel", "cneg"}))
    make = staticmethod(minstr.ins)
    effects = select_effects.EFFECTS
    select_table = select_ops.SELECT
    select_home = ("aarch64", "ssa_course/codegen/aarch64/select_ops.py")
    make_call = staticmethod(minstr.call)

    def wide(self, value: int) -> bool:
        """Every constant that needs a register is worth keeping in one across a call-free
        loop (31 registers: a movz/movk sequence per iteration costs more than one)."""
        return True

    def fuel_check(self, steps: int) -> None:
        """``subs x27, x27, #K; b.mi rt_step_limit``: the fuel lives in a register."""
        self.emit("subs", FUEL_REG, FUEL_REG, Imm(min(steps, 4095)), comment="fuel")
        self.emit("jcc", LabelRef("rt_step_limit"), cond="mi")

    # an Incoming (the frame is laid out later) is outside mir.Operand, which x86 shares
    def param_source(self, k: int) -> PReg | Incoming:  # type: ignore[override]
        if k < len(ARG_REGS):
            return PReg(ARG_REGS[k])
        return Incoming(k - len(ARG_REGS))  # above the frame, addressed once it is laid out

    def select_block(self, qb: QBlock, header: bool, copies: EdgeCopies) -> None:
        self.madds = select_ops.fusible_multiplies(self, qb.body)
        super().select_block(qb, header, copies)

    def hoisted_length(self, array: str) -> VReg | None:
        """A register holding ``len(array)`` through the current block's loop, loaded once
        before the loop, or None. A length never changes, so when the reference is fixed
        in the loop (defined where the loop's preheader point is dominated: a parameter,
        or a value computed before the loop) its bounds checks need not load it again.
        Only call-free loops (:mod:`ssa_course.codegen.hoist`): there registers are free."""
        header = self.hoisted.loop_of.get(self.qlabel)
        if header is None or array in self.consts or array in self.guarded:
            return None  # a row loaded before its loop holds 0 where the loop won't run
        key = (header, array)
        n = self._lengths.get(key)
        if n is None:
            if self._definitions is None:
                self._definitions = self._index_definitions()
            dom, defined_in = self._definitions
            where = defined_in.get(array)
            point = self.hoisted.preheader[header]
            if point == ENTRY:
                fixed = where == ENTRY
            else:
                fixed = where is not None and (where == ENTRY or dom.dominates(where, point))
            if not fixed:
                return None
            n = self._lengths[key] = self.new_vreg("len")
            self.hoisted_loads.append((header, self.make("ldr", n, Mem(self.vreg(array),
                                                                        disp=-8))))
        return n

    def _index_definitions(self) -> tuple[Dominance, dict[str, str]]:
        blocks = self.blocks
        dom = Dominance({b.label: b.succs for b in blocks}, blocks[0].label)
        defined_in = {name: ENTRY for name, _ in self.fn.params}
        for qb in blocks:
            for i in (*qb.phis, *qb.body):
                if i.dest is not None:
                    defined_in[i.dest] = qb.label
        return dom, defined_in


def select_program_a64(program: Program, fuel: bool = True, frame_arrays: bool = True
                       ) -> tuple[dict[str, MFunction], list[tuple[int, int]]]:
    """Every function of ``program`` as AArch64 machine IR (phis lowered, not allocated)."""
    return select_program_functions(program, fuel, frame_arrays, A64Selector)
