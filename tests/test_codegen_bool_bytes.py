"""A ``[bool]`` element takes one byte in machine code on both targets (an int or a
reference element eight): the allocation entry, the accesses and the bounds arithmetic
agree. What the programs print is checked on every stage by the corpus program
``tests/programs/bool_bytes.tiny`` (tests/test_differential.py); here, the shapes."""

from __future__ import annotations

import re

from ssa_course.codegen.aarch64.compile import compile_parts
from ssa_course.codegen.compile import compile_program
from ssa_course.codegen.select_effects import element_width
from ssa_course.compilation import compile_source
from ssa_course.registry import build
from ssa_course.tiny.types import BOOL, INT, ArrayType

PROGRAM = """
fn main(n: int, k: int) {
    var flags = new bool[n];
    var ints = new int[n];
    flags[k] = true;
    ints[k] = 7;
    print(flags[k], ints[k], flags[3]);
}
"""


def _ssa(source: str):
    return build(compile_source(source, "t.tiny"), "scheduled").ssa


def test_element_width_is_a_byte_for_bool_only():
    assert element_width(ArrayType(BOOL)) == 1
    assert element_width(ArrayType(INT)) == 8
    assert element_width(ArrayType(ArrayType(BOOL))) == 8  # a row is a reference
    assert element_width(None) == 8


def test_x86_64_bool_elements_are_bytes():
    _, text = compile_program(_ssa(PROGRAM), None, step_limit=None)
    assert "call rt_new_bytes" in text and "call rt_new_array" in text
    assert re.search(r"mov byte ptr \[\w+ \+ \w+ \+ 8\], 1", text), text  # flags[k] = true
    assert re.search(r"mov qword ptr \[\w+ \+ \w+\*8 \+ 8\], 7", text), text  # ints[k] = 7
    assert re.search(r"movzx e\w+, byte ptr \[\w+ \+ 11\]", text), text  # flags[3]: 8 + 3


def test_aarch64_bool_elements_are_bytes():
    text = compile_parts(_ssa(PROGRAM), fuel=False).program_asm
    assert "bl rt_new_bytes" in text and "bl rt_new_array" in text
    assert re.search(r"strb w\w+, \[x\d+, x\d+\]", text), text  # flags[k]: no shift
    assert re.search(r"ldrb w\d+, \[x\d+, #3\]", text), text  # flags[3]
    assert re.search(r"str x\w+, \[x\d+, x\d+, lsl #3\]", text), text  # ints[k]
