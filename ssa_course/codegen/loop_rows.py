"""Row facts for loop versioning: the rows ``b[k]`` an inner loop reads are set and
at least ``m`` long, shown by one scan before an enclosing loop.

matmul's inner loop ``for (k = 0; k < n; k = k + 1) { s = s + a_i[k] * b[k][j]; }``
reads a row ``r = b[k]`` each iteration and then ``r[j]``. Versioning
(:mod:`ssa_course.codegen.loop_version`) proves ``b[k]`` in bounds with one test before
the loop (``n <= len(b)``), but two checks stay: ``r`` may be an unset element, and
``j`` is checked against a different row's length every iteration. Neither the rows'
lengths nor whether they are set can change while the program runs a loop nest that
calls nothing and stores into no array of ``b``'s type (a row's length never changes
after ``new``). So the minimum of those lengths is computed once, before the outermost
such loop ``O`` (where ``b``, the loop's start and its bound are already known)::

    P: ... jmp R0      R0: lb = len(b); br init < 0 D(-1) H
                       H:  t = phi(R0: init, S: t + 1); m = phi(R0: 2^62, S: m')
                           br t < bound (<= for a loop to <=) I D(m)
                       I:  br t < lb L D(-1)      (rows past b's end: no fact)
                       L:  r = b[t] (read raw: no check, no trap); br r == 0 D(-1) N
                       N:  br len(r) < m X S      X: jmp S (m' = len(r) from X, m from N)
                       D:  m = phi(...); jmp O's header

``m >= 0`` says every row ``b[t]``, ``init <= t < bound``, exists and is set, and ``m``
is the shortest one's length (``-1`` otherwise: the fast copy is not entered). The inner
loop's versioning tests then ``0 <= j`` and ``j < m`` for each invariant ``j`` a row is
indexed by (``0 <= m`` when rows are only read), and its copy reads ``b[k]`` with no
unset check (``set_known``) and ``r[j]`` with no bounds check. When a test fails, the
loop as it was runs: every check, every trap and every output where they were.

The scan never traps and prints nothing, so placing it before ``O`` changes no
behaviour; it costs at most ``min(bound - init, len(b))`` iterations per entry of ``O``,
no more than one run of the inner loop, and it is bounded, so it needs no fuel check
(its header goes into ``bounded``). Runs on quads blocks before selection, so x86-64 and
AArch64 share it; only rows that are arrays are scanned.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ssa_course.codegen.quadcfg import QBlock, relabel_phis
from ssa_course.quads.ir import Instr
from ssa_course.quads.names import Names
from ssa_course.tiny.types import BOOL, INT, ArrayType, Type

# Greater than any array's length (they stay below 2^62 bytes): the minimum of no row.
NO_ROW = 1 << 62


@dataclass(slots=True)
class RowUse:
    """What an inner loop does with the rows of one array ``b``: the names ``r`` of its
    ``r = b[iv]`` loads, and the invariant indices ``j`` of its ``r[j]`` accesses."""

    array: str
    rows: set[str] = field(default_factory=set)
    indices: list[str] = field(default_factory=list)
    line: int | None = None  # the source line of the first row load (listings)


def row_uses(members: list[QBlock], iv: str, arrays: list[str],
             invariant: Callable[[str], bool], consts: Mapping[str, object],
             types: Mapping[str, Type]) -> list[RowUse]:
    """The rows read in a loop with counter ``iv`` from arrays ``b`` of ``arrays`` (the
    invariant arrays the loop reads at ``iv``, checked or proven) whose elements are
    arrays."""
    found: dict[str, RowUse] = {}
    for b in members:
        for i in b.body:
            if i.op == "aload" and i.dest is not None and i.args[1] == iv \
                    and i.args[0] in arrays and not i.set_known \
                    and isinstance(types.get(i.args[0]), ArrayType) \
                    and isinstance(types.get(i.dest), ArrayType):
                use = found.setdefault(i.args[0], RowUse(i.args[0], line=i.line))
                use.rows.add(i.dest)
    of_row = {r: use for use in found.values() for r in use.rows}
    for b in members:
        for i in b.body:
            if i.op not in ("aload", "astore") or i.in_bounds or i.args[0] not in of_row:
                continue
            j = i.args[1]
            c = consts.get(j)
            # A constant index below 0 always traps: no test could let the copy skip it.
            if isinstance(c, int) and not isinstance(c, bool) and c < 0:
                continue
            use = of_row[i.args[0]]
            if invariant(j) and j not in use.indices:
                use.indices.append(j)
    return list(found.values())


class RowScans:
    """The scans of one function, each placed before the outermost loop that allows it and
    made once per (loop, array, start, bound, test)."""

    def __init__(self, loops: Mapping[str, tuple[object, set[str]]],
                 by_label: dict[str, QBlock], order: list[str], home: dict[str, str],
                 consts: Mapping[str, object], params: set[str], names: Names,
                 types: dict[str, Type], guarded: set[str], bounded: set[str]) -> None:
        self.loops = loops
        self.by_label = by_label
        self.order = order
        self.home = home
        self.consts = consts
        self.params = params
        self.names = names
        self.types = types
        self.guarded = guarded
        self.bounded = bounded
        self.made: dict[tuple[str, str, str, str, str], str] = {}
        # the block that now enters each outer loop from outside (a scan's D once placed)
        self.entry: dict[str, str] = {}

    def minimum(self, inner: str, b: str, init: str, bound: str, op: str,
                line: int | None = None) -> str | None:
        """The name of ``m`` for the rows ``b[t]``, ``init <= t < bound`` (``<=`` when
        ``op`` is ``le``) of the loop headed ``inner``; None when no enclosing loop
        allows the scan. ``line``: the source line the scan's listing names."""
        outer = self._outer(inner, b, init, bound)
        if outer is None:
            return None
        key = (outer, b, init, bound, op)
        if key not in self.made:
            self.made[key] = self._place(outer, b, init, bound, op, line)
        return self.made[key]

    def _outer(self, inner: str, b: str, init: str, bound: str) -> str | None:
        """The outermost loop around ``inner`` before which ``b``, ``init`` and ``bound``
        are known, that calls nothing and stores into no array of ``b``'s type (so the
        scan's facts still hold whenever the inner loop starts), entered through one
        block ending in ``jmp``."""
        # An array 0 on the path where its loop does not run (loop_loads' joins) must not
        # be read before that loop: the scan would read through it.
        kind = self.types.get(b)
        if b in self.guarded or not isinstance(kind, ArrayType):
            return None
        body_of_inner = self.loops[inner][1]
        around = sorted((h for h, (_, body) in self.loops.items()
                         if h != inner and body_of_inner <= body),
                        key=lambda h: -len(self.loops[h][1]))
        for h in around:
            body = self.loops[h][1]
            if all(self._before(x, body) for x in (b, init, bound)) \
                    and self._unchanged(body, kind) and self._enterer(h, body) is not None:
                return h
        return None

    def _before(self, name: str, body: set[str]) -> bool:
        return name in self.params or name in self.consts \
            or (name in self.home and self.home[name] not in body)

    def _unchanged(self, body: set[str], kind: Type) -> bool:
        """No call and no store into an array of type ``kind`` (or of an unknown type)."""
        for x in body:
            blk = self.by_label[x]
            if blk.handler:
                return False
            for i in blk.body:
                if i.op == "call":
                    return False
                if i.op == "astore" and self.types.get(i.args[0]) in (kind, None):
                    return False
        return True

    def _enterer(self, header: str, body: set[str]) -> str | None:
        if header in self.entry:
            return self.entry[header]
        h = self.by_label[header]
        outside = [p for p in h.preds if p not in body]
        if len(outside) != 1 or h.handler:
            return None
        pre = self.by_label[outside[0]]
        if pre.handler or not pre.body or pre.body[-1].op != "jmp":
            return None
        return pre.label

    def _place(self, outer: str, b: str, init: str, bound: str, op: str,
               line: int | None) -> str:
        pre = self.by_label[str(self._enterer(outer, self.loops[outer][1]))]
        fresh = self._fresh
        r0, hd, inb, load, nxt, less, step, done = (
            self.names.fresh(outer + what, bare=False, sep="")
            for what in ("scan", "scanhead", "scanin", "scanload", "scanlen", "scanmin",
                         "scanstep", "scandone"))
        zero, minus, big, one = (fresh(INT) for _ in range(4))
        setup = [Instr("const", zero, INT, value=0), Instr("const", minus, INT, value=-1),
                 Instr("const", big, INT, value=NO_ROW), Instr("const", one, INT, value=1)]

        # A constant start or bound is made here again: its own `const` may stand inside
        # the loop, after this point.
        def known(name: str) -> str:
            value = self.consts.get(name)
            if not isinstance(value, int) or isinstance(value, bool):
                return name
            copy = fresh(INT)
            setup.append(Instr("const", copy, INT, value=value))
            return copy

        lo, hi = known(init), known(bound)
        lb, c0, t, m, c1, c2, c3, length, c4, m2, t1, result = (
            fresh(INT), fresh(BOOL), fresh(INT), fresh(INT), fresh(BOOL), fresh(BOOL),
            fresh(BOOL), fresh(INT), fresh(BOOL), fresh(INT), fresh(INT), fresh(INT))
        kind = self.types[b]
        assert isinstance(kind, ArrayType)
        row = fresh(kind.elem)
        blocks = [
            QBlock(r0, body=[*setup, Instr("alen", lb, INT, [b]),
                             Instr("lt", c0, BOOL, [lo, zero]),
                             Instr("br", args=[c0], labels=[done, hd])], succs=[done, hd]),
            QBlock(hd, phis=[Instr("phi", t, INT, [lo, t1], labels=[r0, step]),
                             Instr("phi", m, INT, [big, m2], labels=[r0, step])],
                   body=[Instr(op, c1, BOOL, [t, hi]),
                         Instr("br", args=[c1], labels=[inb, done])], succs=[inb, done]),
            QBlock(inb, body=[Instr("lt", c2, BOOL, [t, lb]),
                              Instr("br", args=[c2], labels=[load, done])],
                   succs=[load, done]),
            # Read raw: t < len(b) was just tested, and the 0 of an unset row is tested here
            # rather than trapped on.
            QBlock(load, body=[Instr("aload", row, kind.elem, [b, t], in_bounds=True,
                                     set_known=True),
                               Instr("eq", c3, BOOL, [row, zero]),
                               Instr("br", args=[c3], labels=[done, nxt])],
                   succs=[done, nxt]),
            QBlock(nxt, body=[Instr("alen", length, INT, [row]),
                              Instr("lt", c4, BOOL, [length, m]),
                              Instr("br", args=[c4], labels=[less, step])],
                   succs=[less, step]),
            QBlock(less, body=[Instr("jmp", labels=[step])], succs=[step]),
            QBlock(step, phis=[Instr("phi", m2, INT, [m, length], labels=[nxt, less])],
                   body=[Instr("add", t1, INT, [t, one]), Instr("jmp", labels=[hd])],
                   succs=[hd]),
            QBlock(done, phis=[Instr("phi", result, INT, [minus, m, minus, minus],
                                     labels=[r0, hd, inb, load])],
                   body=[Instr("jmp", labels=[outer])], succs=[outer]),
        ]
        jmp = pre.body[-1].copy()
        jmp.labels = [r0]
        pre.body = [*pre.body[:-1], jmp]
        pre.succs = [r0]
        h = self.by_label[outer]
        relabel_phis(h, pre.label, done)
        at = self.order.index(outer)
        self.order[at:at] = [blk.label for blk in blocks]
        for blk in blocks:
            self.by_label[blk.label] = blk
            for i in (*blk.phis, *blk.body):
                i.line = line
                if i.dest is not None:
                    self.home[i.dest] = blk.label
        self.entry[outer] = done
        self.bounded.add(hd)
        return result

    def _fresh(self, kind: Type) -> str:
        name = self.names.fresh("r", bare=False, sep=".lr")
        self.types[name] = kind
        return name
