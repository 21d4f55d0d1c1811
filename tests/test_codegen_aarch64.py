"""The AArch64 target's parts: immediates, the encoder, the layout, the register file,
the verifier, ``--target`` on the command line (the corpus runs are in
``test_codegen_aarch64_corpus.py`` and the generic differential test)."""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssa_course.cli import main
from ssa_course.codegen.aarch64 import toolchain
from ssa_course.codegen.aarch64.encode import EncodeError, encode
from ssa_course.codegen.aarch64.immediates import (
    MASK64,
    arith_imm,
    decode_logical,
    logical_imm,
    mov_sequence,
)
from ssa_course.codegen.aarch64.layout import assemble_sections, lay_out, resolve
from ssa_course.codegen.x86_64.keystone_asm import AssemblerError

ROOT = Path(__file__).resolve().parent.parent
SUM = str(ROOT / "examples" / "sum.tiny")
u64 = st.integers(0, MASK64)
i64 = st.integers(-(1 << 63), (1 << 63) - 1)


# ---------------------------------------------------------------- immediates

def _run_sequence(seq: list[tuple[str, int, int]]) -> int:
    v = 0
    for op, imm, shift in seq:
        if op == "orr":
            v = imm
        elif op == "movz":
            v = imm << shift
        elif op == "movn":
            v = ~(imm << shift) & MASK64
        else:
            v = v & ~(0xFFFF << shift) & MASK64 | imm << shift
    return v


@given(i64)
def test_mov_sequence_builds_the_value(value):
    seq = mov_sequence(value)
    assert _run_sequence(seq) == value & MASK64
    assert 1 <= len(seq) <= 4
    assert all(0 <= imm <= 0xFFFF for op, imm, _ in seq if op != "orr")


def test_mov_sequence_picks_the_short_forms():
    assert mov_sequence(0) == [("movz", 0, 0)]
    assert mov_sequence(-5) == [("movn", 4, 0)]
    assert mov_sequence(0x12340000) == [("movz", 0x1234, 16)]
    assert mov_sequence(0x00FF00FF00FF00FF) == [("orr", 0x00FF00FF00FF00FF, 0)]
    assert len(mov_sequence(0x123456789)) == 3


@given(u64)
def test_logical_immediates_decode_back(value):
    fields = logical_imm(value)
    if fields is not None:
        assert decode_logical(*fields) == value


@given(st.sampled_from([2, 4, 8, 16, 32, 64]), st.data())
def test_every_rotated_run_of_ones_is_a_logical_immediate(size, data):
    ones = data.draw(st.integers(1, size - 1))
    rot = data.draw(st.integers(0, size - 1))
    e = (1 << ones) - 1
    e = ((e >> rot) | (e << (size - rot))) & ((1 << size) - 1) if rot else e
    value = sum(e << k for k in range(0, 64, size))
    assert logical_imm(value) is not None
    assert decode_logical(*logical_imm(value)) == value


def test_zero_and_all_ones_are_not_logical_immediates():
    assert logical_imm(0) is None and logical_imm(-1) is None
    assert logical_imm(0xCCCCCCCCCCCCCCCD) is None


@given(st.integers(-(1 << 30), 1 << 30))
def test_arith_immediates(value):
    fits = arith_imm(value)
    if fits is None:
        assert not (0 <= value < 4096) and not (value >= 0 and value % 4096 == 0
                                                and value < 4096 << 12)
    else:
        imm, shift = fits
        assert 0 <= imm < 4096 and imm << shift == value


# ---------------------------------------------------------------- the encoder

CONDS = ["eq", "ne", "hs", "lo", "mi", "pl", "hi", "ls", "ge", "lt", "gt", "le"]
PC = 0x401000


def _bitmask(rng: random.Random) -> int:
    size = rng.choice([2, 4, 8, 16, 32, 64])
    ones, rot = rng.randrange(1, size), rng.randrange(size)
    e = (1 << ones) - 1
    e = ((e >> rot) | (e << (size - rot))) & ((1 << size) - 1) if rot else e
    return sum(e << k for k in range(0, 64, size))


