"""The data-flow solver on a quads CFG: facts at every instruction (lesson 03).

The plain solver (:func:`ssa_course.quads.dataflow.solve`) knows blocks and edges only.
This layer runs it on a quads CFG and adds what the analyses of the course need, with the
same results as walking the plain solver's blocks one instruction at a time
(``tests/test_dataflow.py`` compares the two on every analysis):

* a :class:`Problem` is stated per *instruction* (``transfer(instr, fact)``), with a name
  and the boundary; :class:`Facts` answers at every point of a block (:meth:`Facts.points`);
* **the exception-edge rule, written once.** An exceptional edge (``BasicBlock.throws_to``,
  added by :mod:`ssa_course.quads.exceptions`) leaves its block *just before the block's
  last instruction* -- the ``call`` or ``throw`` that may throw. The handler sees the
  values as they were before that instruction: ``x = call f()`` that throws never writes
  ``x``. So the layer gives that last instruction a block of its own, and the exceptional
  edge leaves from the block before it. A forward fact flows into the handler as it was
  before the instruction; a backward fact from the handler joins what the instruction
  needs on its normal path. The point *after* a throwing instruction is on its normal path
  only (what a handler reads is live *before* the call, not after it). The ``enter``
  block's edge to a handler that exceptional edges reach carries nothing (control never
  takes it). Change the rule here and every analysis follows;
* **gen/kill summaries.** Most analyses are *gen/kill* problems (a transfer of the shape
  ``gen | (fact - kill)``); for those, each block is summarized once, so a visit costs two
  set operations instead of a walk over the block's instructions.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ssa_course.quads import dataflow
from ssa_course.quads.cfg import CFG
from ssa_course.quads.ir import Instr

F = TypeVar("F")  # the type of a fact (a set of names, a frozenset, a dict, ...)
T = TypeVar("T", bound=Hashable)  # what a gen/kill problem's sets hold (a name, a definition)


@dataclass(frozen=True, slots=True)
class Problem(Generic[F]):
    """One data-flow problem on a quads CFG: direction, meet, transfer, boundary (see
    :mod:`ssa_course.quads.dataflow`), stated per instruction.

    ``transfer(instr, fact)`` is the fact on the far side of ``instr``: after it for a
    forward analysis, before it for a backward one. It must not change ``fact``.
    ``edge(src, dst, fact)``, when given, changes a fact as it crosses the edge from block
    ``src`` to block ``dst`` (a phi reads its argument on the edge it names).
    ``gen``/``kill``, when given, say that ``transfer`` is ``gen(i) | (fact - kill(i))``
    on sets: each block is then summarized once (and :meth:`Facts.walk_backward` walks a
    block in place).
    """

    name: str
    forward: bool
    boundary: F
    init: F
    meet: Callable[..., F]  # meet(f1, f2, ...): the facts of several edges as one
    transfer: Callable[[Instr, F], F]
    edge: Callable[[str, str, F], F] | None = None
    gen: Callable[[Instr], Iterable[Any]] | None = None
    kill: Callable[[Instr], Iterable[Any]] | None = None


def gen_kill(name: str, *, forward: bool, may: bool, gen: Callable[[Instr], Iterable[T]],
             kill: Callable[[Instr], Iterable[T]], boundary: frozenset[T] = frozenset(),
             init: frozenset[T] = frozenset(),
             edge: Callable[[str, str, frozenset[T]], frozenset[T]] | None = None
             ) -> Problem[frozenset[T]]:
    """A set problem whose transfer is ``gen | (fact - kill)``: the classic bit-vector
    framework. ``may``: facts meet by union (on some path), else by intersection."""

    def transfer(instr: Instr, fact: frozenset[T]) -> frozenset[T]:
        return (fact - frozenset(kill(instr))) | frozenset(gen(instr))

    meet: Callable[..., frozenset[T]] = frozenset.union if may else frozenset.intersection
    return Problem(name, forward, boundary, init, meet, transfer, edge, gen, kill)


# The plain solver's blocks here: (block name, part), part 0 the block or everything but its
# throwing last instruction, part 1 that instruction alone.
Part = tuple[str, int]


def split(cfg: CFG) -> tuple[dict[Part, list[Part]], dict[Part, list[Instr]]]:
    """The graph the plain solver runs on: one block per block of ``cfg``, two for a block
    that may throw (the rule above), in layout order; and each one's instructions."""
    succs: dict[Part, list[Part]] = {}
    instrs: dict[Part, list[Instr]] = {}
    thrown_to = {b.throws_to for b in cfg.blocks.values() if b.throws_to is not None}
    for name, block in cfg.blocks.items():
        if block.throws_to is None or not block.instrs:
            succs[name, 0], instrs[name, 0] = [], block.instrs
            continue
        # the throwing instruction gets a block of its own, entered from the rest
        succs[name, 0], instrs[name, 0] = [(name, 1)], block.instrs[:-1]
        succs[name, 1], instrs[name, 1] = [], block.instrs[-1:]
    for name, block in cfg.blocks.items():
        handler = None
        if thrown_to:  # (no exceptional edge anywhere: no ``enter`` edge to skip)
            term = block.instrs[-1] if block.instrs else None  # (the terminator if "enter")
            handler = (term.labels[1] if term is not None and term.op == "enter"
                       and len(term.labels) > 1 and term.labels[1] != term.labels[0]
                       else None)
        last = (name, 1) if (name, 1) in succs else (name, 0)
        for s in block.succs:
            if (s, 0) not in succs:
                continue  # an edge to a block that is gone (e.g. removed as unreachable)
            if s == handler and s in thrown_to:
                # ``enter``'s edge to a handler that throwing instructions' edges reach:
                # control never takes it, their edges carry the facts (fuzz seed 50335:
                # through it a value the handler reads was live round a loop, and the
                # copies out of SSA made read it unset). Without exception edges (Julia's
                # IR) it is the handler's only edge, and stays.
                continue
            # the exceptional edge leaves before the last instruction; the others after it
            succs[(name, 0) if s == block.throws_to else last].append((s, 0))
    return succs, instrs


