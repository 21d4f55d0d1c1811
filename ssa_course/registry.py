"""The one registry: every representation and every pass, by name.

A :class:`Representation` is declared once, with its four faces:

* **build** -- make it from a :class:`~ssa_course.compilation.Compilation` (cached there,
  verified when built, so a broken invariant is reported by the representation's name);
* **run** -- execute it (``ssa-course run --via NAME``);
* **verify** -- check its invariants, raising :class:`~ssa_course.errors.VerifyError`;
* **text** and **dot** -- print it (``show --as NAME``) and draw it;
* **lines** -- which source line each line of the text face and each DOT node belongs to
  (:mod:`ssa_course.srclines`, docs/lines.md); without one, the lines the text face prints
  (``@3:5``, ``# line 4:`` comments) are read.

A :class:`Pass` transforms a program in one *form* (see :data:`FORMS`) into another
(``ssa-course opt -p``); after each pass the program is verified with the verifier of the
representation of its form, so the pass that broke an invariant is named.

``run --via``, ``show --as``, ``opt --emit``, the explorer's menu, ``%%tiny --show`` and the
differential tests all read this registry, so a name means the same thing everywhere.
Nothing is registered here: the lessons' table of contents (:mod:`ssa_course.lessons`)
imports each lesson's module in order, and each module registers what its lesson adds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ssa_course.compilation import Compilation
from ssa_course.errors import UsageError, VerifyError
from ssa_course.runtime import Limits, Output, Value
from ssa_course.srclines import Lines, annotated_lines

if TYPE_CHECKING:
    from ssa_course.passes import PassState
    from ssa_course.viz.options import DrawOptions

# A representation's artifact: what its ``build`` makes and its other faces take (a quads
# Program, a SeaOfNodes, a compiled machine program...). Each representation is typed in
# its own artifact; the registry holds them all (``Representation[Any]``).
A = TypeVar("A")
T = TypeVar("T")

Runner = Callable[[A, list[Value], Output, Limits], int]  # (artifact, args, out, limits)
Drawer = Callable[[A, str, "DrawOptions | None"], str]  # (artifact, title, options) -> DOT


@dataclass(frozen=True, slots=True)
class Representation(Generic[A]):
    """One representation of a program and its four faces (see the module docstring).

    ``build(comp)`` returns the artifact the other faces take. ``stats(artifact)`` is an
    optional one-line summary (the explorer shows it). ``face`` is what ``show`` gives by
    default: ``"text"`` or ``"draw"``. ``tiny_only`` representations need Tiny source.
    ``missing()`` says in one line why the representation cannot run on this machine (no
    assembler, not x86-64), or None; the differential tests skip with that reason.
    ``runs_as`` names another representation whose executor this one shares (the machine
    code views run natively): the differential tests run that one only. ``counts`` says
    whether the executor counts executed instructions (``run --profile``); machine code
    runs uncounted.
    ``form`` is the ``opt`` form (see :data:`FORMS`) its artifact is in, when it is one: a
    pipeline that leaves a program in that form is shown by this representation as it is
    (``opt --emit son-opt`` after ``sccp`` prints the pipeline's graph, not a rebuilt one).
    ``checks`` are the forms whose programs ``opt`` verifies with this representation's
    verifier (after every pass with ``verify_each``; see :mod:`ssa_course.passes`); each
    form has exactly one such representation.
    """

    name: str
    description: str
    lesson: str
    build: Callable[[Compilation], A]
    run: Runner[A]
    verify: Callable[[A], None]
    text: Callable[[A], str]
    dot: Drawer[A]
    stats: Callable[[A], str] | None = None
    face: str = "text"
    tiny_only: bool = False
    missing: Callable[[], str | None] | None = None
    runs_as: str | None = None
    counts: bool = True
    lines: Callable[[A], Lines] | None = None
    form: str | None = None
    checks: tuple[str, ...] = ()

    def source_lines(self, artifact: A) -> Lines:
        """The lines face (see :mod:`ssa_course.srclines`)."""
        if self.lines is not None:
            return self.lines(artifact)
        return annotated_lines(self.text(artifact))

    def unavailable(self) -> str | None:
        """Why this representation cannot run here (one line), or None."""
        return self.missing() if self.missing is not None else None


# The forms a program takes in ``ssa-course opt``: source text, a sea of nodes, strict SSA
# quads, quads with phis whose names are shared by phi webs (after coalesce-phis: no
# longer single assignment), ordinary quads.
FORMS = ("source", "graph", "ssa", "phis", "quads")


@dataclass(frozen=True, slots=True)
class Pass:
    """A named transformation for ``ssa-course opt``: it accepts a program in one of the
    forms ``needs`` and leaves it in form ``makes`` (see :mod:`ssa_course.passes`)."""

    name: str
    description: str
    lesson: str
    needs: tuple[str, ...]
    makes: str
    run: Callable[[PassState], None]


_REPRESENTATIONS: dict[str, Representation[Any]] = {}
_PASSES: dict[str, Pass] = {}
_loaded = False
_current_lesson = "?"


def _load() -> None:
    """Import the lessons' modules (once): each registers what its lesson adds."""
    global _loaded
    if not _loaded:
        _loaded = True
        import ssa_course.lessons  # noqa: F401  (loads every lesson, in order)


def set_lesson(number: str) -> None:
    """The lesson whose module is being loaded (recorded on what it registers)."""
    global _current_lesson
    _current_lesson = number


# ---------------------------------------------------------------- representations


def add_representation(name: str, description: str, *, build: Callable[[Compilation], A],
                       run: Runner[A], verify: Callable[[A], None],
                       text: Callable[[A], str], dot: Drawer[A],
                       stats: Callable[[A], str] | None = None, face: str = "text",
                       tiny_only: bool = False, missing: Callable[[], str | None] | None = None,
                       runs_as: str | None = None, counts: bool = True,
                       lines: Callable[[A], Lines] | None = None,
                       form: str | None = None, checks: tuple[str, ...] = ()) -> None:
    """Declare a representation with its four faces (all required), each taking the
    artifact ``build`` makes (the type checker holds them to one artifact type)."""
    if name in _REPRESENTATIONS:
        raise ValueError(f"representation {name!r} registered twice")
    if face not in ("text", "draw"):
        raise ValueError(f"face must be 'text' or 'draw', not {face!r}")
    for f in (*checks, *([form] if form is not None else [])):
        if f not in FORMS:
            raise ValueError(f"unknown form {f!r} (forms: {', '.join(FORMS)})")
    for other in _REPRESENTATIONS.values():
        claimed = set(other.checks) & set(checks)
        if claimed:
            raise ValueError(f"form {sorted(claimed)[0]!r} is already checked by "
                             f"{other.name!r}")
    _REPRESENTATIONS[name] = Representation(name, description, _current_lesson, build, run,
                                            verify, text, dot, stats, face, tiny_only,
                                            missing, runs_as, counts, lines, form, checks)


def representations() -> list[Representation[Any]]:
    """Every representation, in the order of the lessons that add them."""
    _load()
    return list(_REPRESENTATIONS.values())


def executors() -> list[Representation[Any]]:
    """The representations that run on their own (not ``runs_as`` another): what the
    differential tests and ``make fuzz`` run every program through."""
    return [r for r in representations() if r.runs_as is None]


def names() -> list[str]:
    """The names ``run --via``, ``show --as`` and ``opt --emit`` accept: one list."""
    return [r.name for r in representations()]


def in_form(form: str) -> list[Representation[Any]]:
    """The representations whose artifact is a program in ``opt`` form ``form`` (they can
    show such a program as it is)."""
    return [r for r in representations() if r.form == form]


def checker_of(form: str) -> Representation[Any]:
    """The representation whose verifier checks a program in ``opt`` form ``form``."""
    found = [r for r in representations() if form in r.checks]
    if len(found) != 1:
        raise ValueError(f"form {form!r} has {len(found)} checking representations, not one")
    return found[0]


def name_list(text: str, option: str) -> list[str]:
    """The representation names of a comma-separated list (``--as quads,son``, the magic's
    ``--show quads,son``): the one reader of such a list, so the CLI and the magic refuse
    the same lists. An empty name (``quads,``, ``quads,,son``) is a one-line
    :class:`UsageError`; the names are not looked up here."""
    names = [n.strip() for n in text.split(",")]
    if not all(names):
        raise UsageError(f"empty representation name in {option} '{text}'")
    return names


def representation(name: str) -> Representation[Any]:
    _load()
    rep = _REPRESENTATIONS.get(name)
    if rep is None:
        raise UsageError(f"unknown representation '{name}' (known: {', '.join(names())})")
    return rep


def build(comp: Compilation, name: str) -> object:
    """The representation ``name`` of ``comp``: built once, verified, cached on ``comp``.

    A verifier failure is reported with the representation's name, e.g.
    ``verify: julia: use dominated by def: ...``.
    """
    rep = representation(name)
    if rep.tiny_only and comp.kind != "tiny":
        raise UsageError(f"'{rep.name}' needs a Tiny program; {comp.filename} is {comp.kind}")

    def make() -> object:
        artifact = rep.build(comp)
        verify_as(rep.name, artifact)
        return artifact

    return comp.cached(f"repr:{rep.name}", make)


def build_as(comp: Compilation, name: str, kind: type[T]) -> T:
    """:func:`build` for a caller that knows the class of the artifact (another lesson's
    representation it builds on); a representation that builds something else is a
    TypeError naming both."""
    artifact = build(comp, name)
    if not isinstance(artifact, kind):
        raise TypeError(f"representation {name!r} builds a {type(artifact).__name__}, "
                        f"not a {kind.__name__}")
    return artifact


def verify_as(name: str, artifact: object, after: str | None = None) -> None:
    """Run representation ``name``'s verifier; its error names the representation (and
    the pass ``after`` which the invariant broke, when given)."""
    rep = representation(name)
    try:
        rep.verify(artifact)
    except VerifyError as e:
        where = f"{rep.name} after pass '{after}'" if after else rep.name
        raise VerifyError(f"{where}: {e.invariant}", e.where, e.detail) from None


# ---------------------------------------------------------------- passes


def add_pass(name: str, description: str, needs: tuple[str, ...], makes: str
             ) -> Callable[[Callable[[PassState], None]], Callable[[PassState], None]]:
    """Decorator: register ``fn(state)`` as pass ``name``."""
    for form in (*needs, makes):
        if form not in FORMS:
            raise ValueError(f"unknown form {form!r} (forms: {', '.join(FORMS)})")

    def wrap(fn: Callable[[PassState], None]) -> Callable[[PassState], None]:
        if name in _PASSES:
            raise ValueError(f"pass {name!r} registered twice")
        _PASSES[name] = Pass(name, description, _current_lesson, needs, makes, fn)
        return fn

    return wrap


def passes() -> list[Pass]:
    _load()
    return list(_PASSES.values())


def get_pass(name: str) -> Pass:
    _load()
    if name not in _PASSES:
        raise UsageError(f"unknown pass '{name}' (known passes: {', '.join(_PASSES)})")
    return _PASSES[name]
