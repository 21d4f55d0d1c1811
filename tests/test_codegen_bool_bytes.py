"""A ``[bool]`` element takes one byte in machine code on both targets (an int or a
reference element eight): the allocation entry, the accesses and the bounds arithmetic
agree. What the programs print is checked on every stage by the corpus program
``tests/programs/bool_bytes.tiny`` (tests/test_differential.py); here, the shapes."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ssa_course import registry
from ssa_course.codegen.aarch64.compile import compile_parts
from ssa_course.codegen.select_effects import element_width
from ssa_course.codegen.x86_64.compile import compile_program
from ssa_course.compilation import compile_source
from ssa_course.registry import build
from ssa_course.stages import run as run_stage
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


# Pseudo-random stores and loads on a [bool] and an [int] of the same length, driven by
# the arguments: every byte written must read back, and leave its neighbours alone.
MIXER = """
fn main(n: int, seed: int, ops: int) {
    var flags = new bool[n];
    var ints = new int[n];
    var x = seed;
    var sum = 0;
    for (var k = 0; k < ops; k = k + 1) {
        x = (x * 1103515245 + 12345) % 2147483648;
        var i = x % n;
        if (x % 3 == 0) {
            flags[i] = !flags[i];
            ints[i] = ints[i] + 1;
        } else if (flags[i]) {
            sum = sum + i;
        }
    }
    var set = 0;
    for (var i = 0; i < n; i = i + 1) {
        if (flags[i]) { set = set + 1; }
        if (flags[i] != (ints[i] % 2 == 1)) { print(-1, i); }
    }
    print(set, sum, flags[n - 1]);
}
"""
_MIXER = compile_source(MIXER, "mixer.tiny")
STAGES = [s for s in ("native", "emulated", "qemu-aarch64", "emulated-aarch64")
          if registry.representation(s).unavailable() is None]


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 40), st.integers(0, 2**31 - 1), st.integers(0, 120))
def test_random_byte_traffic_agrees_with_the_interpreter(n, seed, ops):
    args = [str(n), str(seed), str(ops)]
    expected = run_stage(_MIXER, args, via="quads")
    assert expected.status == 0, expected.error
    for stage in STAGES:
        got = run_stage(_MIXER, args, via=stage)
        assert (got.stdout, got.status) == (expected.stdout, 0), (stage, got.error)
