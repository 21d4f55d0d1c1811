"""Per-function summaries: what a call does to the objects its caller hands over.

A summary speaks about *ports*: argument ``j`` (1-based) and the returned value (port 0).
It is a small graph of the callee's alias classes reachable from the ports, kept only
where it says something: each port enters a node, a node's fields (or an array's elements,
``[]``) lead to other nodes, and a node reached along two access paths means "these two
paths may name one object" (``y = x.f``: the callee stored ``y`` into ``x.f``). A node is
*written* when the callee stores a reference into it (the caller's list of what its fields
hold is no longer complete), *escapes* when it escapes everywhere, is *thrown* when it may
be thrown out of the callee, and *collapsed* when the callee could not tell its fields
apart. At a call the caller replays the graph on its own classes
(:func:`apply_summary`): port ``j``'s node is the actual argument's class, an edge ``f``
is that class's content ``f``, a node reached twice unifies what the two paths reach. So
a local object handed to a callee that stores an argument into it gets that argument as
the content of the right field -- the object itself stays NoEscape -- and the caller's
own summary says nothing about its argument being written.

Nodes farther than :data:`DEPTH` fields from every port are folded into their nearest
ancestor of the same kind (a cycle: ``a.next`` may be ``a``), or their parent is collapsed:
recursion could otherwise grow a summary by one level per round. With the depth bounded
and finitely many fields a summary has finitely many forms, and each round's summary is
joined with the previous one, so the rounds end.
Nodes that say nothing (a field only read) are left out: a function that only reads its
arguments has the empty summary, and passing an object to it costs the caller nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ssa_course.analysis.escape_classes import ELEMENTS, AliasClasses
from ssa_course.analysis.escape_lattice import EscapeInfo

RETURN = 0  # the port of the returned value
DEPTH = 4  # fields followed from a port before the rest is folded into one node

# What a caller's class is raised to when the callee's summary marks the node. Thrown uses
# site 0 only as a placeholder: the caller passes its own call statement as the site.
_EVERYWHERE = EscapeInfo(True, everywhere=True)
_THROWN = EscapeInfo(True, thrown=frozenset({0}))


@dataclass(frozen=True, slots=True)
class Summary:
    """A callee's effect on its ports (see the module docstring). Nodes are numbered in
    breadth-first order from the ports (ports in order, fields sorted), so two summaries
    that say the same thing are equal."""

    # Only tuples and frozensets: a Summary is compared with == to decide whether the
    # program-wide rounds are done, so it must be canonical and hashable.
    ports: tuple[tuple[int, int], ...] = ()  # (port, node), sorted by port
    edges: tuple[tuple[int, str, int], ...] = ()  # (node, field or "[]", node), sorted
    written: frozenset[int] = frozenset()
    everywhere: frozenset[int] = frozenset()
    thrown: frozenset[int] = frozenset()
    collapsed: frozenset[int] = frozenset()

    def names(self, argnames: list[str]) -> dict[int, list[str]]:
        """Every node's access paths: the ports that enter it, then ``path.field`` (or
        ``path[]``) for each edge into it, each source named by its first path."""
        out: dict[int, list[str]] = {}
        for port, node in self.ports:
            out.setdefault(node, []).append("return" if port == RETURN else argnames[port - 1])
        # Edges are in breadth-first order, so a source has its first name before any edge
        # out of it is read; the first (shortest) path is the one a reader recognises.
        for src, key, dst in self.edges:
            base = out[src][0]
            out.setdefault(dst, []).append(base + ("[]" if key == ELEMENTS else "." + key))
        return out

    def describe(self, argnames: list[str]) -> str:
        """One clause per kind of effect, e.g. ``aliases: p = reg.items[]; written:
        reg.items`` (``no escape`` when there is none)."""
        names = self.names(argnames)
        parts = []
        # A node with two access paths is the summary's only way to say "may alias".
        same = [" = ".join(ns) for _, ns in sorted(names.items()) if len(ns) > 1]
        if same:
            parts.append("aliases: " + ", ".join(same))
        for label, nodes in (("written", self.written), ("escapes", self.everywhere),
                             ("thrown", self.thrown), ("unknown shape", self.collapsed)):
            if nodes:
                parts.append(f"{label}: " + ", ".join(names[n][0] for n in sorted(nodes)))
        return "; ".join(parts) or "no escape"


EMPTY = Summary()


def apply_summary(classes: AliasClasses, summary: Summary, actuals: dict[int, int],
                  written: Callable[[int], None], thrown: EscapeInfo = _THROWN) -> None:
    """Replay ``summary`` on ``classes``: ``actuals`` maps each port to the node of the
    value passed there (ports missing from it are skipped, with what only they reach);
    ``written`` is told every node the callee stored into; thrown nodes get ``thrown``."""
    # `mapped`: callee node -> caller node. Two ports entering one callee node mean the
    # callee may make its two arguments (or an argument and the result) the same object,
    # so the caller must unify their classes: escape state is per class.
    mapped: dict[int, int] = {}
    for port, node in summary.ports:
        if port in actuals:
            if node in mapped:
                classes.union(mapped[node], actuals[port])
            else:
                mapped[node] = actuals[port]
    for src, key, dst in summary.edges:  # breadth-first: a source is mapped before use
        if src not in mapped:
            continue
        # The callee's field edge becomes the caller's own content node for that field, so a
        # load of `x.f` after the call sees what the callee stored there (Steensgaard-style
        # unification: a node reached along two paths joins what both reach).
        c = classes.content(mapped[src], key)
        if dst in mapped:
            classes.union(mapped[dst], c)
        else:
            mapped[dst] = c
    # The flags last: they apply to the caller's classes as unified above, so a flag on one
    # callee node reaches every caller value that the call made an alias of it.
    for node in summary.collapsed:
        if node in mapped:
            classes.collapse(mapped[node])
    for node in summary.written:
        if node in mapped:
            written(mapped[node])
    for node in summary.everywhere:
        if node in mapped:
            classes.raise_info(mapped[node], _EVERYWHERE)
    for node in summary.thrown:
        if node in mapped:
            classes.raise_info(mapped[node], thrown)


def _walk(classes: AliasClasses, ports: list[tuple[int, int]]
          ) -> tuple[dict[int, int], list[int], dict[int, int], dict[int, int]]:
    """Breadth-first from the ports' roots: (root -> number, roots in order, root -> depth,
    root -> the root it was found from)."""
    num: dict[int, int] = {}
    order: list[int] = []
    depth: dict[int, int] = {}
    parent: dict[int, int] = {}
    for _, node in ports:
        r = classes.find(node)
        if r not in num:
            num[r] = len(order)
            order.append(r)
            depth[r] = 0
    # `order` doubles as the BFS queue (k is its head); fields in sorted order make the
    # numbering, and so the Summary, independent of dict insertion order.
    k = 0
    while k < len(order):
        r = order[k]
        k += 1
        root = classes.roots[r]
        if root.collapsed:
            continue  # a collapsed class is its own contents: no edge to follow
        for key in sorted(root.shape):
            c = classes.find(root.shape[key])
            if c not in num:
                num[c] = len(order)
                order.append(c)
                depth[c] = depth[r] + 1
                parent[c] = r
    return num, order, depth, parent


def _is_array(classes: AliasClasses, r: int) -> bool | None:
    shape = classes.roots[r].shape
    # None: no contents seen yet, so the node has no kind and may fold into any ancestor.
    return (ELEMENTS in shape) if shape else None


def _fold_deep(classes: AliasClasses, ports: list[tuple[int, int]]) -> None:
    """Fold every node deeper than DEPTH into the nearest ancestor of its kind (struct or
    array), making a cycle (``a.next`` = ``a``: every longer path names that node too), or
    collapse its parent when no ancestor has its kind. Repeated until none is left."""
    while True:
        num, order, depth, parent = _walk(classes, ports)
        deep = [r for r in order if depth[r] == DEPTH + 1]
        if not deep:
            return
        # Only nodes at exactly DEPTH+1 are folded: folding one makes its subtree shallower or
        # cyclic, and the next sweep re-walks and finds whatever is still too deep.
        for c in deep:
            c, up = classes.find(c), classes.find(parent[c])
            if c == up:
                continue  # an earlier fold in this sweep merged them
            # Merge only with an ancestor of the same kind: merging a struct with an array would
            # collapse it and lose every field. With none to hand, collapsing the parent is
            # the sound fallback (it says "unknown shape" rather than something false).
            kind = _is_array(classes, c)
            a: int | None = up
            while a is not None and kind is not None and \
                    _is_array(classes, classes.find(a)) != kind:
                a = parent.get(a)
            if a is None:
                classes.collapse(up)
            else:
                classes.union(classes.find(a), c)


def extract_summary(classes: AliasClasses, ports: Iterable[tuple[int, int]],
                    written: Iterable[int]) -> Summary:
    """The summary of ``classes`` seen from ``ports`` (``(port, node)`` pairs; a port may
    enter several nodes -- a function that returns two unrelated objects -- which become
    one). ``written``: nodes stored into. Escape flags are read from the classes' states.
    Changes ``classes`` (merging and collapsing); callers pass a copy they may spoil."""
    ports = sorted(ports)
    # One node per port: a port that may be either of two objects must be both of them in
    # the summary (the caller only has one class to map it to).
    for (p, a), (q, b) in zip(ports, ports[1:], strict=False):
        if p == q:
            classes.union(a, b)
    _fold_deep(classes, ports)
    num, order, _, _ = _walk(classes, ports)
    written_roots = {classes.find(w) for w in written}
    entries: dict[int, int] = {}
    edges: list[tuple[int, str, int]] = []
    # `entries` counts the ways into a node (ports and edges); two or more means an alias
    # the caller must learn, so such a node is kept even if no flag is set on it.
    for _, node in ports:
        r = num[classes.find(node)]
        entries[r] = entries.get(r, 0) + 1
    for r in order:
        root = classes.roots[r]
        if root.collapsed:
            continue
        for key in sorted(root.shape):
            d = num[classes.find(root.shape[key])]
            edges.append((num[r], key, d))
            entries[d] = entries.get(d, 0) + 1

    # stores into what only the returned value reaches rearrange nothing the caller had
    from_args = {num[classes.find(n)] for p, n in ports if p != RETURN}
    work = list(from_args)
    succ: dict[int, list[int]] = {}
    for src, _, dst in edges:
        succ.setdefault(src, []).append(dst)
    while work:
        for d in succ.get(work.pop(), ()):
            if d not in from_args:
                from_args.add(d)
                work.append(d)

    # The four flags, in Summary's field order (written, everywhere, thrown, collapsed).
    # "written" counts only for nodes an argument reaches: the caller never saw the others.
    def flags(r: int) -> tuple[bool, bool, bool, bool]:
        root = classes.roots[r]
        return (r in written_roots and num[r] in from_args, root.info.everywhere,
                bool(root.info.thrown), root.collapsed)

    # Prune what says nothing (a field only read): a node is kept if it carries a fact or
    # lies on the path to one, so the caller can still find it from a port.
    keep = [entries.get(i, 0) > 1 or any(flags(r)) for i, r in enumerate(order)]
    for src, _, dst in reversed(edges):  # edges go forward except back-edges (kept anyway)
        if keep[dst]:
            keep[src] = True
    changed = True
    while changed:  # back-edges: a node on a cycle is entered twice, so it is kept
        changed = False
        for src, _, dst in edges:
            if keep[dst] and not keep[src]:
                keep[src] = changed = True
    # Renumber the kept nodes densely, preserving BFS order: equal facts -> equal Summary.
    renum: dict[int, int] = {}
    for i in range(len(order)):
        if keep[i]:
            renum[i] = len(renum)
    sets: tuple[set[int], set[int], set[int], set[int]] = (set(), set(), set(), set())
    for i, r in enumerate(order):
        if keep[i]:
            for s, on in zip(sets, flags(r), strict=True):
                if on:
                    s.add(renum[i])
    first = {p: num[classes.find(n)] for p, n in reversed(ports)}  # one node per port
    return Summary(
        tuple((p, renum[i]) for p, i in sorted(first.items()) if keep[i]),
        tuple((renum[s], k, renum[d]) for s, k, d in edges if keep[s] and keep[d]),
        *(frozenset(s) for s in sets))


def join_summaries(*summaries: Summary) -> Summary:
    """The least summary that says everything each of ``summaries`` says: all replayed on
    fresh classes, then read back."""
    # Replaying every summary on the same fresh ports is the join: unification only adds
    # aliases and flags only add facts, so the result says at least what each one says,
    # and extract_summary's canonical form makes it the least such summary.
    classes = AliasClasses()
    ports = sorted({p for s in summaries for p, _ in s.ports})
    actuals = {p: classes.node(("port", p)) for p in ports}
    written: list[int] = []
    for s in summaries:
        apply_summary(classes, s, actuals, written.append)
    return extract_summary(classes, actuals.items(), written)
