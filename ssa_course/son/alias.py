"""What a load reads: walking back along memory (issue 22; Simple's chapters 10-18).

Memory is one chain of effects (:mod:`ssa_course.son.memory`). A load asks the effects
before it, nearest first, whether they wrote what it reads; each effect class answers
for itself (``passes_load``): a store to the same object and index (or field) gives the
value it stored, a store that cannot touch the slot is walked past, anything else stops
the walk. Two references cannot name the same object when they are two different
allocations (``new`` makes a fresh object each time), or when their types differ; two
indices of one array cannot name the same slot when their ranges do not meet
(``a[0] = 1; a[1] = 2; a[0]`` reads 1).

Reaching the function's entry means nothing before the load wrote the slot since the
object was made: a fresh ``new int[n]`` reads its zero, a fresh struct the value it was
made with. Reaching a memory Phi, the load is split through it (Simple's idea, our
code) when that folds: at a loop head, the back edge must give the stored value (the
field read round a loop becomes a value phi, ``bar.a = bar.a + 2`` -> ``Phi(0, Phi + 2)``);
at another merge, one path must (every path, at a Region that may head a loop); an
array load only when every path does (a load moved above its bounds test must not run).

Every effect the walk passes is a distant dependency of the load (``dep_read``): when one
changes, the load is looked at again.
"""

from __future__ import annotations

from ssa_course.son.control import (
    Loop,
    Phi,
    Proj,
    Region,
    Start,
    may_be_loop_head,
    strictly_dominates,
)
from ssa_course.son.graph import Node, typed
from ssa_course.son.types import IntType

# Running out of walk answers "unknown", which keeps the load: always safe.
_WALK = 32  # effects looked at per path (a cost bound)


def fresh(n: Node) -> bool:
    """An allocation: the object it makes is new each time it runs."""
    return getattr(n, "allocates", False)


def distinct_objects(a: Node, b: Node) -> bool:
    """``a`` and ``b`` never refer to one object: two different allocations, or two
    reference types."""
    # The same node is the same object (a must-alias); different nodes may still be one
    # object, unless one of the two rules below proves otherwise.
    if a is b:
        return False
    # Two allocation nodes are two objects even in a loop: each run of a ``new`` makes a
    # new object, and a load reads the latest one (the memory chain orders them).
    if fresh(a) and fresh(b):
        return True
    ta, tb = a.type, b.type
    # Tiny has no casts: an ``int[]`` and a ``bool[]`` are never one array.
    return ta.kind.startswith("ref ") and tb.kind.startswith("ref ") and ta.kind != tb.kind


def distinct_indices(i: Node, j: Node) -> bool:
    """The ranges of two indices do not meet (``0`` and ``1``; ``0..3`` and ``5``)."""
    a, b = i.type, j.type
    return isinstance(a, IntType) and isinstance(b, IntType) and (a.hi < b.lo or b.hi < a.lo)


def reaching_value(load: Node, mem: Node, make: bool = True) -> Node | None:
    """The value ``load`` reads when it reads memory state ``mem`` (None: unknown).
    With ``make`` False nothing is made: a fresh object's initial value is answered by
    the allocation itself (whether the walk finds a value, without making a constant
    that a rule then drops)."""
    for _ in range(_WALK):
        # Each effect passed is a distant input of the load: if it changes (a store folded
        # away, an index narrowed) the load may now read further back.
        load.dep_read(mem)
        # The function's entry: nothing wrote the slot since the object was made -- but only a
        # fresh object's initial value is known; initial_value says whether it is.
        if isinstance(mem, Proj) and isinstance(mem.inputs[0], Start):
            if not make:
                found: Node | None = (load.operand(2) if load.initial_value(False)  # type: ignore[attr-defined]
                                      else None)
                return found
            initial: Node | None = load.initial_value()  # type: ignore[attr-defined]
            return initial
        passes = getattr(mem, "passes_load", None)
        if passes is None:
            return None
        value, through = passes(load)
        if value is not None:
            found_value: Node = value
            return found_value
        # May alias: stop, the value is unknown.
        if not through:
            return None
        mem = mem.operand(1)
    return None


def last_effect(load: Node, mem: Node) -> Node:
    """The effect the walk from ``mem`` stops at (a Phi, a call, the entry...)."""
    # The same walk as reaching_value, only returning where it stopped.
    for _ in range(_WALK):
        passes = getattr(mem, "passes_load", None)
        if passes is None:
            return mem
        value, through = passes(load)
        if value is not None or not through:
            return mem
        mem = mem.operand(1)
    return mem


def memory_merge(load: Node) -> tuple[Phi, Region] | None:
    """The memory phi ``load`` reads and its merge, when the merge is finished and every
    input is there (where a load may be split into one per path), or None."""
    phi = last_effect(load, load.operand(1))
    if not isinstance(phi, Phi):
        return None
    region = phi.inputs[0]
    if not isinstance(region, Region) or region.in_progress() \
            or any(v is None for v in phi.inputs[1:]) \
            or any(p is None for p in region.inputs[1:]):
        return None
    return phi, region


def split_through_phi(load: Node) -> Node | None:
    """``Load(Phi(R, m1, m2))`` -> ``Phi(R, Load(m1), Load(m2))`` when that folds (see the
    module's docstring); None otherwise."""
    merge = memory_merge(load)
    if merge is None:
        return None
    phi, region = merge
    base = load.operand(2)
    # The answer depends on the phi and the merge, two and more edges away.
    load.dep_read(phi)
    load.dep_read(region)
    array = len(load.inputs) > 3
    # An index computed after the merge would not exist on the paths. (Asked first: it is
    # one look, and the usual array load in a loop stops here; when the index becomes a
    # constant the load is an input's user and is looked at again.)
    if array and not load.operand(3).type.is_constant():
        return None
    # The new loads sit at the ends of the merge's paths: their object must exist there.
    if not _available(base, region, load):
        return None
    # First ask, making nothing, which paths give a value: a split that does not fold would
    # only add loads.
    values = [reaching_value(load, phi.operand(k), False) for k in range(1, len(phi.inputs))]
    if isinstance(region, Loop):
        if values[1] is None:  # the back edge must give the value
            return None
    elif not any(v is not None for v in values):
        return None
    elif may_be_loop_head(region, load) and any(v is None for v in values):
        return None  # a Region round which a path comes back (Bril's loop heads)
    # An array load moved onto a path would run before that path's bounds test.
    if array and any(v is None for v in values):
        return None
    made: list[Node | None] = []
    for k, v in enumerate(values, start=1):
        mem = phi.operand(k)
        # A path with a known value gives it; the others get the load, moved to the end of that
        # path and reading that path's memory.
        made.append(reaching_value(load, mem) if v is not None
                    else typed(load.moved(region.operand(k), mem)))  # type: ignore[attr-defined]
    return Phi(load.graph, region, *made, declared=load.type)


def _available(base: Node, region: Node, watcher: Node) -> bool:
    """``base`` is computed before ``region`` on every path (a parameter, or an
    allocation whose control strictly dominates it)."""
    if isinstance(base, Proj) and isinstance(base.inputs[0], Start):
        return True
    if fresh(base) and base.inputs[0] is not None:
        return strictly_dominates(base.operand(0), region, watcher)
    return False
