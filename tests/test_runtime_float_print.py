"""``rt_print_float`` of both CPUs' generated runtimes prints a double's bits exactly as
:func:`ssa_course.floats.format_float` (brili) prints the double.

A hand-written ``tiny_main`` walks a table of bit patterns in its data, calling
``rt_print_float`` and ``rt_print_newline`` for each, then prints the callee-saved
registers it set before the walk (the routine must keep them). x86-64 runs through
``codegen_harness.observe`` (native with every assembler, our own assembler's bytes equal
to GNU's and keystone's, unicorn); AArch64 with every available assembler (the same
bytes), under unicorn and, where installed, qemu. The values: the specials, powers of ten
from 1e-323 to 1e308 and their neighbours, both sides of the fixed/exponent boundaries
near 1e10 and 1e-10, exact ties of both forms, subnormals, the extremes and seeded random
bit patterns (many more of them natively, where a run costs nothing).
"""

from __future__ import annotations

import math
import random
import struct
from decimal import Decimal, localcontext

import pytest
from codegen_harness import observe

from ssa_course.codegen import float_print_plan as plan
from ssa_course.codegen import toolchain
from ssa_course.codegen.aarch64 import toolchain as a64_toolchain
from ssa_course.floats import format_float

MAGIC = (0x1111, 0x2222, 0x3333, 0x4444)  # put in callee-saved registers around the walk


def bits_of(x: float) -> int:
    return int(struct.unpack("<Q", struct.pack("<d", x))[0])


def double(bits: int) -> float:
    return float(struct.unpack("<d", struct.pack("<Q", bits))[0])


def _neighbours(x: float, k: int) -> list[int]:
    b = bits_of(x)
    return [b + d for d in range(-k, k + 1) if 0 < b + d < 0x7FF0000000000000]


def fixed_ties(rng: random.Random, n: int) -> list[float]:
    """Odd multiples of 2^-18: x * 10^17 = odd * 5^17 / 2 ends in exactly .5."""
    return [(2 * rng.randrange(1, 1 << rng.randrange(2, 45)) + 1) / (1 << 18) for _ in range(n)]


def exponent_ties(rng: random.Random, n: int) -> list[float]:
    """Odd multiples of 2^-8 in [1e10, 1e11): 11 integer digits and 8 decimals ending in 5,
    so the 19th significant digit is an exact 5."""
    return [(2 * rng.randrange(10**10 * 128, 10**11 * 128) + 1) / 256 for _ in range(n)]


