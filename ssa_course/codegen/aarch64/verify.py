"""The AArch64 machine-IR verifier: each broken invariant named, with where.

Shared with x86-64 (:mod:`ssa_course.codegen.verify_shared`): blocks end in a jump,
return or trap and their successors match their branches; before allocation, every
register is defined on every path; a call finds each argument register it reads (x0-x7
here) written since the previous call on every path, and a Tiny function gets one per
parameter (up to eight). AArch64's own: every instruction has operand kinds its op takes
(three-address, loads and stores the only memory operands, shifts 0..63, conditions
AArch64's), and the stack stays 16-byte aligned: sp moves by multiples of 16 (AAPCS64
keeps it aligned always; x86-64 checks it only at calls). Messages have the shape both
targets share (``verify_shared.where``).
"""

from __future__ import annotations

from ssa_course.codegen.aarch64.emit import instr_text
from ssa_course.codegen.aarch64.encode_fp import fp_imm8
from ssa_course.codegen.aarch64.frame import Incoming
from ssa_course.codegen.aarch64.minstr import Shift
from ssa_course.codegen.aarch64.registers import ARG_REGS, NEGATE, RET_REG, SP, is_fp
from ssa_course.codegen.mir import Imm, MFunction, MProgram, PReg
from ssa_course.codegen.verify_shared import (
    Callees,
    Rules,
    bad_operands,
    broken,
    check_blocks,
    check_calls,
    check_defined,
    operand_forms,
    operand_kind,
    program_callees,
)

# What the shared checks need: AAPCS64's argument registers (the result comes back in x0,
# the first of them), and A64 syntax to name the instruction at fault.
RULES = Rules(arg_regs=ARG_REGS, result=RET_REG, text=instr_text)

# The operand kinds of x86-64's verifier plus "s", a shifted-register operand, and "f",
# an FP/SIMD d register (only the float ops of select_float.py name one; "r" is then a
# general-purpose register). Where the tables differ is the lesson's point: A64 is a
# load/store machine, so only ldr/str (and the IR's `mov`, which emission splits into
# them) touch memory -- no ALU op has an "m".
R, M, I, L, S, F = "r", "m", "i", "l", "s", "f"
# Three-address ALU forms: two sources, or a source and an immediate, or a source and a
# shifted register (`add d, x, y, lsl #k`).
_ALU = frozenset({"rrr", "rri", "rrrs"})
FORMS: dict[str, frozenset[str]] = {
    "mov": frozenset({"rr", "ri", "rm", "mr", "mi"}),
    "ldr": frozenset({"rm"}), "str": frozenset({"rm"}),
    "ldrb": frozenset({"rm"}), "strb": frozenset({"rm"}),
    "add": _ALU, "sub": _ALU, "subs": frozenset({"rri"}),
    "and": _ALU, "orr": _ALU, "eor": _ALU,
    "mul": frozenset({"rrr"}), "sdiv": frozenset({"rrr"}), "smulh": frozenset({"rrr"}),
    "madd": frozenset({"rrrr"}), "msub": frozenset({"rrrr"}),
    "lsl": frozenset({"rri"}), "asr": frozenset({"rri"}), "lsr": frozenset({"rri"}),
    "neg": frozenset({"rr", "rrs"}),
    "cmp": frozenset({"rr", "ri"}), "test": frozenset({"rr", "ri"}),
    "cset": frozenset({"r"}), "csel": frozenset({"rrr"}),
    "lea": frozenset({"rm"}),
    "jmp": frozenset({"l"}), "jcc": frozenset({"l", "lr"}), "call": frozenset({"l"}),
    "ret": frozenset({""}),
    "stp!": frozenset({"rrm"}), "ldp+": frozenset({"rrm"}), "stp": frozenset({"rrm"}),
    "ldp": frozenset({"rrm"}),
    # floats: fmov copies bits between the two register files (or within d) or loads an
    # 8-bit float immediate, arithmetic is d-only, scvtf/fcvtzs convert from/to an integer
    # register, fcmp takes #0.0
    "fmov": frozenset({"fr", "rf", "ff", "fi"}), "fneg": frozenset({"ff"}),
    "fabs": frozenset({"ff"}),
    "fadd": frozenset({"fff"}), "fsub": frozenset({"fff"}), "fmul": frozenset({"fff"}),
    "fdiv": frozenset({"fff"}), "fcmp": frozenset({"ff", "fi"}),
    "scvtf": frozenset({"fr"}), "fcvtzs": frozenset({"rf"}),
}


def _kind(o: object) -> str:
    if isinstance(o, PReg) and is_fp(o.name):
        return F
    if isinstance(o, Incoming):  # a stack argument before frame layout: memory, as a Slot
        return M
    return S if isinstance(o, Shift) else operand_kind(o)


def check_operands(fn: MFunction) -> None:
    for label, k, i, kinds, bad in operand_forms(fn, FORMS, _kind):
        if i.op in ("lsl", "asr", "lsr") and not bad:
            amount = i.operands[2]  # "rri": the form checked above makes it an Imm
            bad = not (isinstance(amount, Imm) and 0 <= amount.value < 64)
        if any(isinstance(o, Shift) and not 0 <= o.amount < 64 for o in i.operands):
            bad = True
        if i.op == "fcmp" and kinds == "fi" and i.operands[1] != Imm(0):
            bad = True  # fcmp's only immediate is #0.0
        imm = i.operands[1] if len(i.operands) == 2 else None
        if i.op == "fmov" and isinstance(imm, Imm) and fp_imm8(imm.value) is None:
            bad = True  # fmov's float immediate has 8 bits
        if i.op in ("jcc", "cset", "csel") and i.cond not in NEGATE:
            bad = True
        # cbz/cbnz name the register they test; a flags branch names none.
        if i.op == "jcc" and (kinds == "lr") != (i.cond in ("z", "nz")):
            bad = True
        if bad:
            raise bad_operands(RULES, fn, label, k, i, kinds)


def check_stack(fn: MFunction) -> None:
    """sp only moves by multiples of 16."""
    # Stronger than x86-64's "aligned at calls": AAPCS64 keeps sp 16-aligned at all times,
    # so every single adjustment must be a multiple of 16.
    for b in fn.blocks:
        for k, i in enumerate(b.instrs):
            if i.op in ("add", "sub") and i.operands and i.operands[0] == SP:
                size = i.operands[2]
                if not isinstance(size, Imm) or size.value % 16:
                    raise broken(RULES, "stack 16-byte aligned", fn, b.label, k, i,
                                 f"sp moves by {size}")


# Block structure, definedness and the calling convention are target-independent and come
# from codegen/verify_shared.py; only the operand table and the stack rule are AArch64's.
def verify_function(fn: MFunction, *, allocated: bool = True,
                    callees: Callees | None = None) -> None:
    """Check ``fn``; ``callees``: the program's functions (:func:`program_callees`)."""
    check_blocks(fn, RULES)
    check_operands(fn)
    check_stack(fn)
    if not allocated:
        check_defined(fn, RULES)
    check_calls(fn, callees or Callees(), RULES)


def verify_program(program: MProgram, *, allocated: bool = True) -> None:
    callees = program_callees(program.functions)
    for fn in program.functions.values():
        verify_function(fn, allocated=allocated, callees=callees)