def through(p: Problem[F], instrs: list[Instr], fact: F) -> F:
    """The transfer of a run of instructions, one at a time in the problem's direction."""
    for instr in (instrs if p.forward else reversed(instrs)):
        fact = p.transfer(instr, fact)
    return fact


def summary(p: Problem[F], instrs: list[Instr]) -> tuple[frozenset[Any], frozenset[Any]]:
    """``(gen, kill)`` of a run of instructions, composed one at a time in the problem's
    direction: a later gen survives, an earlier gen is killed by a later kill."""
    gen: set[Any] = set()
    kill: set[Any] = set()
    assert p.gen is not None and p.kill is not None
    for instr in (instrs if p.forward else reversed(instrs)):
        k = p.kill(instr)
        gen.difference_update(k)
        gen.update(p.gen(instr))
        kill.update(k)
    return frozenset(gen), frozenset(kill - gen)


def plain(cfg: CFG, p: Problem[F], fast: bool = True
          ) -> tuple[dataflow.Analysis[Part, F], dict[Part, list[Part]]]:
    """``p`` as the plain solver's analysis on :func:`split`'s blocks; ``fast``: a gen/kill
    problem's blocks go through their summaries (else instruction by instruction)."""
    succs, instrs = split(cfg)
    summaries = {b: summary(p, run) for b, run in instrs.items()} \
        if fast and p.gen is not None else None

    def transfer(b: Part, fact: F) -> F:
        if summaries is None:
            return through(p, instrs[b], fact)
        gen, kill = summaries[b]
        out: F = (fact - kill) | gen  # type: ignore[operator]
        return out

    edge: Callable[[Part, Part, F], F] | None = None
    if p.edge is not None:
        p_edge = p.edge

        def edge(src: Part, dst: Part, fact: F) -> F:  # only an edge between blocks
            return fact if dst[1] == 1 else p_edge(src[0], dst[0], fact)

    return dataflow.Analysis(p.forward, p.init, p.meet, transfer, p.boundary, edge), succs


