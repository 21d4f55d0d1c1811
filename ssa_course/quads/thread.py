"""Jump threading with the facts of branches (the ``thread`` pass of ``ssa-course opt``).

After a test ``br c .then .else`` the program *knows* something: on the edge to ``.then``,
``c`` is true; on the edge to ``.else``, false. Out of SSA, after coalescing and layout,
the same test often comes back where nothing it reads has changed:

* a loop's test copied onto its back edges by layout (``v12 = gt num one; br v12 ...``
  in a path that changed neither ``num`` nor ``one`` since the test that got it here);
* a block that only tests again what a predecessor tested (Euclid's ``br v2`` after
  ``br v4``, both in the body of the loop that computed ``v2``).

This pass finds those with one forward data-flow problem (a *must* problem solved by the
one solver, :mod:`ssa_course.quads.flow`): at each point, which facts certainly hold.

* ``("expr", d, op, type, args...)``: ``d`` holds the value of ``op`` on ``args``, and none
  of them was written since (``const`` and ``id`` too; value operators only -- a load or a
  call may give something else the second time);
* ``("val", c, b)``: the boolean ``c`` is ``b`` -- made by ``c = const b`` and by the edges
  of ``br c``.

Writing a variable kills every fact that mentions it. Facts meet by intersection: a fact
holds at a join when it holds on every edge into it (and, solved optimistically, around a
loop when it holds on entry and nothing in the loop kills it; a function with more than
:data:`OPTIMISTIC_FACTS` facts is solved from nothing instead, which keeps the cost linear
and loses only facts carried round loops). A ``val`` fact crosses an edge only into a block
from which some ``br`` may still test its variable (:class:`_TestsAhead`): nothing else
reads it, and an else-if chain would otherwise carry every arm's "false" to the end.
Then three rewrites use them:

1. ``d = op args`` where ``("expr", d, op, ...)`` already holds is deleted: ``d`` already
   has that value (and the earlier evaluation did not trap, so this one would not);
2. ``br c .t .f`` where ``c`` is known becomes ``jmp`` to the side it takes;
3. an edge ``P -> B``, where ``B`` is only redundant instructions (rule 1, with the facts at
   the end of ``P`` along that edge) and a ``br`` whose condition those facts decide (or a
   ``jmp``), goes straight to where ``B`` would jump.

Each rewrite removes work from some path and adds none to any: the program executes no
more instructions than before. Rounds repeat while an edge moved (a threaded edge may
make a later test known), at most :data:`ROUNDS` times; ``dce`` after it drops the tests
left unused. When an edge moved, the blocks are laid out again
(:func:`ssa_course.quads.layout.layout`), so a jump that can fall through does.

Functions with exception handlers (``enter``) are left alone, as by ``landing``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ssa_course import opcodes
from ssa_course.floats import const_key
from ssa_course.quads.cfg import CFG, BasicBlock, build_cfg, remove_unreachable
from ssa_course.quads.components import components
from ssa_course.quads.flow import gen_kill, solve
from ssa_course.quads.ir import Function, Instr
from ssa_course.quads.layout import layout

Fact = tuple[object, ...]  # ("expr", dest, op, type, args...) or ("val", var, bool)

OPTIMISTIC_FACTS = 2000  # more facts than this: solved pessimistically (see ``_round``)
ROUNDS = 3  # a threaded edge can expose one more; three rounds catch what the benchmarks have


def expr_fact(instr: Instr) -> Fact | None:
    """The fact ``instr`` makes true about its destination (None: it makes none).

    ``x = add x one`` makes none: after it, ``x`` no longer holds ``add`` of what ``x`` is.
    """
    d = instr.dest
    if d is None or d in instr.args:
        return None
    if instr.op == "const":
        # the Python type tells ``true`` from ``1`` (equal as Python values)
        return ("expr", d, "const", str(instr.type), *const_key(instr.value))
    if instr.op == "id":
        return ("expr", d, "id", str(instr.type), *instr.args)
    op = opcodes.get(instr.op)
    if op is None or not op.pure:  # loads, calls, allocations: no value to count on
        return None
    return ("expr", d, instr.op, str(instr.type), *instr.args)


class _Universe:
    """Every fact the function can make that a rewrite may use, indexed by the variables
    each one mentions (what a write of that variable kills): the gen and kill sets of the
    data-flow problem.

    An ``expr`` fact is only useful where the same instruction (same destination, same
    operation) is written twice: the second may find it already done. Facts of
    instructions written once are left out, so the sets stay small -- tracking every
    value of a 10,000-statement function through every block would be quadratic."""

    def __init__(self, cfg: CFG) -> None:
        self.mentions: dict[str, set[Fact]] = {}
        self.tested: set[str] = set()  # the conditions of some ``br``
        # id(instr) -> (instr, its gen set, its expr_fact): asked often; holding the
        # instruction keeps its id from being reused by a new one while the table lives
        self._gens: dict[int, tuple[Instr, list[Fact], Fact | None]] = {}
        seen: set[Fact] = set()
        self.repeated: set[Fact] = set()  # the expr facts of instructions written twice
        made: list[tuple[Instr, Fact | None]] = []  # (each instruction's expr_fact, once)
        for block in cfg.blocks.values():
            term = block.terminator
            if term is not None and term.op == "br":
                self.tested.add(term.args[0])
            for instr in block.instrs:
                fact = expr_fact(instr)
                made.append((instr, fact))
                if fact is not None:
                    (self.repeated if fact in seen else seen).add(fact)
        gens = self._gens
        for instr, fact in made:  # every gen set now (``gen`` then only looks it up)
            found = [] if fact is None else self._made(instr, fact)
            gens[id(instr)] = (instr, found, fact)
            for f in found:
                for var in _variables(f):
                    self.mentions.setdefault(var, set()).add(f)
        for c in self.tested:  # the facts the edges of a ``br`` make
            self.mentions.setdefault(c, set()).update({("val", c, True), ("val", c, False)})

    def gen(self, instr: Instr) -> list[Fact]:
        found = self._gens.get(id(instr))
        if found is None:
            fact = expr_fact(instr)
            found = self._gens[id(instr)] = (
                instr, [] if fact is None else self._made(instr, fact), fact)
        return found[1]

    def own(self, instr: Instr) -> Fact | None:
        """:func:`expr_fact` of ``instr`` (kept from the table's construction)."""
        found = self._gens.get(id(instr))
        return expr_fact(instr) if found is None else found[2]

    def _made(self, instr: Instr, fact: Fact) -> list[Fact]:
        """The facts ``instr``, whose :func:`expr_fact` is ``fact``, makes true."""
        made = [fact] if fact in self.repeated else []
        if instr.op == "const" and isinstance(instr.value, bool) and fact[1] in self.tested:
            made.append(("val", fact[1], instr.value))
        return made

    def kill(self, instr: Instr) -> Iterable[Fact]:
        return self.mentions.get(instr.dest, ()) if instr.dest is not None else ()


def _variables(fact: Fact) -> list[str]:
    """The variables a fact mentions: its subject, and an expression's operands."""
    if fact[0] == "val":
        return [str(fact[1])]
    if fact[2] == "const":
        return [str(fact[1])]
    return [str(x) for x in (fact[1], *fact[4:])]


def _edge_fact(cfg: CFG, src: str, dst: str) -> Fact | None:
    """What taking the edge ``src -> dst`` tells: the value of ``src``'s branch condition."""
    term = cfg.blocks[src].terminator
    if term is None or term.op != "br" or len(set(term.labels)) != 2:
        return None
    return ("val", term.args[0], dst == term.labels[0])


def thread_jumps(fn: Function) -> Function:
    """``fn`` with the tests its branches already decided removed (see the module text)."""
    if any(i.op in ("enter", "phi") for i in fn.instrs()):
        return fn
    cfg = build_cfg(fn, copy=False)  # (rule 3 copies the one instruction it changes)
    changed = moved = False
    for _ in range(ROUNDS):
        changed_now, moved_now = _round(cfg)
        changed |= changed_now
        moved |= moved_now
        if not moved_now:  # only a changed edge can make more facts hold: no new round
            break
    if not changed:
        return fn
    if not moved:  # instructions deleted, every edge in place: the layout stays good
        return cfg.to_function(copy=False)  # (the CFG's copies: ours, the CFG is dropped)
    remove_unreachable(cfg)
    # a moved edge may leave a jump where a fall-through was: lay the blocks out again
    return layout(cfg.to_function(copy=False))


def _round(cfg: CFG) -> tuple[bool, bool]:
    """Solve the facts once and apply the three rewrites: (did anything change, did an
    edge move -- then another round may find more)."""
    universe = _Universe(cfg)
    ahead = _TestsAhead(cfg)

    def edge(src: str, dst: str, fact: frozenset[Fact]) -> frozenset[Fact]:
        # A ``val`` fact crosses an edge only if its variable is tested ahead: elsewhere no
        # rule reads it, and carried down an else-if chain every test's "false" would
        # pile up (10,000 arms: 50 million set entries). The kept facts are the same.
        if any(f[0] == "val" and not ahead.read_from(dst, f[1]) for f in fact):
            fact = frozenset(f for f in fact if f[0] != "val" or ahead.read_from(dst, f[1]))
        extra = _edge_fact(cfg, src, dst)
        if extra is None or extra in fact or not ahead.read_from(dst, extra[1]):
            return fact
        return fact | {extra}

    # Optimistic: every point starts from every fact (the entry from none), so a loop's
    # header keeps what holds on entry and around the back edge (starting from nothing,
    # the back edge would bring nothing and the header would never know anything).
    # A function with very many facts is solved pessimistically (from nothing): each
    # block's sets are then only what its own neighbourhood makes, and the cost stays
    # linear where the optimistic sets would be carried through thousands of blocks.
    everything = frozenset().union(*universe.mentions.values())
    if len(everything) > OPTIMISTIC_FACTS:
        everything = frozenset()
    analysis = gen_kill("known", forward=True, may=False, gen=universe.gen,
                        kill=universe.kill, edge=edge, init=everything)
    facts = solve(cfg, replace(analysis, meet=_meet))
    changed = moved = False
    bottoms: dict[str, set[Fact]] = {}
    reached = cfg.reachable()  # (an unreached block keeps ``everything``: left alone)
    for name, block in cfg.blocks.items():
        if name not in reached:
            bottoms[name] = set()
            continue
        fact = set(facts.top[name])
        deleted, folded = _simplify(cfg, block, fact, universe)  # (walks ``fact`` down)
        changed |= deleted or folded
        moved |= folded
        bottoms[name] = fact
    for name, block in cfg.blocks.items():
        if name in reached and _thread(cfg, block, bottoms[name]):
            changed = moved = True
    return changed, moved


class _TestsAhead:
    """Which ``val`` facts a rewrite may still read past an edge: those whose variable
    some ``br`` may test in a block reachable from the edge's target. Reachability is
    read off the strongly connected components of the CFG: Tarjan finishes a component
    after every component it reaches, so a block whose component finished before the
    first one holding a ``br c`` reaches no ``br c`` (exact on an else-if chain; a loop
    counts as testing everywhere in it). Linear to build, one comparison per question;
    the kept facts are a superset of those any rule reads, so the rewrites are the
    same (and a predecessor keeps whatever its successor keeps: its component finishes
    no sooner)."""

    def __init__(self, cfg: CFG) -> None:
        def succs(name: str) -> list[str]:
            return [s for s in cfg.blocks[name].succs if s in cfg.blocks]

        self.finished: dict[str, int] = {}  # block -> when its component finished
        for k, component in enumerate(components(cfg.blocks, succs)):
            for name in component:
                self.finished[name] = k
        self.first: dict[str, int] = {}  # condition -> the earliest finish of a br on it
        for name, block in cfg.blocks.items():
            term = block.terminator
            if term is not None and term.op == "br":
                c = term.args[0]
                self.first[c] = min(self.first.get(c, self.finished[name]),
                                    self.finished[name])

    def read_from(self, block: str, c: object) -> bool:
        """May a ``br`` on ``c`` run after control enters ``block``?"""
        first = self.first.get(str(c))
        return first is not None and self.finished[block] >= first


def _meet(*facts: frozenset[Fact]) -> frozenset[Fact]:
    """Intersection, starting from the smallest fact: where a back edge still brings
    ``everything``, the cost is that of the real fact, not of the whole universe."""
    smallest = min(facts, key=len)
    return smallest.intersection(*(f for f in facts if f is not smallest))


def _simplify(cfg: CFG, block: BasicBlock, fact: set[Fact],
              universe: _Universe) -> tuple[bool, bool]:
    """Rules 1 and 2 inside one block, from the facts at its top; ``fact`` is left as the
    facts at its bottom. Returns (was an instruction deleted, was a ``br`` decided)."""
    kept: list[Instr] = []
    deleted = folded = False
    for instr in block.instrs:
        own = universe.own(instr)
        if own is not None and own in fact:  # rule 1: the value is already there
            deleted = True
            continue
        if instr.op == "br":
            known = _known(fact, instr.args[0])
            if known is not None:  # rule 2: the test is decided
                target = instr.labels[0] if known else instr.labels[1]
                dropped = instr.labels[1] if known else instr.labels[0]
                instr = Instr("jmp", labels=[target], pos=instr.pos, line=instr.line)
                block.succs = [target]
                if dropped != target and block.name in cfg.blocks[dropped].preds:
                    cfg.blocks[dropped].preds.remove(block.name)
                folded = True
        fact.difference_update(universe.kill(instr))
        fact.update(universe.gen(instr))
        kept.append(instr)
    block.instrs = kept
    return deleted, folded


def _known(fact: set[Fact], c: str) -> bool | None:
    if ("val", c, True) in fact:
        return True
    if ("val", c, False) in fact:
        return False
    return None


def _thread(cfg: CFG, block: BasicBlock, bottom: set[Fact]) -> bool:
    """Rule 3 on the edges leaving ``block``; True when one moved."""
    term = block.terminator
    if term is not None and term.op not in ("jmp", "br"):
        return False  # ``ret``, ``throw``: no edge to move
    changed = False
    for succ in list(dict.fromkeys(block.succs)):
        if succ == block.throws_to or succ == block.name:
            continue
        fact = set(bottom)
        extra = _edge_fact(cfg, block.name, succ)
        if extra is not None:
            fact.add(extra)
        target = _passes_to(cfg.blocks[succ], fact)
        if target is None or target == succ:
            continue
        if term is not None:  # (a copy: the CFG's blocks hold the function's own)
            term = block.instrs[-1] = term.copy()
            term.labels = [target if lb == succ else lb for lb in term.labels]
        block.succs = [target if s == succ else s for s in block.succs]
        cfg.blocks[succ].preds.remove(block.name)
        cfg.blocks[target].preds.append(block.name)
        changed = True
    return changed


def _passes_to(block: BasicBlock, fact: set[Fact]) -> str | None:
    """Where control entering ``block`` with ``fact`` certainly goes, when nothing the block
    does on the way changes a value (None: the block must run)."""
    if not block.instrs or block.throws_to is not None:
        return None
    *body, last = block.instrs
    for instr in body:
        own = expr_fact(instr)
        if own is None or own not in fact:
            return None
    if last.op == "jmp":
        return last.labels[0]
    if last.op == "br":
        known = _known(fact, last.args[0])
        if known is not None:
            return last.labels[0] if known else last.labels[1]
    return None