def random_instruction(rng: random.Random, branches: bool = True) -> str:
    """One instruction of a form the back end emits, with random fields."""
    d, n, m, a = (f"x{rng.randrange(31)}" for _ in range(4))
    k, cond, r = rng.randrange(64), rng.choice(CONDS), rng.randrange
    target = PC + 4 * r(-(1 << 17), 1 << 17)
    bitmask = _bitmask(rng)
    forms = [
        f"add {d}, {n}, #{r(4096)}", f"sub {d}, {n}, #{r(4096)}, lsl #12",
        f"subs {d}, {n}, #{r(4096)}", f"cmp {n}, #{r(4096)}", f"cmn {n}, #{r(4096)}",
        f"add {d}, {n}, {m}", f"sub {d}, {n}, {m}, {rng.choice(['lsl', 'lsr', 'asr'])} #{k}",
        f"cmp {n}, {m}", f"neg {d}, {m}", f"neg {d}, {m}, asr #{k}",
        f"and {d}, {n}, #{bitmask:#x}", f"orr {d}, xzr, #{bitmask:#x}",
        f"eor {d}, {n}, {m}", f"orr {d}, {n}, {m}", f"tst {n}, #{bitmask:#x}", f"tst {n}, {m}",
        f"mov {d}, {m}", f"mov {d}, sp", f"mov sp, {n}",
        f"movz {d}, #{r(0x10000):#x}, lsl #{16 * r(4)}", f"movn {d}, #{r(0x10000):#x}",
        f"movk {d}, #{r(0x10000):#x}, lsl #{16 * r(4)}",
        f"mul {d}, {n}, {m}", f"madd {d}, {n}, {m}, {a}", f"msub {d}, {n}, {m}, {a}",
        f"sdiv {d}, {n}, {m}", f"udiv {d}, {n}, {m}", f"smulh {d}, {n}, {m}",
        f"lsl {d}, {n}, #{k}", f"lsr {d}, {n}, #{k}", f"asr {d}, {n}, #{k}",
        f"cset {d}, {cond}", f"csel {d}, {n}, {m}, {cond}", f"cneg {d}, {n}, {cond}",
        f"ldr {d}, [{n}, #{8 * r(4096)}]", f"str {d}, [{n}]",
        f"ldur {d}, [{n}, #{r(-256, 256)}]", f"stur {d}, [{n}, #{r(-256, 256)}]",
        f"ldr {d}, [{n}, {m}, lsl #3]", f"str {d}, [{n}, {m}, lsl #3]",
        f"ldrb w{k % 31}, [{n}, {m}]", f"strb w{k % 31}, [{n}]",
        f"stp {d}, {a}, [sp, #{8 * r(-64, 64)}]!", f"ldp {d}, {a}, [sp], #{8 * r(-64, 64)}",
        f"stp {d}, {a}, [{n}, #{8 * r(-64, 64)}]", "ret", f"br {n}", "svc #0",
        *fp_forms(rng),
    ]
    if branches:
        forms += [f"b #{target:#x}", f"bl #{target:#x}", f"b.{cond} #{target:#x}",
                  f"cbz {n}, #{target:#x}", f"cbnz {n}, #{target:#x}",
                  f"adrp {d}, #{r(1 << 31) & ~0xFFF:#x}", f"adr {d}, .+{4 * r(1 << 16)}"]
    return rng.choice(forms)


def fp_forms(rng: random.Random) -> list[str]:
    """The FP forms floats use (encode_fp), with random d and x registers (xzr too)."""
    fd, fn, fm = (f"d{rng.randrange(32)}" for _ in range(3))
    x = rng.choice([f"x{rng.randrange(31)}", "xzr"])
    # fmov's 8-bit float immediate: +-(16 + m)/16 * 2^e
    c = rng.choice([1, -1]) * (16 + rng.randrange(16)) / 16 * 2.0 ** rng.randrange(-3, 5)
    return [f"fmov {fd}, {x}", f"fmov {x}, {fn}", f"fmov {fd}, {fn}", f"fmov {fd}, #{c!r}",
            f"fadd {fd}, {fn}, {fm}", f"fsub {fd}, {fn}, {fm}", f"fmul {fd}, {fn}, {fm}",
            f"fdiv {fd}, {fn}, {fm}", f"fneg {fd}, {fn}", f"fabs {fd}, {fn}",
            f"fcmp {fn}, {fm}",
            f"fcmp {fn}, #0.0", f"scvtf {fd}, {x}", f"fcvtzs {x}, {fn}"]