def cases(seed: int, randoms: int) -> list[int]:
    """The bit patterns printed (both signs of most)."""
    rng = random.Random(seed)
    out = [0, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000,
           0xFFF8000000000000, 0x7FF0000000000001, 0x7FFFFFFFFFFFFFFF,
           1, 2, 3, 0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x0010000000000001,
           0x7FEFFFFFFFFFFFFF, 0x7FEFFFFFFFFFFFFE, 0x3FF0000000000000]
    for p in range(-323, 309):
        out += _neighbours(float(f"1e{p}"), 2)
    for edge in (plan.EXP_FORM_HI, plan.EXP_FORM_LO):
        out += [edge + d for d in range(-12, 13)]
    ties = [0.5, 1.5, 2.5, 0.125, 5e-18, 1.5e-17, *fixed_ties(rng, 150),
            *exponent_ties(rng, 150)]
    out += [bits_of(x) for x in ties]
    out += _neighbours(1e21, 3) + _neighbours(9.5, 2) + _neighbours(0.1, 2)
    out += [rng.getrandbits(52) for _ in range(40)]  # subnormals
    out += [bits_of(rng.uniform(-1e10, 1e10) * 10.0 ** -rng.randrange(0, 21))
            for _ in range(randoms // 4)]
    out += [rng.getrandbits(64) for _ in range(randoms)]
    return out + [b ^ (1 << 63) for b in out[:len(out) // 2]]


def expected(bits: list[int]) -> str:
    return "".join(format_float(double(b)) + "\n" for b in bits) \
        + "".join(f"{m}\n" for m in MAGIC)


def check(stdout: str, bits: list[int]) -> None:
    """The output is the expected text; else the first value printed wrongly."""
    if stdout == expected(bits):
        return
    for b, got in zip(bits, stdout.splitlines(), strict=False):
        assert got == format_float(double(b)), f"{b:#018x} ({double(b)!r})"
    assert stdout.splitlines()[len(bits):] == [str(m) for m in MAGIC], "registers not kept"


def table(bits: list[int]) -> str:
    return ".data\n.balign 8\nfp_values:\n" + "".join(f"    .quad {b}\n" for b in bits)


def x86_main(bits: list[int]) -> str:
    keep = ("r12", "r13", "r14", "r15")
    sets = "".join(f"    mov {r}, {m}\n" for r, m in zip(keep, MAGIC, strict=True))
    prints = "".join(f"    mov rdi, {r}\n    call rt_print_int\n    call rt_print_newline\n"
                     for r in keep)
    return f"""tiny_main:
    push rbp
    mov rbp, rsp
    push rbx
    push r12
    push r13
    push r14
    push r15
    sub rsp, 8
{sets}    lea rbx, [rip + fp_values]
    mov qword ptr [rsp], {len(bits)}
.Lwalk:
    mov rdi, qword ptr [rbx]
    call rt_print_float
    call rt_print_newline
    add rbx, 8
    sub qword ptr [rsp], 1
    jnz .Lwalk
{prints}    add rsp, 8
    pop r15
    pop r14
    pop r13
    pop r12
    pop rbx
    leave
    ret
{table(bits)}"""


def a64_main(bits: list[int]) -> str:
    keep = ("x21", "x22", "x23", "x24")
    sets = "".join(f"    movz {r}, #{m}\n" for r, m in zip(keep, MAGIC, strict=True))
    prints = "".join(f"    mov x0, {r}\n    bl rt_print_int\n    bl rt_print_newline\n"
                     for r in keep)
    return f"""tiny_main:
    stp x29, x30, [sp, #-16]!
    stp x19, x20, [sp, #-16]!
    stp x21, x22, [sp, #-16]!
    stp x23, x24, [sp, #-16]!
{sets}    adrp x19, fp_values
    add x19, x19, :lo12:fp_values
    movz x20, #{len(bits) & 0xFFFF}
    movk x20, #{len(bits) >> 16}, lsl #16
.Lwalk:
    ldr x0, [x19]
    bl rt_print_float
    bl rt_print_newline
    add x19, x19, #8
    sub x20, x20, #1
    cbnz x20, .Lwalk
{prints}    ldp x23, x24, [sp], #16
    ldp x21, x22, [sp], #16
    ldp x19, x20, [sp], #16
    ldp x29, x30, [sp], #16
    ret
{table(bits)}"""


def test_the_ties_are_ties():
    rng = random.Random(7)
    with localcontext(prec=200):
        for x in fixed_ties(rng, 50):
            assert (Decimal(x) * 10**17) % 1 == Decimal("0.5")
        for x in exponent_ties(rng, 50):
            assert 1e10 <= x < 1e11 and (Decimal(x) * 10**7) % 1 == Decimal("0.5")


def test_the_form_boundaries_are_python_s():
    """The exponent form starts at EXP_FORM_HI and ends at EXP_FORM_LO, as
    ``abs(math.log10(x)) >= 10`` decides (format_float's rule) on the doubles around."""
    for edge, inside in ((plan.EXP_FORM_HI, lambda b: b >= plan.EXP_FORM_HI),
                         (plan.EXP_FORM_LO, lambda b: b <= plan.EXP_FORM_LO)):
        for b in range(edge - 200, edge + 201):
            assert (abs(math.log10(double(b))) >= 10) == inside(b), hex(b)


def test_the_numbers_fit_their_registers_and_limbs():
    """For every binary exponent, the largest and smallest significands (every bit alone
    for subnormals), as the routine sees them. Fixed form: the shift k = -e is below 128
    (the 128-bit shifter's range) and 2 m 10^17 fits in 128 bits. Exponent form: the
    estimate of P is floor(log10 x) or one less, and R and 100 S (so R before and after
    the estimate's fix, and 10 S after) fit in LIMBS - 1 limbs (the routine works on one
    more than S's top limb)."""
    assert all((e2 * plan.LOG10_2_NUM) >> plan.LOG10_2_SHIFT == math.floor(e2 * math.log10(2))
               for e2 in range(-1200, 1100) if e2)
    widest = fixed = 0
    for biased in range(2047):
        fractions = [0, (1 << 52) - 1] if biased else [1 << k for k in range(52)]
        for frac in fractions:
            mag = biased << 52 | frac
            m, e = (frac | 1 << 52, biased - 1075) if biased else (frac, -1074)
            if plan.EXP_FORM_LO < mag < plan.EXP_FORM_HI:
                assert 0 < -e < 128 and 2 * m * plan.TEN_TO_DECIMALS < 1 << 128
                fixed += 1
                continue
            while m < 1 << 52:
                m, e = 2 * m, e - 1
            p = ((e + 52) * plan.LOG10_2_NUM) >> plan.LOG10_2_SHIFT
            assert p - Decimal(double(mag)).adjusted() in (0, -1), hex(mag)
            r, s = m * 5 ** max(0, -p), 5 ** max(0, p)
            net = e - p
            r, s = (r << net, s) if net >= 0 else (r, s << -net)
            assert r < 100 * s
            widest = max(widest, (max(r, 100 * s).bit_length() + 31) // 32)
    assert widest <= plan.LIMBS - 1 and fixed > 100


def test_x86_64_prints_like_format_float():
    # A long run in one piece (unicorn's re-run of a timed-out slice's last instruction,
    # unicorn #1565, cannot happen: the emulator now makes one emu_start per run)
    bits = cases(1, 1200)
    r = observe(plan_source_x86(bits), [], timeout_s=120)
    assert (r.stderr, r.status) == ("", 0)
    check(r.stdout, bits)


def plan_source_x86(bits: list[int]) -> str:
    from ssa_course.codegen.x86_64.runtime import RuntimeConfig, program_source

    return program_source(x86_main(bits), RuntimeConfig())


def test_x86_64_native_on_many_random_doubles():
    if toolchain.native_missing() is not None:
        pytest.skip(toolchain.native_missing() or "")
    from ssa_course.codegen.native import run_native
    from ssa_course.codegen.x86_64.assemble import assemble

    bits = cases(2, 40000)
    r = run_native(assemble(plan_source_x86(bits), "own"), [], 120)
    assert (r.stderr, r.status) == ("", 0)
    check(r.stdout, bits)


def test_aarch64_prints_like_format_float():
    from ssa_course.codegen.aarch64.assemble import ASSEMBLERS, assemble, assembler_missing
    from ssa_course.codegen.aarch64.runtime import RuntimeConfig, program_source

    bits = cases(3, 1200)
    src = program_source(a64_main(bits), RuntimeConfig())
    images = [assemble(src, name) for name in ASSEMBLERS if assembler_missing(name) is None]
    for other in images[1:]:
        assert (other.text, other.data) == (images[0].text, images[0].data), other.backend
    ran = 0
    if toolchain.emulator_missing() is None:
        from ssa_course.codegen.aarch64.emulate import run_emulated

        r = run_emulated(images[0], [], 120)
        assert (r.stderr, r.status) == ("", 0)
        check(r.stdout, bits)
        ran += 1
    if a64_toolchain.qemu_missing() is None:
        from ssa_course.codegen.aarch64.run import run_qemu

        r = run_qemu(images[-1], [], 120)
        assert (r.stderr, r.status) == ("", 0)
        check(r.stdout, bits)
        ran += 1
    if not ran:
        pytest.skip("no way to run aarch64 code here")
