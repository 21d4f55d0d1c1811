"""Alias classes: a union-find of values that may name one object, with its contents.

IRCode names one object in many ways (a phi of two allocations, a PiNode, an Upsilon and
its PhiC, a load of the field it was stored in), and escape information must be equal
across such names. Following Julia's design (after Kotzmann and Mössenböck), the values
that may alias are kept in one *class* of a disjoint-set forest, and the escape state is
kept per class.

A class also knows its *contents*: for a struct, one class per field; for an array, one
class for all its elements (one alias slot per array). Storing ``v`` into ``o.f`` and
loading ``o.f`` both join the class of ``o.f``, so a load and every store it may read are
one class (unification, as in Steensgaard's points-to analysis). When two classes with
contents merge, their contents merge too (on an explicit stack, never by recursion). A
class whose shape cannot be told (a struct merged with an array, a structure handed to a
call that may rearrange it) is *collapsed*: it becomes its own contents.
"""

from __future__ import annotations

from ssa_course.analysis.escape_lattice import NO_ESCAPE, EscapeInfo

ELEMENTS = "[]"  # the content key of an array's elements (no field has this name)


# Only a root carries state: merging two classes joins their states once, and every
# former root's data is dropped, so no stale copy can disagree later.
class _Root:
    __slots__ = ("info", "params", "shape", "members", "collapsed")

    def __init__(self, member: object):
        self.info: EscapeInfo = NO_ESCAPE
        self.params: set[int] = set()  # argument numbers among the members
        self.shape: dict[str, int] = {}  # field (or ELEMENTS) -> content node
        self.members: list[object] = [member]
        self.collapsed = False


class AliasClasses:
    """The disjoint-set forest of values and content nodes (every node is an ``int``;
    :meth:`node` numbers values). ``changed`` collects the roots whose state grew, for
    the solver's worklist."""

    def __init__(self) -> None:
        # parent[n] == n marks a root. Content nodes are nodes like any other (member None),
        # so "the class of x.f" can be unified with values by the same union.
        self.parent: list[int] = []
        self.roots: dict[int, _Root] = {}
        self.ids: dict[object, int] = {}
        self.changed: set[int] = set()

    def copy(self) -> AliasClasses:
        """An independent copy (values and escape states are immutable, so shared)."""
        new = AliasClasses()
        new.parent = list(self.parent)
        new.ids = dict(self.ids)
        new.changed = set(self.changed)
        for r, root in self.roots.items():
            c = new.roots[r] = _Root(None)
            c.info, c.params, c.shape = root.info, set(root.params), dict(root.shape)
            c.members, c.collapsed = list(root.members), root.collapsed
        return new

    # -- nodes -------------------------------------------------------------------

    def node(self, value: object) -> int:
        """The node of a value (an argument or statement), made on first use."""
        n = self.ids.get(value)
        if n is None:
            n = self._fresh(value)
            self.ids[value] = n
        return n

    def _fresh(self, member: object) -> int:
        n = len(self.parent)
        self.parent.append(n)
        self.roots[n] = _Root(member)
        return n

    # Iterative, with path compression: chains stay short and no recursion limit is hit
    # by a long chain of unions.
    def find(self, n: int) -> int:
        root = n
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[n] != root:  # path compression
            self.parent[n], n = root, self.parent[n]
        return root

    def root(self, n: int) -> _Root:
        return self.roots[self.find(n)]

    # -- growing the state -----------------------------------------------------------

    def mark_param(self, n: int, number: int) -> None:
        self.root(n).params.add(number)

    def raise_info(self, n: int, info: EscapeInfo) -> bool:
        """Join ``info`` into the class of ``n``; True when it grew."""
        r = self.find(n)
        cls = self.roots[r]
        # Joining, never assigning: states only grow, which is what makes the worklist end.
        new = cls.info.join(info)
        if new == cls.info:
            return False
        cls.info = new
        self.changed.add(r)
        return True

    def content(self, n: int, key: str) -> int:
        """The node holding what field ``key`` (or ``ELEMENTS``) of ``n``'s objects may hold."""
        r = self.find(n)
        cls = self.roots[r]
        # A collapsed class is its own contents: every field of it is the class itself.
        if cls.collapsed:
            return r
        if cls.shape and (key == ELEMENTS) != (ELEMENTS in cls.shape):
            self.collapse(r)  # a struct and an array in one class: shapes cannot be told
            return self.find(r)
        c = cls.shape.get(key)
        if c is None:
            c = self._fresh(None)
            cls.shape[key] = c
            # Queued so the container's current escape reaches the new content node too.
            self.changed.add(r)
        return c

    def contents(self, n: int) -> list[int]:
        """The roots of the contents of ``n``'s class (itself once collapsed)."""
        r = self.find(n)
        cls = self.roots[r]
        return [r] if cls.collapsed else [self.find(c) for c in cls.shape.values()]

    def union(self, a: int, b: int) -> int:
        """Merge the classes of ``a`` and ``b`` (and, pairwise, their contents)."""
        # An explicit stack of pairs still to merge: merging two objects merges what their
        # fields may hold, field by field, which may merge further contents (a deep or
        # cyclic structure would overflow recursion).
        pending = [(a, b)]
        while pending:
            x, y = pending.pop()
            rx, ry = self.find(x), self.find(y)
            if rx == ry:
                continue
            cx, cy = self.roots[rx], self.roots[ry]
            # Union by size (members as the measure): the smaller class is the one whose
            # members are copied, keeping the total work near-linear.
            if len(cx.members) < len(cy.members):
                rx, ry, cx, cy = ry, rx, cy, cx
            self.parent[ry] = rx
            del self.roots[ry]
            cx.info = cx.info.join(cy.info)
            cx.params |= cy.params
            cx.members.extend(cy.members)
            self.changed.add(rx)
            # Shapes that disagree (or a side already collapsed): fields can no longer be
            # told apart, so everything either side held joins the merged class itself.
            if cx.collapsed or cy.collapsed or (
                    cx.shape and cy.shape and (ELEMENTS in cx.shape) != (ELEMENTS in cy.shape)):
                pending.extend((rx, c) for c in list(cx.shape.values()) + list(cy.shape.values()))
                cx.shape = {}
                cx.collapsed = True
                continue
            # Same shape: field f of the merged class is f of either side, so the two
            # content nodes of one field must become one class as well.
            for key, c in cy.shape.items():
                mine = cx.shape.get(key)
                if mine is None:
                    cx.shape[key] = c
                else:
                    pending.append((mine, c))
        return self.find(a)

    def collapse(self, n: int) -> int:
        """Make ``n``'s class and everything reachable from it one class with no shape
        (a union with a collapsed class swallows the other side's contents, so one union
        per former content is enough)."""
        r = self.find(n)
        cls = self.roots[r]
        if cls.collapsed:
            return r
        inner = list(cls.shape.values())
        cls.shape = {}
        cls.collapsed = True
        self.changed.add(r)
        for c in inner:
            r = self.union(r, c)
        return self.find(r)
