"""The two assemblers agree byte for byte at the edges of branch relaxation and of the
source subset; the ELF writer and reader round-trip; the capstone listing names things."""

from __future__ import annotations

import pytest
from codegen_harness import images, observe, same_bytes, source

from ssa_course.codegen import toolchain
from ssa_course.codegen.elf import Sections, read_elf, write_elf
from ssa_course.codegen.x86_64.keystone_asm import AssemblerError, parse


def _nops(k: int) -> str:
    return "    nop\n" * k


@pytest.mark.parametrize("k", [126, 127, 128, 129])
def test_branch_relaxation_at_the_edge_of_a_byte(k):
    # forward jz over k bytes, backward jmp over k bytes, a call and a backward lea
    main = (f"tiny_main:\n    xor eax, eax\n    test rax, rax\n    jz .Lfwd\n{_nops(k)}"
            f".Lfwd:\n    jmp .Lover\n.Lback:\n{_nops(k)}    ret\n.Lover:\n"
            "    lea rcx, [rip + .Lback]\n    lea rdx, [rip + rt_numbuf + 8]\n"
            f"    call .Lsub\n    ret\n.Lsub:\n{_nops(k)}    jnz .Lback\n    ret\n")
    imgs = images(source(main))
    if len(imgs) < 2:
        pytest.skip(toolchain.gnu_missing() or toolchain.keystone_missing() or "")
    same_bytes(imgs[0], imgs[1])


def test_relaxation_cascades():
    # growing the first jump pushes the second one's target out of byte range
    main = ("tiny_main:\n    jmp .La\n    jmp .Lb\n" + _nops(124) + ".La:\n    nop\n"
            + _nops(1) + ".Lb:\n    ret\n")
    imgs = images(source(main))
    if len(imgs) < 2:
        pytest.skip(toolchain.gnu_missing() or toolchain.keystone_missing() or "")
    same_bytes(imgs[0], imgs[1])


def test_data_directives_and_strings_agree():
    main = "tiny_main:\n    ret\n"
    src = source(main) + ('.data\nextra:\n    .byte 1, 255, -1\n    .ascii "a#b\\"c\\\\\\012"\n'
                          "    .balign 16\n    .quad -1, 0x7fffffffffffffff\n.bss\n"
                          "    .balign 16\nmore:\n    .zero 24\n")
    imgs = images(src)
    if len(imgs) < 2:
        pytest.skip(toolchain.gnu_missing() or toolchain.keystone_missing() or "")
    same_bytes(imgs[0], imgs[1])


def test_the_keystone_path_refuses_what_it_cannot_place():
    with pytest.raises(AssemblerError, match="unsupported directive"):
        parse(".data\n.long 5\n")
    with pytest.raises(AssemblerError, match="instruction outside .text"):
        parse(".data\n    mov rax, rbx\n")
    if toolchain.keystone_missing() is None:
        from ssa_course.codegen.x86_64.keystone_asm import assemble_keystone

        with pytest.raises(AssemblerError, match="undefined label 'nowhere'"):
            assemble_keystone("f:\n    jmp nowhere\n", 0x401000, 0x20000000, 0x30000000)
        with pytest.raises(AssemblerError, match="undefined symbol 'nothing'"):
            assemble_keystone("f:\n    lea rax, [rip + nothing]\n", 0x401000, 0x20000000,
                              0x30000000)


def test_elf_round_trip():
    s = Sections(b"\x90\xc3", 0x401000, b"\x01\x02\x03", 0x20000000, 64, 0x30000000,
                 0x401000, {"_start": 0x401000, "tiny_main": 0x401001, "v": 0x20000001,
                            "b": 0x30000008})
    back = read_elf(write_elf(s))
    assert back == s


def test_gnu_executable_reads_back_with_its_symbols():
    imgs = images(source("tiny_main:\n    ret\n"))
    img = imgs[0]
    assert img.entry == img.symbols["_start"] == img.text_addr
    assert img.symbols["tiny_main"] == img.text_addr + len(img.text) - 1
    assert img.function_bytes("tiny_main") == b"\xc3"
    assert not any(n.startswith(".L") for n in img.symbols)
    assert img.symbols["rt_fuel"] == img.data_addr