@pytest.mark.skipif(toolchain.keystone_missing() is not None,
                    reason=toolchain.keystone_missing() or "")
@settings(max_examples=500, deadline=None)
@given(st.randoms(use_true_random=False))
def test_own_encoder_agrees_with_keystone(rng):
    from keystone import KS_ARCH_ARM64, KS_MODE_LITTLE_ENDIAN, Ks

    text = random_instruction(rng)
    ks = Ks(KS_ARCH_ARM64, KS_MODE_LITTLE_ENDIAN)
    want = int.from_bytes(bytes(ks.asm(text, PC)[0]), "little")
    assert encode(text, PC) == want, f"{text}: {encode(text, PC):08x} != {want:08x}"


@pytest.mark.skipif(toolchain.gnu_missing() is not None, reason=toolchain.gnu_missing() or "")
def test_own_encoder_agrees_with_gnu_on_a_sample(tmp_path):
    """2000 random instructions (branch-free: GNU names targets by label) in one GNU
    run; the object file's text against the encoder, word by word."""
    from ssa_course.codegen.elf import read_elf

    rng = random.Random(21)
    sample = [random_instruction(rng, branches=False) for _ in range(2000)]
    src = tmp_path / "t.s"
    src.write_text(".text\n" + "".join(f"    {t}\n" for t in sample))
    gas = toolchain.gnu_tools()[0]  # type: ignore[index]
    subprocess.run([gas, "-o", str(tmp_path / "t.o"), str(src)], check=True)
    text = read_elf((tmp_path / "t.o").read_bytes()).text
    for k, t in enumerate(sample):
        assert encode(t, 4 * k) == int.from_bytes(text[4 * k:4 * k + 4], "little"), t


@pytest.mark.parametrize("bad", ["add x0, x1, #4097", "and x0, x1, #0", "ldr x0, [x1, #3]",
                                 "lsl x0, x1, #64", "b #0x401002", "frob x0", "add x31, x0, x1",
                                 "ldur x0, [x1, #300]", "stp x0, x1, [sp, #4]",
                                 "fadd d0, d1", "fadd d0, x1, d2", "fmov d0, sp",
                                 "scvtf x0, d1", "fcvtzs d0, x1", "fcmp d0, #1.0",
                                 "fmov d32, x0", "fmov d0, #0.1", "fmov d0, #0.0",
                                 "fmov d0, #32.0", "fmov d0, #x"])
def test_the_encoder_refuses_what_it_cannot_encode(bad):
    with pytest.raises(EncodeError):
        encode(bad, PC)


# ---------------------------------------------------------------- the layout

def test_layout_places_labels_and_data_in_one_pass():
    laid = lay_out(".text\n_start:\n  b .Lx\n.Lx:  // a comment\n  ret\n.data\n.balign 8\n"
                   "d: .quad 1, -1\ns: .ascii \"a//b\\012\"\n.bss\n.balign 8\nz: .zero 16\n",
                   0x1000, 0x2000, 0x3000)
    assert laid.labels == {"_start": 0x1000, ".Lx": 0x1004, "d": 0x2000, "s": 0x2010,
                           "z": 0x3000}
    assert bytes(laid.data[16:]) == b"a//b\n" and laid.bss == 16
    assert resolve("b .Lx", 0x1000, laid.labels) == "b #0x1004"
    assert resolve("adr x0, _start", 0x1004, laid.labels) == "adr x0, .-4"
    assert resolve("ldr x1, [x2, :lo12:s]", 0, laid.labels) == "ldr x1, [x2, #16]"


@pytest.mark.parametrize("source", ["a:\na:\n", ".text\n.quad 1\n", ".data\nret\n",
                                    ".text\nb nowhere\n", ".frob 1\n", ".bss\n.quad 1\n"])
