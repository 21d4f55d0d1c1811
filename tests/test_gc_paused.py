"""Representations are built with CPython's cyclic garbage collector paused.

A big program's IR is hundreds of thousands of live objects; each full collection rescans
them all (measured: CFG rebuilding of a 10k-statement program 10x slower with the collector
on). ``Compilation.cached`` is the one place that pauses it; these tests pin that down.
"""

from __future__ import annotations

import gc

import pytest

from ssa_course.compilation import compile_source

PROGRAM = "fn main(n: int) { print(n + 1); }\n"


def test_builds_run_with_the_collector_paused_and_it_comes_back():
    comp = compile_source(PROGRAM)
    seen = []
    assert gc.isenabled()
    comp.cached("probe", lambda: seen.append(gc.isenabled()) or comp.quads)
    assert seen == [False] and gc.isenabled()


def test_the_front_end_itself_is_built_that_way(monkeypatch):
    import ssa_course.tiny as tiny

    states = []
    real = tiny.compile_tiny
    monkeypatch.setattr(tiny, "compile_tiny",
                        lambda *a: states.append(gc.isenabled()) or real(*a))
    comp = compile_source(PROGRAM)
    assert comp.quads is comp.quads and states == [False] and gc.isenabled()


def test_a_failing_build_restores_the_collector():
    comp = compile_source("fn main() { print(x); }\n")
    with pytest.raises(Exception, match="x"):
        _ = comp.quads
    assert gc.isenabled()


def test_an_already_paused_collector_stays_paused():
    gc.disable()
    try:
        assert compile_source(PROGRAM).quads.functions["main"].body
        assert not gc.isenabled()
    finally:
        gc.enable()