def test_disassembly_lists_each_function_with_bytes_and_targets():
    if toolchain.disassembler_missing():
        pytest.skip(toolchain.disassembler_missing())
    from ssa_course.codegen.x86_64.disasm import disassemble

    img = images(source("tiny_main:\n    mov rdi, 3\n    call rt_print_int\n    ret\n"))[0]
    text = disassemble(img, ["tiny_main"])
    lines = text.splitlines()
    assert lines[0] == f"{img.symbols['tiny_main']:016x} <tiny_main>:"
    assert "48 c7 c7 03 00 00 00" in lines[1] and lines[1].endswith("mov rdi, 3")
    assert lines[2].endswith("<rt_print_int>") and " call 0x" in lines[2]
    assert lines[3].endswith("ret")
    whole = disassemble(img)
    assert whole.count(">:\n") == len(img.sizes)
    assert "<rt_flush>:" in whole and "syscall" in whole


def test_assembled_by_keystone_runs_the_same():
    # observe() also runs the keystone-written ELF natively and compares
    r = observe(source("tiny_main:\n    mov rdi, -5\n    call rt_print_int\n"
                       "    call rt_print_newline\n    ret\n"), [])
    assert (r.stdout, r.status) == ("-5\n", 0)


def test_backend_differences_is_empty_when_they_agree_and_names_what_differs():
    if toolchain.gnu_missing() or toolchain.keystone_missing():
        pytest.skip(toolchain.gnu_missing() or toolchain.keystone_missing() or "")
    from ssa_course.codegen import assemble as images
    from ssa_course.codegen.x86_64 import assemble as asm

    src = source("tiny_main:\n    mov rdi, 1\n    ret\n")
    assert asm.backend_differences(src) == []
    ks = asm.assemble(src, "keystone")
    start = ks.symbols["tiny_main"] - ks.text_addr
    broken = ks.text[:start] + b"\x90" + ks.text[start + 1:]
    asm._CACHE[(images.source_hash(src), "keystone")] = images.Image(
        broken, ks.data, ks.bss_size, ks.symbols, ks.entry, ks.path, "keystone",
        sizes=ks.sizes)
    try:
        assert asm.backend_differences(src) == ["tiny_main"]
    finally:
        del asm._CACHE[(images.source_hash(src), "keystone")]


def test_disassembly_names_rip_relative_data():
    if toolchain.disassembler_missing():
        pytest.skip(toolchain.disassembler_missing())
    from ssa_course.codegen.x86_64.disasm import disassemble

    img = images(source("tiny_main:\n    sub qword ptr [rip + rt_fuel], 2\n"
                        "    lea rax, [rip + rt_numbuf + 8]\n    ret\n"))[0]
    lines = disassemble(img, ["tiny_main"]).splitlines()
    assert lines[1].endswith("# rt_fuel") and lines[2].endswith("# rt_numbuf+0x8")


def test_a_label_defined_twice_is_refused():
    if toolchain.keystone_missing():
        pytest.skip(toolchain.keystone_missing())
    from ssa_course.codegen.x86_64.keystone_asm import assemble_keystone

    with pytest.raises(AssemblerError, match="'.La' is already defined"):
        assemble_keystone("f:\n.La:\n    ret\ng:\n.La:\n    ret\n", 0x401000, 0x20000000,
                          0x30000000)


def test_saved_executable_runs_with_arguments(tmp_path):
    if toolchain.native_missing():
        pytest.skip(toolchain.native_missing())
    import subprocess

    from ssa_course.codegen.assemble import save_executable
    from ssa_course.codegen.x86_64.run import run_native

    main = "tiny_main:\n    call rt_print_int\n    call rt_print_newline\n    ret\n"
    src = source(main, (("n", "int"),))
    r = run_native(src, ["-12"])  # assembly source in, assembled on the way
    assert (r.stdout, r.status) == ("-12\n", 0)
    target = tmp_path / "prog"
    save_executable(images(src)[0], str(target))
    done = subprocess.run([str(target), "7"], capture_output=True, text=True, check=False)
    assert (done.stdout, done.returncode) == ("7\n", 0)