def test_layout_refuses_bad_source(source):
    with pytest.raises(AssemblerError):
        assemble_sections(source, 0x1000, 0x2000, 0x3000)


# ---------------------------------------------------------------- the register file

def test_the_allocator_names_no_register():
    """regalloc, colouring, interference, liveness and spill read the target's register
    file: no x86-64 or AArch64 register name appears in their code."""
    names = re.compile(r"\"(r[a-d]x|r[sd]i|r[sb]p|r\d+|x\d+)\"")
    for module in ("regalloc", "colouring", "liveness", "spill"):
        text = (ROOT / "ssa_course" / "codegen" / f"{module}.py").read_text()
        assert not names.search(text), module


def test_register_files_are_data():
    from ssa_course.codegen.target import register_file
    from ssa_course.codegen.x86_64.registers import X86_64

    a64 = register_file("aarch64")
    assert a64.total == 31 and X86_64.total == 16
    assert len(a64.allocatable) == 24 and len(a64.arguments) == 8
    assert set(a64.callee_saved) <= set(a64.allocatable)
    assert "x16" not in a64.allocatable and "x28" not in a64.allocatable
    assert "reserved x28" in a64.text()
    with pytest.raises(Exception, match="unknown target"):
        register_file("mips")


# ---------------------------------------------------------------- the command line

@pytest.mark.parametrize("argv,message", [
    (["run", "--via", "quads", "--target", "aarch64", SUM, "3"], "machine-code stages"),
    (["run", "--via", "emulated", "--target", "arm", SUM, "3"], "unknown target 'arm'"),
    (["run", "--via", "emulated-aarch64", "--target", "x86-64", SUM, "3"], "not a stage"),
    (["run", "--via", "qemu", "--target", "x86-64", SUM, "3"], "not a stage"),
    (["show", "--as", "cfg", "--target", "aarch64", SUM], "machine-code stages"),
    (["compile", "--target", "sparc", "-o", "/dev/null", SUM], "unknown target"),
    (["compile", "--target", "aarch64", "--allocator", "spill-all", "-o", "/dev/null", SUM],
     "'color' allocator only"),
])
def test_bad_targets_are_one_line_errors(argv, message, capsys):
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


@given(st.text(min_size=1, max_size=12).filter(lambda t: t not in ("x86-64", "aarch64")
                                                and not t.startswith("-")))
@settings(max_examples=30, deadline=None)
def test_any_other_target_name_is_refused(name):
    from ssa_course.codegen.target import stage_for_target
    from ssa_course.errors import UsageError

    with pytest.raises(UsageError):
        stage_for_target("emulated", name)


def test_target_maps_machine_stages():
    from ssa_course.codegen.target import stage_for_target

    assert stage_for_target("emulated", "aarch64") == "emulated-aarch64"
    assert stage_for_target("asm-aarch64", "aarch64") == "asm-aarch64"
    assert stage_for_target("native", "x86-64") == "native"
    assert stage_for_target("cfg", None) == "cfg"


@pytest.mark.skipif(toolchain.emulator_missing() is not None,
                    reason=toolchain.emulator_missing() or "")
def test_run_with_target_aarch64(capsys):
    assert main(["run", "--via", "emulated", "--target", "aarch64", SUM, "10"]) == 0
    assert capsys.readouterr().out == "159\n"
    assert main(["show", "--as", "asm", "--target", "aarch64", SUM]) == 0
    listing = capsys.readouterr().out
    assert "smulh" in listing and "// line 5:" in listing and "tiny_main:" in listing
    assert "b.mi rt_" not in listing  # a stub of the function's own reaches them
    assert "b.mi .Lmain.far.rt_stack_overflow" in listing
    assert ".Lmain.far.rt_stack_overflow:\n    b rt_stack_overflow" in listing


def test_missing_says_why_in_one_line(monkeypatch):
    monkeypatch.setattr(toolchain.shutil, "which", lambda name: None)
    for reason in (toolchain.gnu_missing(), toolchain.qemu_missing()):
        assert reason and "\n" not in reason and "install" in reason
    monkeypatch.setattr(toolchain.platform, "machine", lambda: "x86_64")
    assert "aarch64 Linux" in (toolchain.native_missing() or "")


