"""The x86-64 pattern table: what each quad shape becomes on this machine, and why.

:mod:`.select_ops`, :mod:`.select_effects` and the neutral walk (:mod:`ssa_course.codegen.isel`,
:mod:`ssa_course.codegen.select_effects`) implement the rows (each branch marked
``# pattern: <name>``); the lesson prints :func:`table_text` next to AArch64's.
"""

from __future__ import annotations

from ssa_course.codegen.patterns import Pattern
from ssa_course.codegen.patterns import table_text as pattern_table

PATTERNS: tuple[Pattern, ...] = (
    # -- constants: the cheapest register is the one never allocated
    Pattern("constant", "x = const c", "(nothing)",
            "folded into its users as an immediate, or loaded where a register is needed"),
    Pattern("wide constant in a loop -> hoisted", "c needs > 32 bits, used in a loop",
            "mov k, c before the loop; uses read k", "one 10-byte mov per loop entry, not one "
            "per use per iteration (hoist.py)"),
    Pattern("immediate operand", "op x c, c fits 32 bits", "op r, c",
            "x86 takes a sign-extended 32-bit immediate: no register for c"),
    # -- arithmetic: x86 is two-address (`add d, s` overwrites d); lea is its one
    #    three-address adder, so it saves the copy that would keep x alive
    Pattern("add of a constant -> lea", "d = add x c", "lea d, [x + c]",
            "three-address: x stays live without a copy"),
    Pattern("three-address add -> lea", "d = add x y", "lea d, [x + y]",
            "no copy of x needed before the add"),
    Pattern("0 - x -> neg", "d = sub 0 x", "mov d, x; neg d", "Tiny's -x"),
    Pattern("multiply by 2^k -> shl", "d = mul x 2^k", "mov d, x; shl d, k",
            "a shift is one cycle; wraps exactly like the product"),
    Pattern("x*3/5/9 -> lea", "d = mul x 3|5|9", "lea d, [x + x*2|4|8]",
            "the address unit multiplies by 2, 4, 8 and adds"),
    Pattern("imul with an immediate", "d = mul x c", "imul d, x, c", "three-operand imul"),
    # -- division: idiv is slow and faults on 0 and on INT_MIN / -1, where Tiny wraps
    #    or traps with a message; every row keeps Tiny's truncating semantics exactly
    Pattern("signed divide by 2^k", "d = div x 2^k", "mov t, x; sar t, 63; shr t, 64-k; "
            "lea d, [x + t]; sar d, k (k = 1: no sar 63)",
            "the bias rounds toward zero as idiv does; lea: no copy of x"),
    Pattern("remainder by 2^k", "d = rem x 2^k", "bias as above; add t, x; and t, -2^k; "
            "mov d, x; sub d, t", "x minus the multiple of 2^k truncation keeps"),
    Pattern("x % 2^k == 0 branch -> test x, 2^k-1", "c = eq (rem x 2^k) 0; br c (both used once)",
            "test x, 2^k-1; je ...", "the branch tests the low k bits; no remainder is made"),
    Pattern("x % 2^k == 0 -> and", "c = eq (rem x 2^k) 0", "mov t, x; and t, 2^k-1; test t, t",
            "only the remainder's zero-ness is used, and it is the low k bits'"),
    Pattern("divide by a constant -> multiply by its reciprocal", "d = div|rem x c",
            "mov rax, M; imul x; [add|sub rdx, x]; sar rdx, s; + sign bit",
            "idiv takes 40+ cycles; the high half of x*M is x/c (Granlund-Montgomery)"),
    Pattern("division checks the divisor", "d = div|rem x y",
            "test y, y; je trap; cmp y, -1; je neg-path; mov rax, x; cqo; idiv y",
            "zero traps at the operator; -1 would fault on INT_MIN, so it negates"),
    Pattern("a definedness check", "checkdef ok x", "test ok, ok; je trap",
            "a Bril read that may find no value stops with the variable's own name"),
    # -- comparisons: x86 compares into flags, and a bool register costs setcc + movzx,
    #    so a compare feeding only a branch never makes one
    Pattern("compare + branch fused", "c = lt x y; br c L1 L2 (c used once)",
            "cmp x, y; jl L1; jmp L2", "the flags feed the jump: no bool is made"),
    Pattern("compare with zero -> test", "c = lt x 0", "test x, x; jl ...",
            "shorter than cmp x, 0 and sets the same flags"),
    Pattern("constant on the left -> swap the operands", "c = lt 5 x", "cmp x, 5; jg ...",
            "cmp takes its immediate on the right"),
    Pattern("setcc + movzx when a bool is a value", "c = lt x y (c stored or passed)",
            "cmp x, y; setl c8; movzx c, c8", "a bool is 0/1 in a full register"),
    Pattern("branch on a bool value", "br c L1 L2", "test c, c; jne L1; jmp L2",
            "c was computed elsewhere"),
    # -- memory: an array is [length][elements]; every check traps at the Tiny operator's
    #    position, so native code fails with the interpreters' message
    Pattern("bounds check", "x = aload a i", "cmp i, [a]; jae trap; mov x, [a + i*8 + 8]",
            "one unsigned compare catches i < 0 and i >= len"),
    Pattern("proven in bounds", "x = aload a i (in bounds)", "mov x, [a + i*8 + 8]",
            "lesson 09 proved 0 <= i < len(a): no compare, no branch"),
    Pattern("index x + c -> displacement", "x = aload a (add j c) (in bounds)",
            "mov x, [a + j*8 + 8c + 8]", "no compare needs j + c, so the address adds c"),
    Pattern("constant index", "x = aload a c", "cmp qword ptr [a], c; jbe trap; "
            "mov x, [a + 8c + 8]", "the address is a constant offset"),
    Pattern("unset check", "x = aload a i, a of references", "test x, x; je trap",
            "0 marks an unset slot"),
    Pattern("a bool element is a byte", "x = aload a i, a of bools (astore too)",
            "movzx x, byte ptr [a + i + 8]; mov byte ptr [a + i + 8], 1",
            "a [bool] takes a byte an element, as C's bool: 8 times less memory"),
    Pattern("an array that never escapes, in the frame", "a = newarr c, a NoEscape",
            "call rt_charge_array; lea a, [rbp - k]; mov [a], c; mov [a + 8j], 0",
            "escape analysis (lesson 10): the frame's bytes, the heap's budget"),
    # -- floats (SSE2): a float lives in a general register as its bits; xmm0/xmm1 are
    #    scratch the allocator never sees (select_float.py)
    Pattern("float arithmetic in xmm0/xmm1", "d = fadd x y (fsub fmul fdiv)",
            "movq xmm0, x; movq xmm1, y; addsd xmm0, xmm1; movq d, xmm0",
            "IEEE doubles; the allocator keeps only the bits, in general registers"),
    Pattern("float order by ucomisd + seta/setae", "d = flt x y (fle fgt fge)",
            "movq xmm0, y; movq xmm1, x; ucomisd xmm0, xmm1; seta d; movzx d, d",
            "unordered (NaN) sets CF and ZF: a/ae are false then, as IEEE says"),
    Pattern("float == by cmpsd", "d = feq x y",
            "movq xmm0, x; movq xmm1, y; cmpsd xmm0, xmm1, 0; movq d, xmm0; and d, 1",
            "ordered and equal in one mask: NaN != NaN, -0.0 == 0.0, no branch"),
    Pattern("float(n) by cvtsi2sd", "d = itof n", "cvtsi2sd xmm0, n; movq d, xmm0",
            "rounds to nearest, as Python's float(n)"),
    Pattern("int(x) by cvttsd2si, checked", "d = ftoi x",
            "movq xmm0, x; cvttsd2si d, xmm0; cmp d, 1; jo check",
            "INT_MIN is NaN or out of range unless x is -2^63: told apart out of line"),
    # -- calls: the System V AMD64 calling convention
    Pattern("stack arguments right to left", "call f a1 .. a8",
            "push a8; push a7; mov rdi, a1 ...; call tiny_f; add rsp, 16",
            "System V: six in registers, the rest on the stack, rsp 16-aligned"),
)


def table_text(width: int = 100) -> str:
    """The x86-64 pattern table as text no wider than ``width`` (what the lesson prints)."""
    return pattern_table(PATTERNS, width)
