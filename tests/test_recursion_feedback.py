"""A right recursive walk that overflows Python's stack on a long input is told so: the
input's size and the worklist hint, not "a recursion without a base case" (#37)."""

from __future__ import annotations

import pytest

from ssa_course.grading.check import Mismatch, check_against


def _recursive_reachable(succs: dict) -> set:
    seen: set = set()

    def walk(b: str) -> None:
        if b not in seen:
            seen.add(b)
            for s in succs[b]:
                walk(s)

    walk("b0")
    return seen


def test_a_long_input_that_overflows_the_stack_names_its_size_and_a_worklist():
    chain = {f"b{i}": [f"b{i + 1}"] for i in range(3000)}
    chain["b3000"] = []
    with pytest.raises(Mismatch) as caught:
        check_against(_recursive_reachable, lambda c: set(c), [chain], size=len,
                      describe=lambda c: f"a chain of {len(c):,} blocks", what="set")
    text = str(caught.value)
    assert "(RecursionError)" in text and "on an input of 3,001 items" in text
    assert "worklist" in text and "base case" not in text
    assert "on this input:\na chain of 3,001 blocks" in text


def test_a_short_input_keeps_the_base_case_question():
    loop = {"b0": ["b1"], "b1": ["b0"]}

    def endless(succs: dict) -> set:
        return endless(succs)

    with pytest.raises(Mismatch) as caught:
        check_against(endless, lambda c: set(c), [loop], size=len, what="set")
    assert "base case" in str(caught.value) and "on this input" in str(caught.value)