def test_pattern_table_names_every_marker():
    from ssa_course.codegen.aarch64 import patterns

    names = {p.name for p in patterns.PATTERNS}
    codegen = ROOT / "ssa_course" / "codegen"
    source = "".join(f.read_text() for f in (  # with the memory and calls both share
        codegen / "aarch64" / "select_ops.py", codegen / "aarch64" / "select_effects.py",
        codegen / "aarch64" / "select_float.py", codegen / "select_effects.py"))
    markers = set(re.findall(r"# pattern: ([^\n]+)$", source, re.MULTILINE))
    assert markers == names, markers ^ names
    assert all(p.name in patterns.table_text() for p in patterns.PATTERNS)


def test_verifier_names_the_broken_invariant():
    from ssa_course.codegen.aarch64.compile import compile_parts
    from ssa_course.codegen.aarch64.minstr import ins
    from ssa_course.codegen.aarch64.verify import verify_program
    from ssa_course.codegen.mir import Imm, PReg
    from ssa_course.compilation import compile_source
    from ssa_course.errors import VerifyError
    from ssa_course.registry import build

    comp = compile_source(Path(SUM).read_text(), "sum.tiny")
    compiled = compile_parts(build(comp, "scheduled").ssa)
    verify_program(compiled.mprog)
    block = compiled.mprog.functions["main"].blocks[1]
    block.instrs.insert(0, ins("lsl", PReg("x1"), PReg("x1"), Imm(64)))
    with pytest.raises(VerifyError, match="operand kinds legal"):
        verify_program(compiled.mprog)
    block.instrs[0] = ins("sub", PReg("sp"), PReg("sp"), Imm(8))
    with pytest.raises(VerifyError, match="stack 16-byte aligned"):
        verify_program(compiled.mprog)
    block.instrs[0] = ins("jmp", *[])
    with pytest.raises(VerifyError, match="branches name a label"):
        verify_program(compiled.mprog)


@pytest.mark.skipif(toolchain.emulator_missing() is not None,
                    reason=toolchain.emulator_missing() or "")
def test_an_arm_laptop_without_assemblers_runs_aarch64(monkeypatch, capsys, tmp_path):
    """platform.machine() says arm64, no keystone, no GNU tools on PATH: our own encoder
    makes the bytes, unicorn runs them; the default target is the host's."""
    import importlib.util
    import platform

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(platform, "machine", lambda: "arm64")
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "keystone" else real_find_spec(name, *a))
    monkeypatch.setattr(toolchain.shutil, "which", lambda name: None)
    from ssa_course.codegen.aarch64.assemble import default_assembler

    assert default_assembler() == "own" and toolchain.keystone_missing()
    source = ROOT / "tests" / "programs"
    for name, args in (("sum", ["10"]),):
        path = str(ROOT / "examples" / f"{name}.tiny")
        assert main(["run", "--via", "emulated", path, *args]) == 0  # the host's target
        assert capsys.readouterr().out == "159\n"
    assert main(["run", "--via", "emulated", "--target", "aarch64",
                 str(source / "stack_overflow.tiny")]) == 2
    assert "stack overflow" in capsys.readouterr().err
    exe = tmp_path / "sum"
    assert main(["compile", "-o", str(exe), SUM]) == 0
    assert exe.read_bytes()[18:20] == (183).to_bytes(2, "little")


MADD = """fn main(n: int) {
    var s = 0;
    var t = 100;
    for (var i = 0; i < n; i = i + 1) {
        s = s + t * n;
        t = t - i * 3000;
        var k = s * (n + 1);
        print(k, k + 7, s * 5 + 1);
    }
    print(s, t);
}
"""


