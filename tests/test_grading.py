"""The exercise checks: smallest counterexample first, readable messages, drawings."""

from __future__ import annotations

import pytest

import ssa_course
from ssa_course.grading import Mismatch, check_against, lesson_programs


def _square(n: int) -> int:
    return n * n


def test_all_agree_prints_a_verdict_and_returns_nothing(capsys):
    assert check_against(_square, _square, [3, 1, 2], what="squares") is None
    assert capsys.readouterr().out == "squares: all 3 cases agree with the reference\n"


def test_reports_the_smallest_failing_case_with_expected_and_actual():
    def wrong(n: int) -> int:
        return n * n if n < 10 else 0

    with pytest.raises(Mismatch) as info:
        check_against(wrong, _square, [1000, 10, 12345, 1], describe=lambda n: f"n = {n}")
    message = str(info.value)
    assert "n = 10\n" in message  # not 1000 or 12345: those are larger
    assert "expected: 100" in message and "got: 0" in message
    assert isinstance(info.value, AssertionError)  # nbgrader counts it as a failed test


def test_size_decides_what_smallest_means():
    cases = ["aaaa", "b", "cc"]
    with pytest.raises(Mismatch, match="'aaaa'"):
        check_against(str.upper, str.lower, cases, size=lambda s: -len(s))


def test_normalise_compares_up_to_order():
    check_against(lambda xs: list(reversed(xs)), list, [[1, 2, 3]], normalise=sorted)
    with pytest.raises(Mismatch):
        check_against(lambda xs: list(reversed(xs)), list, [[1, 2, 3]])


