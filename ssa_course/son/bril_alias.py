"""Alias classes for Bril's pointers: one class per ``alloc`` site, and "unknown".

A Bril pointer comes from one ``alloc`` (brili never reuses a freed object: every
``alloc`` makes a new one) and ``ptradd`` stays inside its object. So the pointer's
*origin* -- the ``alloc`` node it provably derives from, through ``ptradd`` and through
phis whose inputs all derive from that one node -- names its alias class. A pointer of
unknown origin (a parameter, a loaded pointer, a call's result, a phi mixing two sites)
is in the class "unknown", which may alias every class. Two pointers of two different
known sites never alias: a store or ``free`` through one is walked past by a load
through the other (:func:`passes_load`, asked by :mod:`ssa_course.son.alias`'s walk).

What a load may forward (be replaced by) -- only where it provably reads the same address
and cannot fail, since a removed load that would have failed is a lost error
(``uninitialized``, ``use after free``, out of bounds):

* the value of a ``store`` through the *same pointer node* (``store p v; ...; load p``):
  that store succeeded, and nothing in between may free or rewrite the address;
* an earlier ``load`` through the same pointer node (it succeeded and read that value);
* at a memory merge, a phi of such values when *every* path gives one (never a load moved
  onto a path: it could fail there), and the pointer is computed before the merge (the
  same node then names the same address on every path and round a loop).

Nothing else changes: every other load, store and ``free`` stays, in order.
"""

from __future__ import annotations

from ssa_course.son.alias import distinct_indices, memory_merge, reaching_value
from ssa_course.son.control import Phi, Proj, Start, strictly_dominates
from ssa_course.son.data import Add
from ssa_course.son.graph import Node
from ssa_course.son.types import IntType

# The walks are bounded (no recursion, no long chains): running out answers "unknown".
_ORIGIN_WALK = 64  # nodes looked at to find a pointer's origin
_AVAILABLE_WALK = 64  # nodes looked at to show a pointer is computed before a merge


def is_alloc(n: Node) -> bool:
    return getattr(n, "op", None) == "alloc" and getattr(n, "pinned", False)


def is_bril_load(n: Node) -> bool:
    return getattr(n, "op", None) == "load" and getattr(n, "pinned", False)


def origin(ptr: Node, watcher: Node) -> Node | None:
    """The ``alloc`` node ``ptr`` provably points into (None: unknown)."""
    found: Node | None = None
    seen: set[int] = set()
    todo = [ptr]
    while todo:
        n = watcher.dep_read(todo.pop())
        if n.id in seen:
            continue
        seen.add(n.id)
        if len(seen) > _ORIGIN_WALK:
            return None
        if is_alloc(n):
            if found is not None and found is not n:
                return None  # a phi mixing two sites
            found = n
        elif getattr(n, "op", None) == "ptradd" and not n.pinned:
            todo.append(n.operand(1))
        elif isinstance(n, Phi):
            # An undefined input carries no pointer: using it as one stops the program
            # before any address is read (the undefined-variable guard).
            todo.extend(v for v in n.inputs[1:]
                        if v is not None and type(v).__name__ != "Undefined")
        else:
            return None  # a parameter, a loaded pointer, a call's result...
    return found


def may_alias(p: Node, q: Node, watcher: Node) -> bool:
    """May pointers ``p`` and ``q`` address the same object? Only two different known
    sites say no."""
    if p is q:
        return True
    a, b = origin(p, watcher), origin(q, watcher)
    return a is None or b is None or a is b


def _base_offset(ptr: Node) -> tuple[Node, Node | None]:
    """``ptradd b k`` -> (b, k); any other pointer -> (itself, None: offset 0)."""
    if getattr(ptr, "op", None) == "ptradd" and not ptr.pinned:
        return ptr.operand(1), ptr.operand(2)
    return ptr, None


def _constant(n: Node) -> int | None:
    t = n.type
    return t.lo if isinstance(t, IntType) and t.lo == t.hi else None


def _plus(n: Node) -> tuple[Node, int]:
    """``x + c`` (a constant ``c``) -> (x, c); anything else -> (itself, 0)."""
    if isinstance(n, Add):
        c = _constant(n.operand(2))
        if c is not None:
            return n.operand(1), c
        c = _constant(n.operand(1))
        if c is not None:
            return n.operand(2), c
    return n, 0