def test_multiply_add_fuses_a_product_used_once(tmp_path, capsys):
    """``s + t * n`` is one ``madd``, ``t - i * 3000`` one ``msub`` (the constant in a
    register); ``k = s * (n + 1)``, used twice, stays a ``mul``, and ``s * 5 + 1`` an
    add with a shifted operand and an ``add #1``. (Products of the counter by an
    invariant variable, ``i * n``, become induction variables: codegen/strength.py.)"""
    src = tmp_path / "madd.tiny"
    src.write_text(MADD)
    assert main(["show", "--as", "asm", "--target", "aarch64", str(src)]) == 0
    listing = capsys.readouterr().out
    main_part = listing[listing.index("tiny_main:"):]
    count = {op: len(re.findall(rf"^\s+{op} ", main_part, re.MULTILINE))
             for op in ("madd", "msub", "mul")}
    assert count == {"madd": 1, "msub": 1, "mul": 1}, listing
    assert re.search(r"add x\d+, x\d+, x\d+, lsl #2", main_part), listing
    if toolchain.emulator_missing() is None:
        assert main(["run", "--via", "emulated", "--target", "aarch64", str(src), "4"]) == 0
        out = capsys.readouterr().out
        assert main(["run", str(src), "4"]) == 0
        assert out == capsys.readouterr().out


def test_loops_with_fuel_checks_branch_back_once(capsys):
    """Loop inversion with the fuel in x27: the back edge repeats the header's
    ``subs x27``/``b.mi``/``cmp`` and ends in one ``b.lt`` to the body (no ``b``
    back to a header)."""
    assert main(["show", "--as", "asm", "--target", "aarch64", SUM]) == 0
    listing = capsys.readouterr().out
    lines = [x.strip() for x in listing.splitlines()]
    backs = [k for k, x in enumerate(lines) if x.startswith("b.lt ")]
    assert backs, listing
    k = backs[0]
    assert lines[k - 3].startswith("subs x27, x27, #") and lines[k - 1].startswith("cmp ")


THREADED = """fn main(n: int) {
    var a = new int[n];
    for (var i = 0; i < n; i = i + 1) { a[i] = (i * 7919) % 13; }
    for (var i = 1; i < n; i = i + 1) {
        var v = a[i];
        var j = i - 1;
        while (j >= 0 && a[j] > v) { a[j + 1] = a[j]; j = j - 1; }
        a[j + 1] = v;
    }
    var kept = 0;
    for (var i = 0; i < n; i = i + 1) {
        var ok = i > 3 && a[i] > 5 || i == 0;
        if (ok) { kept = kept + 1; }
        if (i % 4 == 1 || !(a[i] < 7)) { kept = kept * 3; }
        print(a[i], ok);
    }
    print(kept);
}
"""


def test_bools_made_and_then_tested_are_threaded(tmp_path, capsys):
    """``j >= 0 && a[j] > v`` becomes ``cmp; b.gt`` (no cset, no cbz), the constant
    ``false`` edge a direct branch; a bool that is also printed keeps its cset. The
    output is the interpreter's on every size (0 and 1: loops that never run)."""
    from ssa_course.codegen import thread

    src = tmp_path / "threaded.tiny"
    src.write_text(THREADED)
    assert main(["show", "--as", "asm", "--target", "aarch64", str(src)]) == 0
    listing = capsys.readouterr().out
    # b.gt to the body, or b.le past it when the body is laid out next (jumps.place_taken_arms)
    assert re.search(r"cmp x\d+, x\d+\n(    add x\d+, x\d+, #1\n)?    b\.(gt|le) ", listing), \
        listing
    assert listing.count("cset") == 1, listing  # the printed `ok` only
    assert thread.MAX_BODY >= 1
    if toolchain.emulator_missing() is None:
        for n in ("0", "1", "2", "9", "40"):
            assert main(["run", "--via", "emulated", "--target", "aarch64", str(src), n]) == 0
            out = capsys.readouterr().out
            assert main(["run", str(src), n]) == 0
            assert out == capsys.readouterr().out, n


NEGATED_BOOLS = """fn main(n: int) {
    var seen = new bool[n];
    var hit = new bool[n];
    var count = 0;
    for (var i = 0; i < n; i = i + 1) {
        seen[i] = i % 3 == 0;
        hit[i] = i % 5 == 1;
    }
    for (var i = 0; i < n; i = i + 1) {
        if (!seen[i] && !hit[i] && !seen[n - 1 - i]) { count = count + 1; }
        if (!seen[i] || hit[i]) { count = count * 2 % 1000003; }
    }
    print(count);
}
"""


