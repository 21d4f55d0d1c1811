"""The AArch64 pattern table: what each quad shape becomes on this machine, and why.

The same kind of table as x86-64's (:mod:`ssa_course.codegen.patterns`, the same
:class:`~ssa_course.codegen.patterns.Pattern` rows); :mod:`.select_ops` and
:mod:`.select_effects` implement the rows (each branch marked ``# pattern: <name>``) and
the lesson prints :func:`table_text` next to x86-64's. Read side by side, the two tables
are the lesson's comparison: three-address arithmetic instead of two-address plus copies,
immediates that come in three kinds of field instead of one 32-bit one, ``cbz``/``cset``/
``csel`` instead of ``test``/``setcc``, and a divide instruction that never faults.
"""

from __future__ import annotations

from ssa_course.codegen.patterns import Pattern
from ssa_course.codegen.patterns import table_text as pattern_table

# Rows are grouped as in x86-64's table, so the two read side by side; each group's
# comment says what AArch64 changes about the cost model.
PATTERNS: tuple[Pattern, ...] = (
    # -- constants: every instruction is 32 bits, so an immediate must fit a small field
    #    of one of three shapes (12-bit arithmetic, bitmask, 16-bit move chunk)
    Pattern("constant", "x = const c", "(nothing)",
            "folded into its users where a field holds it, else built where needed"),
    Pattern("arithmetic immediate", "d = add x c, 0 <= c < 4096 (or c << 12)",
            "add d, x, #c (sub for -c)", "add/sub/cmp have a 12-bit unsigned field"),
    Pattern("constant that fits no field -> register", "d = add x 5000",
            "movz k, #5000; add d, x, k", "a 32-bit instruction cannot hold a 64-bit "
            "constant: movz/movn + movk, 16 bits at a time, or orr with a bitmask"),
    # -- arithmetic: three-address, with a free shift on the second operand, so the
    #    strength reductions need no copies (x86-64 used lea for that)
    Pattern("0 - x -> neg", "d = sub 0 x", "neg d, x", "Tiny's -x"),
    Pattern("multiply by 2^k -> lsl", "d = mul x 2^k", "lsl d, x, #k", "one shift"),
    Pattern("x*(2^k+1) -> add with a shifted operand", "d = mul x 3|5|9|17...",
            "add d, x, x, lsl #k", "the second operand of add may be shifted for free"),
    Pattern("multiply-add", "m = mul x y; d = add m z | sub z m (m used once, same block)",
            "madd d, x, y, z (msub for sub)", "a four-register instruction: the product "
            "needs no register of its own and the add no instruction"),
    # -- division: sdiv never faults, so only the divide-by-zero trap needs a test; the
    #    rest keeps Tiny's truncating semantics, as on x86-64
    Pattern("signed divide by 2^k -> csel", "d = div x 2^k",
            "add t, x, #2^k-1; cmp x, #0; csel t, t, x, lt; asr d, t, #k",
            "the bias only for a negative dividend, chosen without a branch"),
    Pattern("x % 2^k == 0 -> and", "c = eq (rem x 2^k) 0", "and t, x, #2^k-1; cbz/cbnz t",
            "only the low k bits matter; 2^k-1 is a bitmask immediate"),
    Pattern("divide by a constant -> smulh", "d = div|rem x c",
            "smulh h, x, M; [add|sub h, h, x]; asr h, h, #s; add q, h, x, lsr #63; "
            "[msub d, q, c, x]", "the high half of x*M is x/c (Granlund-Montgomery); "
            "msub gives the remainder in one instruction"),
    Pattern("a definedness check", "checkdef ok x", "cbz ok, trap",
            "a Bril read that may find no value (docs/quads.md): one compare-and-branch "
            "to ``undefined variable 'x'``"),
    Pattern("division checks the divisor", "d = div|rem x y",
            "cbz y, trap; sdiv q, x, y; [msub d, q, y, x]",
            "sdiv never faults: by 0 it gives 0 (so the code traps first) and "
            "INT_MIN / -1 gives INT_MIN, Tiny's answer (no -1 path as on x86-64)"),
    # -- comparisons: flags as on x86-64, plus cbz/cbnz, which test a register without
    #    touching the flags, and cset, which makes a whole 0/1 register in one go
    Pattern("compare + branch fused", "c = lt x y; br c L1 L2 (c used once)",
            "cmp x, y; b.lt L1; b L2", "the flags feed the branch: no bool is made"),
    Pattern("compare with zero and branch -> cbz/cbnz", "c = eq x 0; br c L1 L2",
            "cbz x, L1; b L2", "compare-and-branch: one instruction, no flags"),
    Pattern("constant on the left -> swap the operands", "c = lt 5 x", "cmp x, #5; b.gt",
            "cmp takes its immediate second"),
    Pattern("cset when a bool is a value", "c = lt x y (c stored or passed)",
            "cmp x, y; cset c, lt", "one instruction writes 0/1 to the full register "
            "(x86-64: setl + movzx)"),
    Pattern("branch on a bool value", "br c L1 L2", "cbnz c, L1; b L2",
            "c was computed elsewhere"),
    # -- memory: a reference points at element 0 with the length 8 bytes below it, so
    #    `ldr x, [a, i, lsl #3]` needs no +8; but cmp takes no memory operand, so the
    #    length is loaded into a register first
    Pattern("bounds check", "x = aload a i", "ldur n, [a, #-8]; cmp i, n; b.hs trap; "
            "ldr x, [a, i, lsl #3]", "a reference points at element 0, the length below "
            "it: one unsigned compare catches i < 0 and i >= len; no memory operand on "
            "cmp, so the length is loaded first"),
    Pattern("loop-invariant length, loaded once", "aload a i in a call-free loop, a "
            "fixed before it", "ldur n, [a, #-8] before the loop; cmp i, n; b.hs trap",
            "a length never changes: the check costs two instructions, not three"),
    Pattern("proven in bounds", "x = aload a i (in bounds)", "ldr x, [a, i, lsl #3]",
            "lesson 09 proved 0 <= i < len(a): no compare, no branch"),
    Pattern("constant index", "x = aload a c", "ldur n, [a, #-8]; cmp n, #c; b.ls trap; "
            "ldr x, [a, #8c]", "the address is a constant offset"),
    Pattern("unset check -> cbz", "x = aload a i, a of references", "cbz x, trap",
            "0 marks an unset slot"),
    Pattern("a bool element is a byte", "x = aload a i, a of bools (astore too)",
            "ldrb wx, [a, i]; strb wv, [a, i]",
            "a [bool] takes a byte an element, as C's bool: 8 times less memory"),
    Pattern("an array that never escapes, in the frame", "a = newarr c, a NoEscape",
            "bl rt_charge_array; add a, x29, #k; str n, [a, #-8]; str xzr, [a, #8j]",
            "escape analysis (lesson 10): the frame's bytes, the heap's budget"),
    # -- floats: a value is its IEEE bits in an x register; each operation copies its
    #    operands into the d registers (fmov), computes and copies the result back
    Pattern("float arithmetic in d0/d1", "d = fadd x y (fsub, fmul, fdiv)",
            "fmov d0, x; fmov d1, y; fadd d0, d0, d1; fmov d, d0",
            "the allocator keeps floats in x registers; d0/d1 are scratch"),
    Pattern("0.0 from the zero register", "d = fadd x 0.0", "fmov d1, xzr",
            "the bits of 0.0 are all zero: no constant to build"),
    Pattern("a float constant in fmov's 8 bits", "d = fmul x 2.0",
            "fmov d1, #2.0", "+-(16 + m)/16 * 2^e (m 0..15, e -3..4): 0.5, 1.25, 10.0, "
            "31.0 need no x register"),
    Pattern("x * -1.0 -> fneg", "d = fmul x -1.0 (Tiny's -x)",
            "fmov d0, x; fneg d0, d0; fmov d, d0", "the sign flipped: the same value, exact"),
    Pattern("float compare by fcmp + cset", "c = flt x y (feq, fle, fgt, fge)",
            "fmov d0, x; fmov d1, y; fcmp d0, d1; cset c, mi",
            "mi/ls/gt/ge/eq are false when unordered (NaN), as IEEE wants; lt/le are not"),
    Pattern("compare with 0.0 -> fcmp d, #0.0", "c = fgt x 0.0",
            "fmov d0, x; fcmp d0, #0.0; cset c, gt", "fcmp's one immediate: no register "
            "for the zero (-0.0 compares equal to it)"),
    Pattern("float(n) by scvtf", "d = itof n", "scvtf d0, n; fmov d, d0",
            "rounded to nearest (FPCR's default)"),
    Pattern("int(x) by fcvtzs, range checked", "d = ftoi x",
            "fcvtzs d, d0; fabs d1, d0; fcmp d1, 2^63; b.pl check (cold: trap unless "
            "x = -2^63)", "fcvtzs saturates and makes NaN 0; the interpreters stop with an "
            "error: one test on the hot path (pl: also NaN)"),
    # -- calls: AAPCS64; the stack argument area is stored, not pushed (there is no push)
    Pattern("stack arguments in an area below sp", "call f a1 .. a10",
            "sub sp, sp, #16; str a9, [sp]; str a10, [sp, #8]; mov x0, a1 ...; bl f; "
            "add sp, sp, #16", "AAPCS64: eight in registers, sp always 16-aligned"),
)


def table_text(width: int = 100) -> str:
    """The table as text no wider than ``width`` (what the lesson prints), laid out as
    x86-64's (:func:`ssa_course.codegen.patterns.table_text`)."""
    return pattern_table(PATTERNS, width)
