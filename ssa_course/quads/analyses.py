"""The data-flow analyses of the course, as rows of one table (lesson 03).

Each analysis is four choices handed to the one solver (:func:`ssa_course.quads.flow.solve`,
the plain :func:`ssa_course.quads.dataflow.solve` on a quads CFG):

| analysis | direction | meet | transfer of ``x = op a b`` | boundary |
|---|---|---|---|---|
| live variables | backward | union | ``{a, b} | (fact - {x})`` | nothing live at the exits |
| reaching definitions | forward | union | ``{this x} | (fact - other x's)`` | none on entry |
| maybe assigned | forward | union | ``{x} | fact`` | the parameters |
| certainly assigned | forward | intersection | ``{x} | fact`` | the parameters |
| available constants | forward | intersection | ``{5} | fact`` (``x = const 5``) | none |

All five are gen/kill problems. A ``phi`` is the one instruction that does not read its
arguments where it stands: it reads each on the edge from the block its label names, so
liveness adds them on that edge (:func:`liveness`'s ``edge``). Exceptional edges follow the
one rule of :mod:`ssa_course.quads.flow`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, TypeVar, overload

from ssa_course.quads.cfg import CFG
from ssa_course.quads.flow import Facts, Problem, gen_kill, solve
from ssa_course.quads.ir import UNDEFINED, Instr

# Each analysis below is four choices handed to the one solver (quads/flow.py):
# direction, meet (``may`` = union, else intersection), gen/kill, boundary/init.
_NONE: tuple[str, ...] = ()  # one shared empty answer (no tuple built per call)
D = TypeVar("D", bound=Hashable)  # how a caller names a definition (``key``)


def _reads(instr: Instr) -> Iterable[str]:
    """What ``instr`` reads where it stands (a phi reads on its edges instead)."""
    return _NONE if instr.op == "phi" else instr.args


def _writes(instr: Instr) -> Iterable[str]:
    """What ``instr`` writes (nothing, or its destination)."""
    return _NONE if instr.dest is None else (instr.dest,)


def phi_edge_uses(cfg: CFG) -> dict[tuple[str, str], frozenset[str]]:
    """``(pred, block) -> the variables the phis of block read on the edge from pred``."""
    uses: dict[tuple[str, str], set[str]] = {}
    for name, block in cfg.blocks.items():
        for instr in block.instrs:
            if instr.op != "phi":
                continue
            for arg, label in zip(instr.args, instr.labels, strict=False):
                if arg != UNDEFINED:  # "no value on this edge" reads nothing
                    uses.setdefault((label, name), set()).add(arg)
    return {edge: frozenset(v) for edge, v in uses.items()}


def live_variables(cfg: CFG, on_edge: dict[tuple[str, str], frozenset[str]] | None = None
                   ) -> Problem[frozenset[str]]:
    """Live variables: a variable is live at a point when some path from there reads it
    before writing it. Backward; union; ``uses | (live - defs)``; nothing live at the end.
    ``on_edge`` says what the phis read on each edge (default: :func:`phi_edge_uses`)."""
    if on_edge is None:
        on_edge = phi_edge_uses(cfg)

    def edge(src: str, dst: str, live: frozenset[str]) -> frozenset[str]:
        extra = on_edge.get((src, dst))  # a phi of dst reads this on the edge from src
        return live | extra if extra else live

    # backward: a use makes a variable live above it (gen), a write ends that (kill);
    # "some path reads it" is a may question, so paths meet by union
    return gen_kill("live variables", forward=False, may=True, gen=_reads, kill=_writes,
                    edge=edge if on_edge else None)


def liveness(cfg: CFG) -> Facts[frozenset[str]]:
    """The live variables of ``cfg``: ``.top[b]`` live on entry to block ``b``,
    ``.bottom[b]`` live after its last instruction (on the normal path)."""
    return solve(cfg, live_variables(cfg))


@overload
def reaching_definitions(cfg: CFG, *, params: Mapping[str, D] | None = None,
                         names: set[str] | None = None, key: Callable[[Instr], D]
                         ) -> Problem[frozenset[D]]: ...


@overload
def reaching_definitions(cfg: CFG, *, params: Mapping[str, Hashable] | None = None,
                         names: set[str] | None = None, key: None = None
                         ) -> Problem[frozenset[Hashable]]: ...


def reaching_definitions(cfg: CFG, *, params: Mapping[str, Hashable] | None = None,
                         names: set[str] | None = None,
                         key: Callable[[Instr], Hashable] | None = None
                         ) -> Problem[frozenset[Any]]:
    """Reaching definitions: the definitions that reach a point along some path with no
    other write of their variable. Forward; union; a write of ``x`` kills every other
    definition of ``x``; on entry, the parameters' (``params``: name -> its definition).
    A definition is named ``(variable, block, index)``, or ``key(instr)`` when given;
    ``names`` limits the question to some variables."""
    # Name every definition first: the kill set of a write of x is then simply "all of
    # x's definitions" (its own is added back by gen: the solver applies kill first).
    where: dict[int, Hashable] = {}  # id(instr) -> the name of its definition
    of_var: dict[str, set[Hashable]] = {}  # variable -> all its definitions
    for var, d in (params or {}).items():
        if names is None or var in names:
            of_var.setdefault(var, set()).add(d)
    for name, block in cfg.blocks.items():
        for k, instr in enumerate(block.instrs):
            if instr.dest is not None and (names is None or instr.dest in names):
                where[id(instr)] = (instr.dest, name, k) if key is None else key(instr)
                of_var.setdefault(instr.dest, set()).add(where[id(instr)])

    def gen(instr: Instr) -> Iterable[Hashable]:
        d = where.get(id(instr))
        return (d,) if d is not None else ()

    def kill(instr: Instr) -> Iterable[Hashable]:
        return of_var[instr.result()] if id(instr) in where else ()

    # the parameters are defined on entry (the boundary), before any instruction
    start = frozenset(d for var, d in (params or {}).items() if var in of_var)
    return gen_kill("reaching definitions", forward=True, may=True, gen=gen, kill=kill,
                    boundary=start)


def assigned(cfg: CFG, params: Iterable[str], *, must: bool,
             universe: Iterable[str] | None = None) -> Problem[frozenset[str]]:
    """Variables assigned on *some* path (``must=False``) or on *every* path (``must=True``)
    from the entry. Forward; union or intersection; a write adds its destination; the
    parameters on entry. ``universe`` limits the question to some names (a must problem
    starts every block at all of them, so a small universe keeps the sets small)."""
    if universe is None:
        names = set(params)
        for block in cfg.blocks.values():
            names.update(i.dest for i in block.instrs if i.dest is not None)
        universe = names
    every = frozenset(universe)
    start = frozenset(p for p in params if p in every)

    # nothing is ever unassigned again: no kill, a write only adds
    def gen(instr: Instr) -> Iterable[str]:
        return (instr.dest,) if instr.dest in every else _NONE

    # A must problem starts optimistic (everything assigned) and is lowered to the
    # largest fixed point; a may problem starts from nothing and grows.
    return gen_kill("certainly assigned" if must else "maybe assigned", forward=True,
                    may=not must, gen=gen, kill=lambda _: _NONE, boundary=start,
                    init=every if must else frozenset())


def available(cfg: CFG, made: Callable[[Instr], Iterable[Hashable]],
              universe: Iterable[Hashable]) -> Problem[frozenset[Hashable]]:
    """Values available on every path from the entry: ``made(instr)`` are the values an
    instruction makes (e.g. the constants it loads), never taken back. Forward;
    intersection; nothing on entry; every other block starts with all of ``universe``."""
    return gen_kill("available", forward=True, may=False, gen=made, kill=lambda _: _NONE,
                    init=frozenset(universe))


def _constant(instr: Instr) -> tuple[tuple[bool, object], ...]:
    """The constant ``instr`` loads, if any (``true`` and ``1`` kept apart)."""
    if instr.op != "const":
        return ()
    # (True == 1 in Python: the flag keeps the bool constant and the int apart)
    return ((isinstance(instr.value, bool), instr.value),)


# The table, for the lesson and the tests: name -> how to build the analysis for a CFG.
TABLE: dict[str, Callable[[CFG], Problem[frozenset[Any]]]] = {
    "live variables": live_variables,
    "reaching definitions": reaching_definitions,
    "maybe assigned": lambda cfg: assigned(cfg, [n for n, _ in cfg.function.params],
                                           must=False),
    "certainly assigned": lambda cfg: assigned(cfg, [n for n, _ in cfg.function.params],
                                               must=True),
    "available constants": lambda cfg: available(
        cfg, _constant, {k for b in cfg.blocks.values() for i in b.instrs for k in _constant(i)}),
}