def test_negated_bools_are_tested_with_cbz(tmp_path, capsys):
    """``!seen[i] && ...``: the ``not`` of a loaded bool is no ``eor`` any more, the
    branch is ``cbz``/``cbnz`` on the loaded value."""
    src = tmp_path / "negated.tiny"
    src.write_text(NEGATED_BOOLS)
    assert main(["show", "--as", "asm", "--target", "aarch64", str(src)]) == 0
    listing = capsys.readouterr().out
    assert "eor " not in listing, listing
    if toolchain.emulator_missing() is None:
        for n in ("0", "1", "7", "30"):
            assert main(["run", "--via", "emulated", "--target", "aarch64", str(src), n]) == 0
            out = capsys.readouterr().out
            assert main(["run", str(src), n]) == 0
            assert out == capsys.readouterr().out, n


# ---------------------------------------------------------------- floats' FP forms

FP_PROGRAM = """.text
.globl _start
_start:
    movz x1, #0x3ff8, lsl #48
    movz x2, #0x4002, lsl #48
    movz x3, #0x7ff8, lsl #48
    movz x4, #4
    fmov d0, x1
    fmov d1, x2
    fadd d2, d0, d1
    scvtf d3, x4
    fmul d2, d2, d3
    fsub d2, d2, d0
    fdiv d2, d2, d1
    fneg d2, d2
    fmov d5, d2
    fmov x6, d5
    fmov d2, x6
    fabs d3, d2
    fsub d2, d3, d2
    fcvtzs x0, d2
    fmov d6, #-1.25
    fmov d7, xzr
    fsub d6, d7, d6
    fmov d5, #4.0
    fmul d6, d6, d5
    fcvtzs x7, d6
    add x0, x0, x7
    fcmp d0, d1
    cset x5, mi
    add x0, x0, x5, lsl #4
    fmov d4, x3
    fcmp d4, d1
    cset x5, mi
    add x0, x0, x5, lsl #5
    fcmp d4, #0.0
    cset x5, ne
    add x0, x0, x5, lsl #6
    movz x8, #94
    svc #0
.data
.balign 8
d: .quad 0
.bss
.balign 8
z: .zero 8
"""


@pytest.mark.skipif(toolchain.emulator_missing() is not None,
                    reason=toolchain.emulator_missing() or "")
@pytest.mark.parametrize("backend", ["own", "gnu", "keystone"])
def test_fp_forms_assemble_run_and_read_back(backend):
    """Every FP form floats use, through each assembler (same bytes as GNU's), unicorn
    and capstone: y = -(((1.5 + 2.25) * 4.0 - 1.5) / 2.25) = -6.0, |y| - y = 12.0
    truncates to 12; (0.0 - -1.25) * 4.0 adds 5; 1.5 < 2.25 sets bit 4; NaN < 2.25 is
    false (bit 5 clear); NaN != 0.0 is true (bit 6): 97."""
    from ssa_course.codegen.aarch64.assemble import assemble, assembler_missing
    from ssa_course.codegen.aarch64.disasm import disassemble
    from ssa_course.codegen.aarch64.emulate import run_emulated

    if reason := assembler_missing(backend):
        pytest.skip(reason)
    image = assemble(FP_PROGRAM, backend)
    if assembler_missing("gnu") is None:
        assert image.text == assemble(FP_PROGRAM, "gnu").text
    assert run_emulated(image, []).status == 97
    listing = disassemble(image)
    assert "not decoded" not in listing
    for form in ("fmov d0, x1", "fadd d2, d0, d1", "scvtf d3, x4", "fcvtzs x0, d2",
                 "fcmp d4, #0.0", "fmov x6, d5", "fmov d5, d2", "fneg d2, d2",
                 "fabs d3, d2", "fmov d6, #-1.25", "fmov d7, xzr"):
        assert form in listing, listing
