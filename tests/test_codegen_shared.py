"""The pieces both codegen targets share (#23): our two assemblers' reading of comments,
strings and data, the disassembly listing's walk over functions, the operand kinds."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ssa_course.codegen.aarch64.layout import lay_out as lay_out_a64
from ssa_course.codegen.aarch64.minstr import Shift
from ssa_course.codegen.aarch64.verify import _kind as a64_kind
from ssa_course.codegen.asm_data import AssemblerError, ascii_bytes, data_bytes, strip_comment
from ssa_course.codegen.mir import Imm, LabelRef, Mem, PReg, Slot, VReg
from ssa_course.codegen.runtime_abi import ascii_directive
from ssa_course.codegen.verify_shared import operand_kind


@pytest.mark.parametrize(("line", "marker", "kept"), [
    ("    mov rax, 1  # one", "#", "mov rax, 1"),
    ('    .ascii "a # b"  # text', "#", '.ascii "a # b"'),
    ('    .ascii "say \\"#\\""', "#", '.ascii "say \\"#\\""'),
    ("    mov x0, #1  // one", "//", "mov x0, #1"),
    ('    .ascii "a // b" // text', "//", '.ascii "a // b"'),
    ("// only a comment", "//", ""),
    ("no comment at all ", "//", "no comment at all"),
])
def test_strip_comment_keeps_markers_inside_strings(line, marker, kept):
    assert strip_comment(line, marker) == kept


@pytest.mark.parametrize(("word", "arg", "data"), [
    (".quad", "1, -1", (1).to_bytes(8, "little") + b"\xff" * 8),
    (".quad", "0x10000000000000000", bytes(8)),  # wraps to 64 bits
    (".byte", "1, 255, 256", b"\x01\xff\x00"),
    (".zero", "3", bytes(3)),
    (".ascii", '"a\\012\\"b"', b'a\n"b'),
])
def test_data_bytes(word, arg, data):
    assert data_bytes(word, arg) == data


@pytest.mark.parametrize(("word", "arg"), [(".ascii", "no quotes"), (".ascii", '"\\q"'),
                                           (".word", "1")])
def test_data_bytes_rejects_what_it_cannot_read(word, arg):
    with pytest.raises(AssemblerError):
        data_bytes(word, arg)


@given(st.text(max_size=40))
def test_ascii_bytes_reads_what_the_runtime_writes(text):
    directive = ascii_directive(text)
    assert ascii_bytes(directive.removeprefix(".ascii ")) == text.encode("utf-8")


@given(st.text(max_size=40))
def test_aarch64_data_is_laid_out_with_the_shared_reader(text):
    source = f".data\nmsg: // a label\n    {ascii_directive(text)} // the string\n    .quad 7\n"
    laid = lay_out_a64(source, 0x1000, 0x2000, 0x3000)
    assert bytes(laid.data) == text.encode("utf-8") + (7).to_bytes(8, "little")
    assert laid.labels["msg"] == 0x2000


def test_operand_kinds_are_one_table_for_both_targets():
    operands = [VReg(1), PReg("rax"), Mem(PReg("rbp"), disp=-8), Slot(0), Imm(3),
                LabelRef("L")]
    assert "".join(operand_kind(o) for o in operands) == "rrmmil"
    # AArch64 adds its shifted-register operand and reads every other one the same way
    assert [a64_kind(o) for o in operands] == [operand_kind(o) for o in operands]
    assert a64_kind(Shift("lsl", 3)) == "s"
