"""x86-64 peepholes after allocation (codegen/x86_peep.py): a reload only compared is
compared in memory; a test for zero after an add reads the add's flags."""

from __future__ import annotations

from pathlib import Path

from ssa_course.codegen.mir import Imm, LabelRef, MBlock, Mem, MFunction, MInstr, PReg, Slot
from ssa_course.codegen.x86_64.emit import instr_text
from ssa_course.codegen.x86_64.peep import peephole
from ssa_course.compilation import load_file
from ssa_course.lessons.l11_codegen import compile_machine

RAX, RDX, R14 = PReg("rax"), PReg("rdx"), PReg("r14")
KERNELS = Path(__file__).resolve().parent.parent / "benchmarks/native/kernels"


def _reload(r: PReg, k: int) -> MInstr:
    return MInstr("mov", [r, Slot(k)], [r], [])


def _branch(cond: str) -> list[MInstr]:
    return [MInstr("jcc", [LabelRef("L")], cond=cond), MInstr("jmp", [LabelRef("R")])]


def _fn(body: list[MInstr], head: list[MInstr] | None = None) -> MFunction:
    """A loop L -> L | R; ``head``: L's first instructions (default: none reading flags)."""
    loop = MBlock("L", [*(head or []), *body], ["L", "R"])
    return MFunction("f", [], [MBlock("E", [MInstr("jmp", [LabelRef("L")])], ["L"]), loop,
                               MBlock("R", [MInstr("ret", uses=[R14])], [])])


def _text(fn: MFunction, label: str = "L") -> list[str]:
    return [instr_text(fn, i) for i in fn.block_map()[label].instrs]


def test_a_reload_only_compared_is_compared_in_memory():
    fn = _fn([_reload(RAX, 0), MInstr("cmp", [R14, RAX], [], [R14, RAX]), *_branch("l")])
    assert peephole(fn) == 1
    assert _text(fn)[0].startswith("cmp r14, qword ptr [") and len(_text(fn)) == 3
    fn = _fn([_reload(RAX, 1), MInstr("test", [RAX, RAX], [], [RAX]), *_branch("e")])
    assert peephole(fn) == 1
    assert _text(fn)[0].startswith("cmp qword ptr [") and _text(fn)[0].endswith(", 0")
    fn = _fn([_reload(RAX, 1), MInstr("cmp", [RAX, Imm(7)], [], [RAX]), *_branch("g")])
    assert peephole(fn) == 1 and _text(fn)[0].endswith(", 7")


def test_a_reload_read_again_later_stays():
    """The register is read after the compare (here by the next iteration's `lea`): the
    reload must stay, and so must its compare."""
    body = [_reload(RAX, 0), MInstr("cmp", [R14, RAX], [], [R14, RAX]), *_branch("l")]
    head = [MInstr("lea", [R14, Mem(RAX, disp=1)], [R14], [RAX])]
    fn = _fn(body, head)
    fn.blocks[0].instrs.insert(0, _reload(RAX, 0))
    assert peephole(fn) == 0


def test_a_test_for_zero_after_an_add_reads_its_flags():
    step = MInstr("lea", [RDX, Mem(RDX, disp=-1)], [RDX], [RDX])
    fn = _fn([step, MInstr("test", [RDX, RDX], [], [RDX]), *_branch("ge")])
    assert peephole(fn) == 1
    assert _text(fn) == ["sub rdx, 1", "jns L", "jmp R"]
    # `jg` reads OF too, which `sub` may set where `test` clears it: left alone
    step = MInstr("lea", [RDX, Mem(RDX, disp=-1)], [RDX], [RDX])
    fn = _fn([step, MInstr("test", [RDX, RDX], [], [RDX]), *_branch("g")])
    assert peephole(fn) == 0
    # flags read again where the jump goes (never built so; the check does not assume it)
    step = MInstr("add", [RDX, Imm(2)], [RDX], [RDX])
    reader = [MInstr("jcc", [LabelRef("R")], cond="e")]
    fn = _fn([step, MInstr("test", [RDX, RDX], [], [RDX]), *_branch("ne")], head=reader)
    fn.blocks[1].succs = ["L", "R"]
    assert peephole(fn) == 0


