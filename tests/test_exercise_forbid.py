"""The call watch behind every graded answer (ssa_course.grading.forbid, .watch): advice
in a learner's own kernel when an answer calls the engine's own version of its task."""

from __future__ import annotations

import sys

import pytest

import ssa_course
import ssa_course.quads.ir
from ssa_course.grading import Mismatch, check_against
from ssa_course.grading.forbid import Forbidden, Rules, guard
from ssa_course.quads.cfg import BasicBlock, build_cfg, find_leaders
from ssa_course.quads.ir import Function


def _function():
    return ssa_course.compile("fn main(n: int) { if (n > 0) { print(1); } print(2); }"
                              ).quads.functions["main"]


def test_an_answer_that_calls_a_forbidden_function_is_refused_by_name():
    def fake(body):
        return find_leaders(Function("f", [], None, body))

    watched = guard(fake, forbid=[ssa_course], allow=[ssa_course.quads.ir], task="leaders")
    with pytest.raises(Forbidden, match=r"your leaders calls ssa_course's own find_leaders "
                                        r"\(ssa_course\.quads\.cfg\); write it yourself"):
        watched(_function().body)
    assert issubclass(Forbidden, Mismatch)  # nbgrader counts it as a failed test


def test_own_code_and_allowed_modules_run_freely():
    def honest(body):
        return [i for i, item in enumerate(body) if i == 0 or not hasattr(item, "op")
                or (hasattr(body[i - 1], "op") and body[i - 1].is_terminator())]

    watched = guard(honest, forbid=[ssa_course], allow=[ssa_course.quads.ir])
    assert watched(_function().body) == honest(_function().body)


def test_the_most_specific_entry_wins():
    rules = Rules(forbid=[ssa_course, BasicBlock.terminator.fget],
                  allow=[sys.modules["ssa_course.quads.cfg"]])
    assert rules.verdict(build_cfg.__code__) is None  # module allowed inside the package
    assert rules.verdict(BasicBlock.terminator.fget.__code__) is not None  # function forbidden
    assert "compile" in rules.verdict(ssa_course.compile.__code__)  # the package
    assert rules.verdict(_function.__code__) is None  # not the course's code


def test_a_class_entry_covers_its_methods_and_properties():
    rules = Rules(forbid=[BasicBlock])
    assert rules.verdict(BasicBlock.terminator.fget.__code__) is not None
    assert rules.verdict(find_leaders.__code__) is None


def test_wrappers_inside_the_answer_are_seen_through():
    def adapt(body):
        helper = lambda fn: find_leaders(fn)  # noqa: E731 - a wrapper, as a learner writes it
        return helper(Function("f", [], None, body))

    with pytest.raises(Forbidden):
        guard(adapt, forbid=[ssa_course])(_function().body)


def test_a_forbidden_call_that_then_fails_is_still_reported_as_forbidden():
    def fake(body):
        find_leaders(None)  # raises inside the engine

    with pytest.raises(Forbidden, match="calls ssa_course's own find_leaders"):
        guard(fake, forbid=[ssa_course])([])


def test_a_learner_error_is_told_in_one_line():
    def broken(body):
        return body[10]

    with pytest.raises(Mismatch, match=r"^your code raised IndexError: list index out of "
                                       r"range \(test_exercise_forbid.py:\d+, in `broken`\)"):
        guard(broken, forbid=[ssa_course])([])


def test_required_calls():
    def uses_it(fn):
        return build_cfg(fn)

    def skips_it(fn):
        return None

    guard(uses_it, forbid=[], require=[build_cfg])(_function())
    with pytest.raises(Forbidden, match="never calls build_cfg"):
        guard(skips_it, forbid=[], require=[build_cfg])(_function())


def test_the_watch_puts_the_previous_profiler_back():
    from ssa_course.grading.watch import watched

    def outer(frame, event, arg):
        pass

    rules = Rules(forbid=[ssa_course])
    sys.setprofile(outer)
    try:
        with pytest.raises(Forbidden, match="calls ssa_course's own find_leaders"):
            watched(find_leaders, (_function(),), {}, rules.verdict, {}, "leaders",
                    "write it yourself")
        assert sys.getprofile() is outer
        assert watched(len, ([1],), {}, rules.verdict, {}, "n", "") == 1
        assert sys.getprofile() is outer
    finally:
        sys.setprofile(None)


def test_the_watch_is_advice_switching_it_off_is_the_learner_s_own_loss():
    """An answer that switches the profiler off is not told anything in its own kernel:
    no grade depends on the watch (the grading sandbox has no find_leaders)."""
    def sneaky(body):
        sys.setprofile(None)
        return find_leaders(Function("f", [], None, body))

    assert guard(sneaky, forbid=[ssa_course])(_function().body) == \
        find_leaders(_function())


def test_check_against_reports_a_refusal_as_a_failed_case():
    fn = _function()
    watched = guard(lambda n: find_leaders(fn), forbid=[ssa_course], task="answer")
    with pytest.raises(Mismatch, match="ssa_course's own find_leaders"):
        check_against(watched, lambda n: [0], [1])


def test_entries_that_cannot_be_watched_are_rejected():
    with pytest.raises(TypeError):
        Rules(forbid=[42])


def test_a_thread_the_answer_starts_is_watched_too():
    import threading

    def in_a_thread(body):
        out = []
        worker = threading.Thread(target=lambda: out.append(
            find_leaders(Function("f", [], None, body))))
        worker.start()
        worker.join()
        return out[0]

    # in a grading child the system refuses new threads (seccomp); in-process the profile
    # hook follows the thread
    with pytest.raises(Mismatch, match="can't start new thread|calls ssa_course's own"):
        guard(in_a_thread, forbid=[ssa_course])(_function().body)
    assert threading.getprofile() is None


def test_a_forbidden_library_is_named_as_such():
    import networkx

    def fake(succs, entry):
        g = networkx.DiGraph([(a, b) for a, bs in succs.items() for b in bs])
        return set(succs) - networkx.descendants(g, entry) - {entry}

    with pytest.raises(Forbidden, match="calls the library networkx, which does the task"):
        guard(fake, forbid=[networkx], task="unreachable")({"a": ["b"], "b": []}, "a")


def test_exercise_10_refuses_the_escape_engine_but_lets_the_listing_print():
    from ssa_course.analysis.escape_lattice import EscapeInfo
    from ssa_course.grading.escape import EscapeFunction, info_of, listing, state_of

    fn = EscapeFunction("f", {"h": 1}, [("new", "%1", {}), ("store", "h", "b", "%1")], ["%1"])

    def fake(a, b):  # states built by hand, the join borrowed
        x, y = (EscapeInfo(s["analyzed"], frozenset(s["returns"])) for s in (a, b))
        return x.join(y)

    def printing(fn):
        return listing(fn, {"%1": "*"})

    a = {"analyzed": True, "returns": {6}, "thrown": set(), "args": set(), "everywhere": False}
    rules = dict(forbid=[ssa_course], allow=[listing])
    with pytest.raises(Forbidden, match=r"own EscapeInfo\.join \(ssa_course\.analysis"):
        guard(fake, **rules)(a, a)
    with pytest.raises(Forbidden, match=r"own info_of"):
        guard(lambda a, b: state_of(info_of(a)), **rules)(a, a)
    assert "*  ('new', '%1', {})" in guard(printing, **rules)(fn)
    assert EscapeInfo(True, returns=frozenset({6})) == info_of(a)