def solve(cfg: CFG, problem: Problem[F], fast: bool = True) -> Facts[F]:
    """Solve ``problem`` on ``cfg`` with the plain solver (see the module text)."""
    a, succs = plain(cfg, problem, fast)
    found = dataflow.solve(succs, a, (cfg.entry, 0))
    return Facts(problem, cfg, found)


class Facts(Generic[F]):
    """The solution: the fact at the top of every block (``top``) and at its bottom, after
    its last instruction on the normal path (``bottom``); :meth:`points` inside a block."""

    __slots__ = ("analysis", "cfg", "top", "bottom", "visits", "_top", "_bottom")

    def __init__(self, problem: Problem[F], cfg: CFG,
                 found: dataflow.Solution[Part, F]) -> None:
        self.analysis = problem
        self.cfg = cfg
        self.visits = found.visits  # how many blocks the worklist processed
        self._top, self._bottom = found.top, found.bottom  # by the plain solver's blocks
        self.top: dict[str, F] = {name: found.top[name, 0] for name in cfg.blocks}
        self.bottom: dict[str, F] = {name: found.bottom[self._last(name)]
                                     for name in cfg.blocks}

    def _last(self, block: str) -> Part:
        return (block, 1) if (block, 1) in self._top else (block, 0)

    def _runs(self, block: str) -> list[tuple[Part, list[Instr]]]:
        """The plain solver's blocks of ``block`` and their instructions (as :func:`split`)."""
        instrs = self.cfg.blocks[block].instrs
        if self._last(block) == (block, 0):
            return [((block, 0), instrs)]
        return [((block, 0), instrs[:-1]), ((block, 1), instrs[-1:])]

    def points(self, block: str) -> list[F]:
        """The fact at every point of ``block``, in program order: ``points[k]`` is the fact
        right before instruction ``k`` and ``points[-1]`` the fact after the last one (on
        the normal path). In a block that may throw, the point before the last instruction
        is where the exceptional edge leaves: a backward fact there includes the
        handler's, a forward fact there is what the handler receives."""
        a = self.analysis
        runs = self._runs(block)
        if a.forward:
            found = [self._top[block, 0]]
            for part, instrs in runs:
                fact = self._top[part]  # (for the throwing instruction: the first part's out)
                for instr in instrs:
                    fact = a.transfer(instr, fact)
                    found.append(fact)
            return found
        found = [self._bottom[runs[-1][0]]]
        if len(runs) == 2:  # the point before the throwing instruction: both paths
            found.append(self._bottom[block, 0])
        fact = found[-1]
        for instr in reversed(runs[0][1]):
            fact = a.transfer(instr, fact)
            found.append(fact)
        return found[::-1]

    def from_handler(self, block: str) -> F | None:
        """What flows along ``block``'s exceptional edge (None when it has none): for a
        backward analysis, the handler's fact as it arrives before the throwing
        instruction. (A call runs on both paths: what it *does* -- not what it writes --
        is seen by the handler too; such a question asks for this beside ``points``.)"""
        handler = self.cfg.blocks[block].throws_to
        if handler is None or self._last(block) == (block, 0):
            return None
        a = self.analysis
        fact = self._top[handler, 0] if not a.forward else self._bottom[block, 0]
        return a.edge(block, handler, fact) if a.edge is not None and not a.forward else fact

    def walk_backward(self: Facts[frozenset[Any]], block: str
                      ) -> Iterator[tuple[int, Instr, set[Any]]]:
        """For a backward gen/kill analysis: ``(k, instr, fact after instr k)`` from the last
        instruction of ``block`` to the first, with one set changed in place (fast on long
        blocks; copy it to keep it). After a throwing last instruction: its normal path."""
        a = self.analysis
        assert not a.forward and a.gen is not None and a.kill is not None
        split_here = self._last(block) != (block, 0)
        instrs = self.cfg.blocks[block].instrs
        fact = set(self._bottom[self._last(block)])
        for k in range(len(instrs) - 1, -1, -1):
            instr = instrs[k]
            yield k, instr, fact
            if split_here and k == len(instrs) - 1:
                # before the throwing instruction: its normal path met with the handler's
                fact = set(self._bottom[block, 0])
                continue
            fact.difference_update(a.kill(instr))
            fact.update(a.gen(instr))