def _listing(name: str, fn: str) -> list[str]:
    compiled = compile_machine(load_file(str(KERNELS / f"{name}.tiny")), fuel=False)
    mfn = compiled.mprog.functions[fn]
    return [instr_text(mfn, i) for b in mfn.blocks for i in b.instrs]


def test_insertion_sorts_inner_loop_steps_down_with_one_sub():
    """`j = j - 1` then `j >= 0`: `sub r, 1; jns` (it was `lea r, [r - 1]; test r, r; jge`).
    The loop's entry, `j = i - 1` into another register, keeps its test."""
    lines = _listing("insertion_sort", "main")
    assert any(s.startswith("sub ") and s.endswith(", 1") and lines[n + 1].startswith("jns")
               for n, s in enumerate(lines))
    for n, s in enumerate(lines[1:], 1):
        if s.startswith("test "):
            reg = s.split()[1].rstrip(",")
            assert lines[n - 1] != f"lea {reg}, [{reg} - 1]", lines[n - 1:n + 2]


def test_nqueens_compares_its_spilled_bound_in_memory():
    """No reload is followed by a compare that was its only reader."""
    lines = _listing("nqueens", "place")
    for n, s in enumerate(lines[:-1]):
        if s.startswith("mov ") and "qword ptr [rbp" in s and s.split()[1].endswith(","):
            reg = s.split()[1].rstrip(",")
            nxt = lines[n + 1]
            assert not (nxt.startswith("cmp ") and nxt.endswith(f", {reg}")
                        and reg not in " ".join(lines[n + 2:n + 4])), (s, nxt)


def test_a_loaded_element_only_added_is_added_from_memory():
    """prefix_sums' `s = s + a[i]`: `mov rax, [a + i*8 + 8]; lea rsi, [rsi + rax]` is
    `add rsi, [a + i*8 + 8]` when rax dies and nobody reads the add's flags."""
    rcx, rsi = PReg("rcx"), PReg("rsi")
    element = Mem(rcx, RDX, 8, 8)
    load = MInstr("mov", [RAX, element], [RAX], [rcx, RDX])
    lea = MInstr("lea", [rsi, Mem(rsi, RAX)], [rsi], [rsi, RAX])
    step = [MInstr("cmp", [RDX, R14], [], [RDX, R14]), *_branch("l")]
    fn = _fn([load, lea, *step])
    assert peephole(fn) == 1
    assert _text(fn)[0] == "add rsi, qword ptr [rcx + rdx*8 + 8]"
    # the flags of the add would be read: the lea stays
    load = MInstr("mov", [RAX, Mem(rcx, RDX, 8, 8)], [RAX], [rcx, RDX])
    lea = MInstr("lea", [rsi, Mem(rsi, RAX)], [rsi], [rsi, RAX])
    fn = _fn([load, lea, *_branch("l")])
    assert peephole(fn) == 0
    # an imul reads its second operand from memory too (matmul's product)
    load = MInstr("mov", [RAX, Mem(rcx, RDX, 8, 8)], [RAX], [rcx, RDX])
    mul = MInstr("imul", [rsi, RAX], [rsi], [rsi, RAX])
    fn = _fn([load, mul, *step])
    assert peephole(fn) == 1 and _text(fn)[0] == "imul rsi, qword ptr [rcx + rdx*8 + 8]"


def test_prefix_sums_and_matmul_read_their_elements_in_the_arithmetic():
    sums = _listing("prefix_sums", "main")
    assert any(s.startswith("add ") and s.endswith("*8 + 8]") for s in sums), sums
    products = _listing("matmul", "main")
    assert any(s.startswith("imul ") and "qword ptr [" in s for s in products), products
