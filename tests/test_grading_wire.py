"""What comes back from the sandbox (grading/wire.py): plain data of a fixed schema,
rebuilt from the grader's own classes; anything else is the sender's loss."""

from __future__ import annotations

import json
import math

import pytest

from ssa_course.grading import wire
from ssa_course.grading.detach import Foreign


def _round_trip(value: object) -> object:
    got = wire.read(wire.message("value", value))
    assert got.kind == "value"
    return got.value


def test_plain_values_keep_their_types():
    value = {"a": [1, (2, 3)], "b": {4, 5}, "c": frozenset({"x"}), "d": None, "e": True,
             "f": 2**70, "g": -0.0, "h": b"\x00\xff", (1, 2): "tuple key"}
    back = _round_trip(value)
    assert back == value
    assert type(back["a"][1]) is tuple and type(back["c"]) is frozenset
    assert back["e"] is True and type(back["f"]) is int
    assert math.isnan(_round_trip(float("nan")))  # type: ignore[arg-type]


def test_course_objects_come_back_as_the_graders_own_with_their_cycles():
    from ssa_course.quads.ir import Instr, Label
    from ssa_course.son.types import INT_BOTTOM, IntType

    sent = [Label("l"), Instr("add", dest="x", args=["a", "b"]), INT_BOTTOM, IntType(1, 5)]
    back = _round_trip(sent)
    assert [type(v) for v in back] == [type(v) for v in sent]
    assert repr(back) == repr(sent)
    assert back[2:] == sent[2:]  # value types compare by their fields
    from ssa_course.grading.son import sea

    graph = sea("fn main(n: int) { var i = 0; while (i < n) { i = i + 1; } print(i); }")
    node = max(graph.functions["main"].nodes(), key=lambda n: n.id)
    again = _round_trip(node)
    assert type(again) is type(node) and again.id == node.id
    assert [i.id for i in again.inputs if i is not None] == \
        [i.id for i in node.inputs if i is not None]


def test_what_is_not_data_arrives_as_a_marker():
    marker = _round_trip(Foreign("a generator", "<generator object f>"))
    assert isinstance(marker, Foreign) and marker.kind == "a generator"


@pytest.mark.parametrize("body", [
    b"not json",
    b"[1, 2]",
    json.dumps({"kind": "value", "value": {"obj": "os:system", "id": 0, "state": {}}}),
    json.dumps({"kind": "value", "value": {"obj": "ssa_course.grading.box:Box", "id": 0,
                                          "state": {}}}),
    json.dumps({"kind": "value", "value": {"obj": "ssa_course.__main__:X", "id": 0,
                                          "state": {}}}),
    json.dumps({"kind": "value", "value": {"obj": "ssa_course.quads.ir:Label", "id": 0,
                                          "state": {"__class__": 1}}}),
    json.dumps({"kind": "value", "value": {"ref": 7}}),
    json.dumps({"kind": "value", "value": {"list": 3}}),
    json.dumps({"kind": "value", "value": {"mystery": []}}),
    json.dumps({"kind": "print everything", "text": ""}),
    json.dumps({"kind": "raised", "text": ["not", "a", "string"]}),
    json.dumps({"kind": "value", "value": {"list": [{"list": []}]} , "extra": 1}),
])
def test_a_message_out_of_the_schema_is_refused(body):
    import sys

    data = body if isinstance(body, bytes) else body.encode()
    before = set(sys.modules)
    with pytest.raises(wire.WireError):
        wire.read(data)
    assert "ssa_course.__main__" not in set(sys.modules) - before  # never imported


def test_deep_nesting_is_refused_not_a_crash():
    depth = wire.MAX_DEPTH + 10
    text = '{"kind": "value", "value": ' + '{"list": [' * depth + "1" + "]}" * depth + "}"
    with pytest.raises(wire.WireError):
        wire.read(text.encode())
