"""Fresh names: the one service every pass asks for a name nothing else uses yet.

A pass that adds a variable or a block needs a name the function does not use. It makes
one :class:`Names` per function (and per namespace: variables and labels never clash in
quads, ``.L`` vs ``x`` in Bril text) from the names already there, then asks
:meth:`Names.fresh` for each new one. A name handed out is reserved at once, so two
requests never get the same answer.

Each pass keeps its own *spelling*, so a reader can tell where a name comes from:

| who | asks | gets |
|---|---|---|
| lowering's temporaries | ``fresh("t", bare=False, sep="")`` | ``t1``, ``t2``, ... |
| SSA construction | ``fresh("x", bare=False)`` | ``x.1``, ``x.2``, ... (versions) |
| out of SSA | ``fresh("x", bare=False, sep=".c", start=0)`` | ``x.c0``, ``x.c1`` (copies) |
| exception edges | ``fresh("b3", bare=False, sep=".x")`` | ``b3.x1`` (a split block) |
| CFG building | ``fresh("b", bare=False, sep="", start=0)`` | ``b0``, ``b1`` (unlabelled blocks) |
| unrolling | ``fresh("loop.u", sep="")`` | ``loop.u``, ``loop.u1`` (copied blocks) |
| landing pads | ``fresh("body.pad", sep="")`` | ``body.pad``, ``body.pad1`` |
| inlining, Bril SSA, constants | ``fresh("t")`` | ``t``, ``t.1``, ``t.2`` |
| scalar replacement | ``fresh("p.x", start=2)`` | ``p.x``, ``p.x.2`` |
| ... its split webs | ``fresh("v", bare=False, sep=".w", start=2)`` | ``v.w2``, ``v.w3`` |
| ... its clones | ``fresh("f__sroa_1", sep="_", start=2)`` | ``f__sroa_1``, ``f__sroa_1_2`` |
| codegen's hoisted loads | ``fresh("t", bare=False, sep=".lh")`` | ``t.lh1``, ``t.lh2`` |
| ... its versioned loops | ``fresh("b3slow", bare=False, sep="")`` | ``b3slow1`` |

Two older spellings append ``_`` until the name is free (the fresh entry block of SSA
construction, a block on a critical edge out of SSA); they are left as they are.
"""

from __future__ import annotations

from collections.abc import Iterable

from ssa_course.quads.ir import Function, Label


class Names:
    """The names taken in one namespace of one function, and fresh ones beside them."""

    __slots__ = ("taken", "_next")

    def __init__(self, taken: Iterable[str] = ()) -> None:
        self.taken: set[str] = set(taken)
        # (base, sep) -> the next number to try: a pass asking for x.1, x.2, ... many
        # times does not rescan the numbers it already handed out (linear, not quadratic)
        self._next: dict[tuple[str, str], int] = {}

    def fresh(self, base: str, *, bare: bool = True, sep: str = ".", start: int = 1) -> str:
        """A name not taken yet, now reserved: ``base`` itself when ``bare`` and free,
        else the first free ``base + sep + k`` for ``k = start, start + 1, ...``."""
        if bare and base not in self.taken:
            self.taken.add(base)
            return base
        k = self._next.get((base, sep), start)
        while f"{base}{sep}{k}" in self.taken:
            k += 1
        name = f"{base}{sep}{k}"
        self._next[(base, sep)] = k + 1
        self.taken.add(name)
        return name

    def reserve(self, name: str) -> None:
        """Mark ``name`` as used (a name the pass keeps from elsewhere)."""
        self.taken.add(name)

    def __contains__(self, name: str) -> bool:
        return name in self.taken


def variable_names(fn: Function) -> Names:
    """The variables of ``fn`` (parameters, every read and every write)."""
    taken = {name for name, _ in fn.params}
    for instr in fn.instrs():
        taken.update(instr.args)
        if instr.dest is not None:
            taken.add(instr.dest)
    return Names(taken)


def label_names(fn: Function) -> Names:
    """The labels of ``fn``."""
    return Names(item.name for item in fn.body if isinstance(item, Label))


def all_names(fn: Function) -> Names:
    """Variables and labels of ``fn`` in one namespace, for a pass that renames a body
    into both (a copied label then never matches a variable either)."""
    names = variable_names(fn)
    names.taken |= label_names(fn).taken
    return names