def test_a_crash_names_the_exception_and_the_input():
    def crashes(n: int) -> int:
        return n * n + 0 * (10 // (n - 2))

    with pytest.raises(Mismatch) as info:
        check_against(crashes, _square, [5, 2, 3], describe=lambda n: f"<{n}>")
    assert "ZeroDivisionError" in str(info.value) and "<2>" in str(info.value)
    assert "(test_grading.py:" in str(info.value)  # where, in the learner's code


def test_a_stub_says_not_implemented():
    def stub(n: int) -> int:
        raise NotImplementedError()

    with pytest.raises(Mismatch, match="not implemented yet"):
        check_against(stub, _square, [1])


def test_the_learner_cannot_change_the_case_that_is_shown():
    def clears(xs: list[int]) -> int:
        xs.clear()
        return -1

    with pytest.raises(Mismatch) as info:
        check_against(clears, len, [[7, 8, 9]])
    assert "[7, 8, 9]" in str(info.value)


def test_draw_gets_the_failing_case_and_its_errors_are_ignored():
    drawn = []

    def draw(case: int) -> object:
        drawn.append(case)
        raise RuntimeError("no picture today")

    with pytest.raises(Mismatch, match="expected: 4"):
        check_against(lambda n: n, _square, [1, 2, 3], draw=draw)
    assert drawn == [2]


def test_lesson_programs_compile_and_are_a_fresh_copy():
    programs = lesson_programs()
    assert len(programs) >= 5
    for name, source in programs.items():
        assert ssa_course.compile(source).quads.functions, name
    programs.clear()
    assert lesson_programs()


def test_under_ipython_the_drawing_is_displayed(capsys):
    from IPython.core.interactiveshell import InteractiveShell

    class Picture:
        def __repr__(self) -> str:
            return "<a picture of the case>"

    shell = InteractiveShell.instance()
    try:
        with pytest.raises(Mismatch):
            check_against(lambda n: n, _square, [3], draw=lambda case: Picture())
    finally:
        InteractiveShell.clear_instance()
        del shell
    assert "<a picture of the case>" in capsys.readouterr().out


# ---------------------------------------------------------------- answers nobody can fake


class _EqualsEverything:
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


class _EqRaises:
    def __eq__(self, other: object) -> bool:
        raise ValueError("cannot compare me")

    __hash__ = object.__hash__


@pytest.mark.parametrize("answer", [_EqualsEverything(), _EqRaises()])
def test_an_answer_with_its_own_eq_never_passes(answer):
    with pytest.raises(Mismatch, match="not a value the check can compare"):
        check_against(lambda n: answer, lambda n: n, [1])


def test_a_numpy_array_is_not_a_list():
    np = pytest.importorskip("numpy")
    with pytest.raises(Mismatch, match="numpy.ndarray"):
        check_against(lambda n: np.array([n, n]), lambda n: [n, n], [3])


def test_a_class_claiming_the_course_module_is_not_trusted():
    from ssa_course.son.types import IntType, int_const

    class Forged(IntType):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = IntType.__hash__

    Forged.__module__ = "ssa_course.son.types"
    with pytest.raises(Mismatch, match="not a value the check can compare"):
        check_against(lambda n: Forged("int", 0, 0), int_const, [5])


@pytest.mark.parametrize(("answer", "expected", "kinds"), [
    (True, 1, "expected an int, got a bool"),
    (1.0, 1, "expected an int, got a float"),
    ("1", 1, "expected an int, got a str"),
    ([1, 2], {1, 2}, "expected a set, got a list"),
])
def test_comparison_is_type_strict(answer, expected, kinds):
    with pytest.raises(Mismatch) as info:
        check_against(lambda n: answer, lambda n: expected, [0])
    assert kinds in str(info.value)


def test_plain_data_that_is_equal_passes():
    from ssa_course.son.types import INT_BOTTOM, TOP, int_const

    check_against(lambda n: (n, [1, 2]), lambda n: [n, (1, 2)], [4])  # sequences are sequences
    check_against(lambda n: {"b": {2, 1}, "a": None}, lambda n: {"a": None, "b": {1, 2}}, [0])
    check_against(lambda n: [TOP, int_const(n), INT_BOTTOM],
                  lambda n: [TOP, int_const(n), INT_BOTTOM], [7])


def test_an_answer_that_contains_itself_is_reported_not_recursed_into():
    looped: list = []
    looped.append(looped)
    with pytest.raises(Mismatch, match="contains itself"):
        check_against(lambda n: looped, lambda n: [[]], [0])


def test_lattice_types_are_shown_as_the_lessons_print_them():
    from ssa_course.son.types import INT_BOTTOM, INT_TOP, TOP, IntType, int_const

    with pytest.raises(Mismatch) as info:
        check_against(lambda n: [INT_BOTTOM, TOP], lambda n: [int_const(n), INT_TOP], [5],
                      what="types")
    message = str(info.value)
    assert "expected: [5, int:TOP]" in message and "got: [int, TOP]" in message
    assert "IntType(" not in message
    with pytest.raises(Mismatch, match=r"got: int\[1\.\.5\]"):
        check_against(lambda n: IntType("int", 1, 5), lambda n: TOP, [0])


def test_first_difference_points_into_a_dict():
    with pytest.raises(Mismatch, match=r"first difference: at key 'b2': expected \['b3'\], "
                                       r"got \['b4'\]"):
        check_against(lambda n: {"b1": ["b2"], "b2": ["b4"]},
                      lambda n: {"b1": ["b2"], "b2": ["b3"]}, [0])


def test_a_normalise_the_answer_breaks_is_a_wrong_form():
    with pytest.raises(Mismatch, match="wrong form"):
        check_against(lambda xs: 42, list, [[1, 2]], normalise=sorted)


# ---------------------------------------------------------------- crashes and time


def test_an_endless_loop_is_stopped_with_a_message():
    def spins(n: int) -> int:
        while True:
            try:  # a learner's catch-all cannot swallow the time limit
                n += 1
            except Exception:
                n = 0

    with pytest.raises(Mismatch, match=r"did not finish in 0.2 s on this input"):
        check_against(spins, _square, [3], time_limit=0.2)


def test_a_bare_except_cannot_swallow_the_time_limit_for_good():
    def swallows(n: int) -> int:
        while True:
            try:
                while True:
                    pass
            except:  # noqa: E722 - exactly what a learner might write
                pass

    with pytest.raises(Mismatch, match="did not finish"):
        check_against(swallows, _square, [3], time_limit=0.2)


def test_the_time_limit_leaves_an_outer_alarm_in_place():
    import signal

    def outer(signum, frame):
        raise AssertionError("not expected to fire")

    old = signal.signal(signal.SIGALRM, outer)
    signal.setitimer(signal.ITIMER_REAL, 100)
    try:
        check_against(_square, _square, [1, 2], time_limit=5)
        assert signal.getsignal(signal.SIGALRM) is outer
        assert 90 < signal.getitimer(signal.ITIMER_REAL)[0] <= 100
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_off_the_main_thread_the_check_still_runs_without_a_limit():
    import threading

    from ssa_course.grading.timelimit import can_limit_time

    outcome = []

    def work() -> None:
        outcome.append(can_limit_time())
        try:
            check_against(lambda n: n + 1, _square, [2], time_limit=1)
        except Mismatch as e:
            outcome.append(str(e))

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert outcome[0] is False and "expected: 4" in outcome[1]


def test_a_runaway_recursion_is_one_line():
    def forever(n: int) -> int:
        return forever(n + 1)

    with pytest.raises(Mismatch) as info:
        check_against(forever, _square, [1])
    first = str(info.value).splitlines()[0]
    assert first.startswith("your code called itself too deeply (RecursionError)")
    assert "in `forever`" in first


def test_a_course_error_in_the_learners_code_is_its_message():
    from ssa_course.errors import RuntimeTrap

    def traps(n: int) -> int:
        raise RuntimeTrap("division by zero", (3, 7))

    with pytest.raises(Mismatch, match=r"^your code stopped with: error: division by zero at "
                                       r"3:7\non this input"):
        check_against(traps, _square, [1])


def test_exit_in_the_learners_code_is_a_wrong_answer():
    import sys

    with pytest.raises(Mismatch, match="called exit"):
        check_against(lambda n: sys.exit(3), _square, [1])


# ---------------------------------------------------------------- what a notebook shows


def _run_in_shell(code: str, namespace: dict) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        shell.user_ns.update(namespace)
        shell.run_cell(code)
    finally:
        InteractiveShell.clear_instance()


def test_a_mismatch_in_a_notebook_shows_the_message_not_a_traceback(capsys):
    _run_in_shell("check_against(lambda n: n, sq, [3], describe=lambda n: f'n = {n}')",
                  {"check_against": check_against, "sq": _square})
    out = capsys.readouterr()
    shown = out.out + out.err
    assert "Mismatch" in shown and "n = 3" in shown and "expected: 9" in shown
    assert "Traceback" not in shown and "check.py" not in shown


def test_the_answers_are_drawn_side_by_side_with_captions(capsys):
    from ssa_course.grading import Panels

    displayed: list[object] = []

    class Picture:
        def __init__(self, answer: object):
            self.answer = answer

        def _repr_svg_(self) -> str:
            return f"<svg><text>answer {self.answer}</text></svg>"

    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.display_pub.publish = lambda data, **kw: displayed.append(data)
    try:
        with pytest.raises(Mismatch):
            check_against(lambda n: n + 1, _square, [3], draw=lambda n: f"case {n}",
                          draw_answer=lambda case, answer: Picture(answer))
    finally:
        InteractiveShell.clear_instance()
    html = displayed[0]["text/html"]
    assert html.index("the input") < html.index("expected") < html.index("yours")
    assert "<svg><text>answer 9</text></svg>" in html and "answer 4" in html
    assert "case 3" in html
    assert "--- yours ---" in repr(Panels([("yours", "x")]))


def test_a_picture_that_fails_is_replaced_by_its_reason():
    from ssa_course.grading import Panels

    class Broken:
        def _repr_svg_(self) -> str:
            raise RuntimeError("dot exploded")

    html = Panels([("expected", Broken()), ("yours", "plain text")])._repr_html_()
    assert "cannot draw this: dot exploded" in html and "plain text" in html


# ---------------------------------------------------------------- a learner's idealize()


def _build_with_add(idealize, source="fn main(n: int, m: int) { print(n + m); }"):
    from ssa_course import sea_of_nodes
    from ssa_course.son.data import Add
    from ssa_course.son.emit import BuildOptions

    class LearnersAdd(Add):
        def idealize(self):
            return idealize(self)

    return sea_of_nodes(source, True, BuildOptions(classes={"+": LearnersAdd}))


def test_an_idealize_that_swaps_forever_is_stopped_with_the_chain():
    from ssa_course.son.peephole import RewriteError

    def swaps(node):
        return type(node)(node.graph, None, node.inputs[2], node.inputs[1])

    with pytest.raises(RewriteError) as info:
        _build_with_add(swaps)
    message = str(info.value)
    assert message.startswith("idealize() keeps rewriting #")
    assert "Add(n, m) → Add(m, n) → Add(n, m)" in message and "..." in message


def test_an_idealize_that_goes_back_to_the_first_node_is_a_cycle():
    from ssa_course.son.peephole import RewriteError

    first = {}

    def back(node):
        if "node" not in first:
            first["node"] = node
            return type(node)(node.graph, None, node.inputs[2], node.inputs[1])
        return first["node"]

    with pytest.raises(RewriteError, match="rewrites in a circle"):
        _build_with_add(back)


@pytest.mark.parametrize(("result", "message"), [
    (5, "returned 5 \\(a int\\); it must return a node or None"),
    ("dead", "not \\(or no longer\\) in this graph"),
])
def test_an_idealize_must_return_a_live_node(result, message):
    from ssa_course.son.graph import Graph, Node
    from ssa_course.son.peephole import RewriteError

    def odd(node):
        return Node(Graph()) if result == "dead" else result

    with pytest.raises(RewriteError, match=message):
        _build_with_add(odd)


def test_the_budget_per_function_stops_rewrites_that_keep_making_work(monkeypatch):
    from ssa_course import sea_of_nodes
    from ssa_course.son.peephole import Peephole, RewriteError

    monkeypatch.setattr(Peephole, "slack", 0)
    monkeypatch.setattr(Peephole, "per_node", 0)
    with pytest.raises(RewriteError, match=r"made 1 rewrites for \d+ nodes"):
        sea_of_nodes("fn main(n: int) { print(1 + n); }")  # 1 + n -> n + 1


def test_correct_rewrites_still_apply_and_report_their_numbers():
    from ssa_course import sea_of_nodes

    program = sea_of_nodes("fn main(n: int) { print(((1 + n) + 2) + 3, n * 1, n - n); }")
    assert program.run(4) == "10 4 0\n"
    assert program.functions["main"].stats.idealized >= 3


def test_a_runaway_recursion_inside_idealize_is_a_recursion_error_not_a_crash():
    import subprocess
    import sys

    # Through C frames (map) and with the parser's raised recursion limit this used to
    # overflow the C stack and kill Python; run it in a child so a regression is a failure
    # of this test, not of the test run.
    code = (
        "from ssa_course.grading.son import expressions_with_add\n"
        "def rec(x):\n    return list(map(rec, [x]))\n"
        "try:\n"
        "    expressions_with_add('fn main(n: int, m: int) { print(n + m); }',"
        " lambda node: rec(1))\n"
        "except RecursionError:\n    print('RecursionError')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "RecursionError"


def test_check_against_shows_a_rewrite_loop_as_one_message():
    def swaps(node):
        return type(node)(node.graph, None, node.inputs[2], node.inputs[1])

    with pytest.raises(Mismatch) as info:
        check_against(lambda e: _build_with_add(swaps).run(1, 2), lambda e: "3\n", ["n + m"])
    assert str(info.value).startswith("your code stopped with: idealize() keeps rewriting #")


def test_a_mismatch_raised_inside_the_answer_is_passed_on_as_it_is():
    class Refused(Mismatch):
        pass

    def guarded(n: int) -> int:
        raise Refused("your answer calls the course's own code")

    # (it ran in a grading child: its message comes back, word for word)
    with pytest.raises(Mismatch, match="^your answer calls the course's own code$"):
        check_against(guarded, _square, [1])


def test_container_subclasses_count_as_their_base_and_their_eq_is_ignored():
    from collections import OrderedDict, defaultdict, namedtuple

    succs = defaultdict(list, {"b1": ["b2"]})
    check_against(lambda n: succs, lambda n: {"b1": ["b2"]}, [0])
    check_against(lambda n: OrderedDict(a=1), lambda n: {"a": 1}, [0])
    pair = namedtuple("pair", "a b")
    check_against(lambda n: pair(1, 2), lambda n: (1, 2), [0])

    class Liar(list):
        def __eq__(self, other: object) -> bool:
            return True

        def __iter__(self):
            return iter([1, 2, 3])

    with pytest.raises(Mismatch, match="got: "):
        check_against(lambda n: Liar(), lambda n: [1, 2, 3], [0])


def test_a_generator_is_not_an_answer_and_never_runs_in_the_grader():
    def endless(n: int):
        while True:
            yield n

    # the generator stays in the child that ran the answer: the grader never iterates it
    with pytest.raises(Mismatch, match="not a value the check can compare: it is a generator"):
        check_against(endless, lambda n: iter([n]), [1], normalise=lambda xs: list(xs)[:5],
                      time_limit=0.2)
