"""Per-function summaries: how each argument of a function may escape, seen from a call.

A summary speaks about *ports*: argument ``j`` (1-based), the returned value (port 0).
After analysing a callee, two ports are *related* when something reachable from one may
be reachable from the other (their alias classes' contents overlap): the caller must then
treat the actual arguments (or the call's result) as one object whose inside it cannot
tell apart -- it collapses and merges them. A port is *written* when the callee stores a
reference somewhere inside it (the caller's view of that structure's fields is no longer
exact, so it is collapsed); it *escapes* when something inside it escapes everywhere, and
is *thrown* when it may be thrown out of the callee. A port related to nothing, written
by nothing and escaping nowhere costs the caller nothing: passing an object to a function
that only reads it keeps it NoEscape.
"""

from __future__ import annotations

from dataclasses import dataclass, field

RETURN = 0  # the port of the returned value


@dataclass(frozen=True, slots=True)
class Summary:
    """How a function's ports may escape (see the module docstring)."""

    groups: frozenset[frozenset[int]] = frozenset()  # related ports, two or more each
    written: frozenset[int] = frozenset()
    everywhere: frozenset[int] = frozenset()
    thrown: frozenset[int] = frozenset()

    def describe(self, argnames: list[str]) -> str:
        """One line per port that does something, e.g. ``p -> stored into c``."""
        def name(port: int) -> str:
            return "return" if port == RETURN else argnames[port - 1]

        lines = []
        for g in sorted(self.groups, key=sorted):
            lines.append("related: " + ", ".join(name(p) for p in sorted(g)))
        for label, ports in (("written", self.written), ("escapes", self.everywhere),
                             ("thrown", self.thrown)):
            if ports:
                lines.append(f"{label}: " + ", ".join(name(p) for p in sorted(ports)))
        return "; ".join(lines) or "no escape"


EMPTY = Summary()


@dataclass(slots=True)
class _PortGraph:
    """Union-find over the ports, to turn overlapping reach sets into groups."""

    parent: dict[int, int] = field(default_factory=dict)

    def find(self, p: int) -> int:
        self.parent.setdefault(p, p)
        while self.parent[p] != p:
            self.parent[p] = self.parent[self.parent[p]]
            p = self.parent[p]
        return p

    def join(self, a: int, b: int) -> None:
        self.parent[self.find(a)] = self.find(b)


def make_summary(reach: dict[int, set[int]], written: set[int], everywhere: set[int],
                 thrown: set[int]) -> Summary:
    """A summary from each port's reachable classes (``reach``: port -> class roots) and
    the roots that were stored into, escape everywhere or are thrown."""
    graph = _PortGraph()
    owner: dict[int, int] = {}
    for port in sorted(reach):
        graph.find(port)
        for root in reach[port]:
            if root in owner:
                graph.join(port, owner[root])
            else:
                owner[root] = port
    members: dict[int, set[int]] = {}
    for port in reach:
        members.setdefault(graph.find(port), set()).add(port)
    return Summary(
        frozenset(frozenset(g) for g in members.values() if len(g) > 1),
        # stores into what the callee returns rearrange nothing the caller had
        frozenset(p for p, rs in reach.items() if rs & written and p != RETURN),
        frozenset(p for p, rs in reach.items() if rs & everywhere),
        frozenset(p for p, rs in reach.items() if rs & thrown))


def join_summaries(a: Summary, b: Summary) -> Summary:
    """The least summary that says everything ``a`` and ``b`` say (groups that overlap
    merge)."""
    reach: dict[int, set[int]] = {}
    for k, g in enumerate(list(a.groups) + list(b.groups)):
        for p in g:
            reach.setdefault(p, set()).add(-1 - k)
    return Summary(make_summary(reach, set(), set(), set()).groups, a.written | b.written,
                   a.everywhere | b.everywhere, a.thrown | b.thrown)