def _distinct_offsets(i: Node | None, j: Node | None) -> bool:
    """Two offsets from one base that are never equal: constant ranges that do not meet
    (None is 0), or ``x + c1`` and ``x + c2`` with ``c1 != c2`` (wrapping keeps them
    apart: adding a non-zero constant never gives the same 64-bit value)."""
    if i is None and j is None:
        return False
    if i is None or j is None:
        k = j if i is None else i
        assert k is not None
        t = k.type
        return isinstance(t, IntType) and (t.lo > 0 or t.hi < 0)
    if distinct_indices(i, j):
        return True
    (x, a), (y, b) = _plus(i), _plus(j)
    return x is y and a != b


def distinct_addresses(p: Node, q: Node, watcher: Node) -> bool:
    """``p`` and ``q`` are provably two different slots: one base and two offsets that
    are never equal (``ptradd a i`` and ``ptradd a (i + 1)``), or ``p`` and ``ptradd p k``
    with ``k`` never 0. (The same nodes in one walk without a merge: one value each.)"""
    (bp, op), (bq, oq) = _base_offset(p), _base_offset(q)
    watcher.dep_read(bp)
    watcher.dep_read(bq)
    if bp is bq:
        return _distinct_offsets(op, oq)
    if bq is p:
        return _distinct_offsets(None, oq)
    if bp is q:
        return _distinct_offsets(op, None)
    return False


def passes_load(effect: Node, load: Node) -> tuple[Node | None, bool]:
    """A Bril effect (``store``, ``free``, ``keep``) asked by a load: (the value the load
    reads here, or None; whether the load may look further back)."""
    op = getattr(effect, "op", None)
    if not is_bril_load(load):
        return None, True  # Tiny's arrays and structs are never Bril memory
    q = load.operand(2)
    if op == "keep":
        kept = load.dep_read(effect.operand(2))
        # an earlier load through the same pointer node: it read (and proved readable)
        # the slot; an allocation or int2char writes nothing that is already there
        if is_bril_load(kept) and kept is not load and kept.operand(2) is q:
            return kept, False
        return None, True
    p = load.dep_read(effect.operand(2))
    if op == "store" and p is q:
        return effect.operand(3), False
    if op == "store" and distinct_addresses(p, q, load):
        return None, True  # another slot of the same object (a free is of the whole block)
    return None, not may_alias(p, q, load)


def forwarded(load: Node) -> Node | None:
    """What a Bril ``load`` may be replaced by (see the module's docstring), or None."""
    return reaching_value(load, load.operand(1)) or _split(load)


def _split(load: Node) -> Node | None:
    """At a memory merge: a phi of the values every path gives (None unless all do)."""
    merge = memory_merge(load)
    if merge is None:
        return None
    phi, region = merge
    load.dep_read(phi)
    load.dep_read(region)
    # (Every path giving a value through this very pointer node already implies that the
    # node is computed before the merge; the check is kept as a cheap guard, so that the
    # same node surely names one address on every path and round a loop.)
    if not available(load.operand(2), region, load):
        return None
    values = [reaching_value(load, phi.operand(k), False) for k in range(1, len(phi.inputs))]
    if any(v is None for v in values):
        return None
    made = [reaching_value(load, phi.operand(k)) for k in range(1, len(phi.inputs))]
    return Phi(load.graph, region, *made, declared=load.type)


def _dominates(a: Node, b: Node, watcher: Node) -> bool:
    """Control ``a`` dominates control ``b`` (``a`` is not ``b``): the finished graph's
    tree when there is one (Bril's loop heads are plain Regions, which the bounded walk
    up cannot pass), else that walk."""
    dom = a.graph.dom
    if dom is not None:
        dom.watch(watcher)
        return dom.dominates(a, b)
    return strictly_dominates(a, b, watcher)


def available(ptr: Node, region: Node, watcher: Node) -> bool:
    """``ptr`` is computed before ``region`` on every path: made of constants, parameters,
    and values whose control (or phi's merge) strictly dominates ``region``."""
    seen: set[int] = set()
    todo = [ptr]
    while todo:
        n = watcher.dep_read(todo.pop())
        if n.id in seen:
            continue
        seen.add(n.id)
        if len(seen) > _AVAILABLE_WALK:
            return False
        ctrl = n.inputs[0] if n.inputs else None
        if isinstance(n, Proj) and isinstance(n.inputs[0], Start):
            continue  # a parameter (or the entry's memory)
        if isinstance(n, Phi) or n.pinned:
            if ctrl is None or ctrl is region or not _dominates(ctrl, region, watcher):
                return False
            continue
        if isinstance(ctrl, Start) and len(n.inputs) == 1:
            continue  # a constant
        if ctrl is not None:
            return False  # a value pinned under a test (a division): not followed
        todo.extend(v for v in n.inputs[1:] if v is not None)
    return True
