"""The x86-64 machine IR verifier: each broken invariant is named, with the function, block
and instruction that breaks it (:class:`~ssa_course.errors.VerifyError`).

Shared with AArch64 (:mod:`ssa_course.codegen.verify_shared`, with the one message
shape): blocks end in a jump and their successors match their branches, branches name a
label, before allocation every register is defined on every path, and calls find their
argument registers written (rdi, rsi, rdx, rcx, r8, r9 here). x86-64's own:

- **operand kinds** legal for each opcode: no memory-to-memory operation, an immediate
  fits 32 bits sign-extended except in ``mov reg, imm``; shifts take an 8-bit count.
- **stack 16-byte aligned** (after frame layout): rsp is a multiple of 16 at each call
  (System V asks no more; AArch64 checks every move of sp).
"""

from __future__ import annotations

from ssa_course.codegen.minstr import fits32
from ssa_course.codegen.mir import Imm, Mem, MFunction, MProgram, PReg
from ssa_course.codegen.verify_shared import (
    Callees,
    Rules,
    bad_operands,
    broken,
    check_blocks,
    check_calls,
    check_defined,
    operand_forms,
    program_callees,
)
from ssa_course.codegen.x86_64.emit import instr_text
from ssa_course.codegen.x86_64.frame import frame_size
from ssa_course.codegen.x86_64.registers import ARG_REGS, RET_REG

# What the shared checks need: System V's argument and result registers, and Intel syntax
# to name the instruction at fault.
RULES = Rules(arg_regs=ARG_REGS, result=RET_REG, text=instr_text)

# The conditions selection may emit: signed (l/g), unsigned (b/a: the bounds checks and
# float orders after ucomisd),
# sign (s/ns: fuel and depth counters going negative), parity (p: a float compare was
# unordered, NaN) and overflow (o: cvttsd2si's INT_MIN, `cmp d, 1`).
CONDS = frozenset({"e", "ne", "l", "le", "g", "ge", "b", "be", "a", "ae", "s", "ns", "p",
                   "np", "o", "no"})
# op -> allowed kind strings, one character per operand ("i" is a 32-bit immediate)
# Missing on purpose: "mm" anywhere (x86 has no memory-to-memory ALU form) and "ir" or
# "im" (an immediate is never a destination) -- what a careless spill rewrite could make.
FORMS: dict[str, frozenset[str]] = {
    "mov": frozenset({"rr", "rm", "ri", "mr", "mi"}),
    "lea": frozenset({"rm"}),
    "movzx": frozenset({"rr", "rm"}), "movb": frozenset({"mr", "mi"}),
    "cmp": frozenset({"rr", "rm", "ri", "mr", "mi"}),
    "test": frozenset({"rr", "ri", "mr", "mi"}),
    "imul": frozenset({"rr", "rm"}),
    "imul3": frozenset({"rri", "rmi"}),
    "shl": frozenset({"ri", "mi"}), "sar": frozenset({"ri", "mi"}),
    "shr": frozenset({"ri", "mi"}),
    "neg": frozenset({"r", "m"}), "not": frozenset({"r", "m"}),
    "setcc": frozenset({"r", "m"}), "idiv": frozenset({"r", "m"}),
    "imul1": frozenset({"r", "m"}),
    "push": frozenset({"r", "m", "i"}), "pop": frozenset({"r", "m"}),
    "xchg": frozenset({"rr", "rm"}), "cqo": frozenset({""}), "ret": frozenset({""}),
    "call": frozenset({"l"}), "jmp": frozenset({"l"}), "jcc": frozenset({"l"}),
    # SSE2, floats (issue #36): between registers only (an xmm register is an "r")
    **{op: frozenset({"rr"}) for op in ("movq", "addsd", "subsd", "mulsd", "divsd",
                                        "ucomisd", "cvtsi2sd", "cvttsd2si")},
    "cmpsd": frozenset({"rri"}),
    **{op: frozenset({"rr", "rm", "ri", "mr", "mi"}) for op in ("add", "sub", "and", "or",
                                                                 "xor")},
}


def check_operands(fn: MFunction) -> None:
    for label, k, i, kinds, bad in operand_forms(fn, FORMS):
        # Only `mov r, imm64` holds a 64-bit immediate; anywhere else a wide constant
        # would be silently truncated by the assembler (or rejected).
        for o in i.operands:
            if isinstance(o, Imm) and not fits32(o.value) and not (
                    i.op == "mov" and kinds == "ri"):
                bad = True
            if isinstance(o, Imm) and i.op in ("shl", "sar", "shr") and \
                    not 0 <= o.value < 64:
                bad = True
        if i.op in ("jcc", "setcc") and i.cond not in CONDS:
            bad = True
        if bad:
            raise bad_operands(RULES, fn, label, k, i, kinds)


def check_alignment(fn: MFunction) -> None:
    """rsp % 16 == 0 at every call (after :func:`ssa_course.codegen.x86_64.frame.layout`)."""
    # Track how far rsp is below the caller's rsp: 8 on entry (the return address), then
    # `body` once the prologue ran (return address, rbp, saves, slots). The caller's rsp
    # was 16-aligned at its call (System V), so ours is aligned exactly when depth % 16 == 0.
    body = 16 + 8 * len(fn.used_callee_saved) + frame_size(fn)
    for n, b in enumerate(fn.blocks):
        depth = 8 if n == 0 else body  # bytes below the caller's rsp
        for k, i in enumerate(b.instrs):
            first = i.operands[0] if i.operands else None
            if i.op == "push":
                depth += 8
            elif i.op == "pop":
                depth -= 8
            elif i.op in ("sub", "add") and first == PReg("rsp"):
                size = i.operands[1].value if isinstance(i.operands[1], Imm) else 0
                depth += size if i.op == "sub" else -size
            elif i.op in ("mov", "lea") and first == PReg("rsp"):
                m = i.operands[1]
                depth = 16 - (m.disp if isinstance(m, Mem) else 0)
            elif i.op == "call" and depth % 16:
                raise broken(RULES, "stack 16-byte aligned", fn, b.label, k, i,
                             f"rsp is {depth % 16} bytes off at a call")


def verify_function(fn: MFunction, *, allocated: bool = False, laid_out: bool = False,
                    callees: Callees | None = None) -> None:
    """Check ``fn``; ``allocated``/``laid_out`` say how far the back end has got."""
    # Definedness is checked on virtual registers only: after allocation one physical
    # register holds many values, and "written on every path" no longer means one value.
    check_blocks(fn, RULES)
    check_operands(fn)
    if not allocated:
        check_defined(fn, RULES)
    check_calls(fn, callees or Callees(), RULES)
    if laid_out:
        check_alignment(fn)


def verify_program(program: MProgram, *, allocated: bool = False,
                   laid_out: bool = False) -> None:
    callees = program_callees(program.functions)
    for fn in program.functions.values():
        verify_function(fn, allocated=allocated, laid_out=laid_out, callees=callees)
