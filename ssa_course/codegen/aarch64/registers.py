"""AArch64's registers and calling convention (AAPCS64) as data for the allocator.

31 general-purpose 64-bit registers ``x0``-``x30`` plus ``sp`` (and ``xzr``, which reads as
0). AAPCS64: arguments in ``x0``-``x7`` (more on the stack), the result in ``x0``,
``x0``-``x18`` caller-saved, ``x19``-``x28`` callee-saved, ``x29`` the frame pointer,
``x30`` the link register (``bl`` writes the return address there).

What this back end keeps for itself (never allocated): ``x16``/``x17`` (the "intra-
procedure-call scratch" registers: the emitter builds large immediates and far addresses
in them), ``x18`` (the platform register), ``x27`` (the fuel left: the step limit, a
``subs`` + ``b.mi`` at each loop header; allocatable in a build without fuel checks) and
``x28`` (the call depth left: the depth limit), both callee-saved so the runtime and every
call leave them alone.
"""

from __future__ import annotations

from ssa_course.codegen.mir import PReg
from ssa_course.codegen.target import RegisterFile

# AAPCS64 (Procedure Call Standard for the Arm 64-bit Architecture, "General-purpose
# Registers"): the
# differences from System V that matter here are eight argument registers instead of six
# and a much larger callee-saved set, so values live across calls rarely spill.
ARG_REGS = tuple(f"x{k}" for k in range(8))
RET_REG = "x0"
CALLER_SAVED = tuple(f"x{k}" for k in range(16))  # the allocatable ones (x16-x18 are not)
CALLEE_SAVED = tuple(f"x{k}" for k in range(19, 27))
# Caller-saved first, as on x86-64: a value that crosses no call should not cost a save
# and restore in the prologue and epilogue.
ALLOCATABLE = CALLER_SAVED + CALLEE_SAVED

# The FP/SIMD registers d0-d31 hold floats only while one operation computes
# (select_float.py): a float value lives in an x register as its bits. AAPCS64 passes
# float arguments in d0-d7, counted apart from x0-x7, and returns a float in d0; d8-d15
# are callee-saved (their low 64 bits), which this back end never writes.
FLOAT_ARGS = tuple(f"d{k}" for k in range(8))
FLOAT_RESULT = PReg("d0")


def is_fp(name: str) -> bool:
    """Is register ``name`` an FP/SIMD ``d`` register (outside the allocator's file)?"""
    return name[:1] == "d" and name[1:].isdigit()


# `bl` writes the return address into x30 instead of pushing it: a function that calls
# another must save x30 itself (the prologue's `stp x29, x30`), a leaf could skip it.
FP, LR, SP = PReg("x29"), PReg("x30"), PReg("sp")
SCRATCH0 = PReg("x16")  # the emitter's, between two instructions (the entry's stack check)
# Counters in callee-saved registers: every callee (ours or the runtime's) preserves them,
# so no call site has to save or reload them -- cheaper than x86-64's rt_fuel in memory.
FUEL_REG, DEPTH_REG = PReg("x27"), PReg("x28")

AARCH64 = RegisterFile(
    name="aarch64",
    allocatable=ALLOCATABLE,
    arguments=ARG_REGS,
    result=RET_REG,
    caller_saved=CALLER_SAVED,
    callee_saved=CALLEE_SAVED,
    reserved=(("x16", "scratch: large immediates and far addresses (IP0)"),
              ("x17", "scratch (IP1)"), ("x18", "platform register"),
              ("x27", "fuel left (the step limit)"), ("x28", "call depth left"),
              ("x29", "frame pointer"), ("x30", "link register (return address)")),
)

# Without fuel checks (``ssa-course compile`` without --step-limit) x27 holds no counter:
# the allocator gets it as a ninth callee-saved register (the runtime's handler records
# then give it back to a handler, see runtime.py).
AARCH64_UNFUELLED = RegisterFile(
    name="aarch64",
    allocatable=ALLOCATABLE + ("x27",),
    arguments=ARG_REGS,
    result=RET_REG,
    caller_saved=CALLER_SAVED,
    callee_saved=CALLEE_SAVED + ("x27",),
    reserved=tuple(r for r in AARCH64.reserved if r[0] != "x27"),
)

# Condition codes of signed comparisons, their negations and their operand swaps, named
# like the x86 ones in the machine IR's ``cond`` (lt, not l). ``z``/``nz`` mark the
# compare-and-branch forms ``cbz``/``cbnz``.
NEGATE = {"eq": "ne", "ne": "eq", "lt": "ge", "ge": "lt", "gt": "le", "le": "gt",
          "lo": "hs", "hs": "lo", "hi": "ls", "ls": "hi", "mi": "pl", "pl": "mi",
          "z": "nz", "nz": "z"}
# SWAP moves a constant to the right of `cmp` (only there may it be an immediate), COMPARES
# names each quad comparison's condition: the same roles as the x86 tables in mir.py.
SWAP = {"eq": "eq", "ne": "ne", "lt": "gt", "gt": "lt", "le": "ge", "ge": "le"}
COMPARES = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}
