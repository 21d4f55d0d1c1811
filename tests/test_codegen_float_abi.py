"""The target-neutral half of floats in machine code (codegen/float_abi.py, issue #36):
a float's bits as an integer constant, and where each argument travels at a call."""

import math

from ssa_course.codegen.float_abi import Place, arg_places, bits_float, float_bits


def test_float_bits_are_ieee_and_signed():
    assert float_bits(0.0) == 0
    assert float_bits(-0.0) == -(1 << 63)  # not 0: -0.0 prints differently
    assert float_bits(1.0) == 0x3FF0000000000000
    assert float_bits(-2.0) == 0xC000000000000000 - (1 << 64)
    assert float_bits(math.inf) == 0x7FF0000000000000
    for x in (0.1, -1e308, 5e-324, math.inf, -math.inf, -0.0):
        assert bits_float(float_bits(x)) == x
        assert math.copysign(1.0, bits_float(float_bits(x))) == math.copysign(1.0, x)
    assert math.isnan(bits_float(float_bits(math.nan)))


def test_each_class_fills_its_own_registers_then_the_stack_in_order():
    # System V: f(int a, double b, int c, double d) -> rdi, xmm0, rsi, xmm1
    assert arg_places([False, True, False, True], 6, 8) == [
        Place("int", 0), Place("float", 0), Place("int", 1), Place("float", 1)]
    # ten floats and seven ints: floats 9 and 10 and int 7 on the stack, in argument order
    floats = [True] * 9 + [False] * 7 + [True]
    places = arg_places(floats, 6, 8)
    assert [p for p in places if p.kind == "stack"] == [
        Place("stack", 0), Place("stack", 1), Place("stack", 2)]
    assert places[8] == Place("stack", 0) and places[15] == Place("stack", 1)
    assert places[16] == Place("stack", 2)
    # no float registers (a target passing floats like ints): the integer rule
    assert arg_places([True, False], 6, 0) == [Place("stack", 0), Place("int", 0)]
