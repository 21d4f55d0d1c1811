"""Loop versioning: a copy of an innermost loop without the bounds checks of ``a[i]``,
run when a test before the loop shows that every ``i`` the loop will use is in bounds.

A counting loop ``for (i = init; i < n; i = i + s)`` indexes ``a[i]``: in every
iteration ``init <= i < n`` (the header tested it, ``i`` only grows), so when
``init >= 0`` and ``n <= len(a)`` no check of ``a[i]`` can fail. Neither fact is known
when compiling (``a`` may come from a call, ``n`` from the input), but both can be
*tested once* before the loop. So the loop is compiled twice::

    P: ... jmp V0               V0: br entry-test(init, n) V1 S   (the loop runs at all)
                                V1: br init >= 0 V2 S
                                V2: br n <= len(a) V3 S   (one per array; < for ``i <= n``)
                                V3: br 1 <= s <= 2^31 F S   (a step that is a variable)
    S: jmp H   (the loop as it was: every check, every trap where it was)
    F: H': the copy, whose ``a[i]`` are marked in bounds (no check in machine code)

The loop's values live on after it through phis at its exit (``x = phi(H: x, H': x')``).
Rows ``r = b[i]`` the loop indexes by an invariant ``j`` add tests ``0 <= j < m`` against
the shortest row's length ``m``, computed once before an enclosing loop
(:mod:`ssa_course.codegen.loop_rows`); the copy then reads them unchecked too.
A step that is a variable (the sieve's ``j = j + i``) must be at least 1 and at most 2^31
(then ``i + s`` never wraps: ``i < n <= len(a)`` is far below 2^62). Only innermost loops
whose only exit is the header's test, of at most :data:`MAX_COPY` instructions, entered
through one block ending in ``jmp``, with no ``try`` inside, and only when the copy
loses at least one check. The slow loop keeps every check, so a program that fails the
test traps exactly where it did. Runs on quads blocks before selection (both targets),
after :mod:`ssa_course.codegen.loop_loads` (a row it loads before the loop is invariant;
the first test keeps ``len`` from reading it where the loop does not run).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ssa_course.codegen.loop_loads import defined_everywhere, pure
from ssa_course.codegen.loop_rows import RowScans, RowUse, row_uses
from ssa_course.codegen.quadcfg import QBlock, relabel_phis
from ssa_course.quads.domtree import Dominance
from ssa_course.quads.ir import Instr
from ssa_course.quads.loops import natural_loops
from ssa_course.quads.names import Names
from ssa_course.tiny.types import BOOL, INT, Type

MAX_COPY = 60  # instructions in the loop: larger loops are not copied
# With 1 <= s <= 2^31 and i < n <= len(a) < 2^62, i + s stays far below 2^63: the
# induction variable cannot wrap around to a small (in-bounds-looking) value.
MAX_STEP = 1 << 31
# Instructions that tie a block to exception or Bril-variable machinery (a try's enter and
# leave, a handler's catch, non-strict variables): copying them would duplicate a try
# region or a variable's definition, so such loops are left as they are.
_NO_COPY = frozenset(("enter", "leave", "throw", "catch", "checkdef", "set", "get", "undef"))


def version_loops(blocks: list[QBlock], params: list[str], types: dict[str, Type],
                  guarded: set[str] | None = None, bounded: set[str] | None = None
                  ) -> list[QBlock]:
    """``blocks`` with each qualifying innermost loop versioned (see the module's
    docstring); ``types`` gains the new names. ``guarded``: names that hold 0 where their
    loop does not run (:func:`~ssa_course.codegen.loop_loads.hoist_loop_loads`), never
    read before it; ``bounded`` gains the headers of the row scans placed before outer
    loops (:mod:`ssa_course.codegen.loop_rows`: they end by themselves, no fuel check
    needed). The same list when nothing changes."""
    # Renaming the copy assumes SSA's "one definition per name, dominating its uses";
    # non-strict Bril code (a name possibly unassigned) does not give that.
    if not defined_everywhere(blocks, params):
        return blocks
    dom = Dominance({b.label: b.succs for b in blocks}, blocks[0].label)
    loops = natural_loops({b.label: b.preds for b in blocks}, dom)
    if not loops:
        return blocks
    by_label = {b.label: b for b in blocks}
    instrs = [i for b in blocks for i in (*b.phis, *b.body)]
    names = Names(set(params) | {i.dest for i in instrs if i.dest is not None}
                  | set(by_label))
    home = {i.dest: b.label for b in blocks for i in (*b.phis, *b.body) if i.dest is not None}
    consts = {i.dest: i.value for i in instrs if i.op == "const" and i.dest is not None}
    order = [b.label for b in blocks]
    headers = set(loops)
    scans = RowScans(loops, by_label, order, home, consts, set(params), names, types,
                     guarded if guarded is not None else set(),
                     bounded if bounded is not None else set())
    # Innermost only: that is where the time goes, and copying an outer loop would copy
    # its inner loops too (code size grows with each nesting level).
    for header, (_, body) in loops.items():
        if any(x in headers for x in body if x != header):
            continue  # not innermost
        new = _version(header, body, by_label, home, consts, set(params), names, types,
                       scans)
        if new:
            at = order.index(header)
            order[at:at] = [b.label for b in new]
            by_label.update((b.label, b) for b in new)
    if len(order) == len(blocks):
        return blocks
    # Predecessor lists are rebuilt from scratch rather than patched: guards, copies and
    # the slow entry all changed edges, and later passes read preds.
    out = [by_label[x] for x in order]
    for b in out:
        b.preds = []
    for b in out:
        for s in b.succs:
            by_label[s].preds.append(b.label)
    return out


def _version(header: str, body: set[str], by_label: dict[str, QBlock], home: dict[str, str],
             consts: Mapping[str, object], params: set[str], names: Names,
             types: dict[str, Type], scans: RowScans) -> list[QBlock]:
    h = by_label[header]
    # The shape the proof needs: one way in (so the guards run on every entry), one way out
    # through the header's test (so "inside the loop" implies "the test i < n held").
    outside = [p for p in h.preds if p not in body]
    exits = [s for s in h.succs if s not in body]
    if len(outside) != 1 or len(exits) != 1 or len(h.succs) != 2 or not h.body:
        return []
    pre, exit_ = by_label[outside[0]], by_label[exits[0]]
    if pre.handler or not pre.body or pre.body[-1].op != "jmp" or exit_.preds != [header] \
            or exit_.phis or exit_.handler:
        return []
    members = [b for b in by_label.values() if b.label in body]  # in layout order
    if any(b.handler or any(i.op in _NO_COPY for i in (*b.phis, *b.body)) for b in members) \
            or any(s not in body for b in members if b is not h for s in b.succs) \
            or sum(len(b.phis) + len(b.body) for b in members) > MAX_COPY \
            or not all(pure(i) for i in h.body[:-1]):
        return []

    # Defined outside the loop (or a parameter or constant): the value the guards test
    # before the loop is the value every iteration sees.
    def invariant(name: str) -> bool:
        return name in params or name in consts or (name in home and home[name] not in body)

    # the test: br c T E with c = lt|le(iv, bound) in the header, T in the loop
    test = h.body[-1]
    cond = next((i for i in h.body[:-1] if i.dest == test.args[0]), None)
    if test.op != "br" or cond is None or test.labels[0] not in body:
        return []
    # Normalise to "iv < bound" or "iv <= bound" (n > i is i < n), so the rest of the pass
    # handles one shape.
    if cond.op in ("lt", "le"):
        iv, bound, op = cond.args[0], cond.args[1], cond.op
    elif cond.op in ("gt", "ge"):
        iv, bound, op = cond.args[1], cond.args[0], {"gt": "lt", "ge": "le"}[cond.op]
    else:
        return []
    phi = next((p for p in h.phis if p.dest == iv), None)
    if phi is None or not invariant(bound):
        return []
    # iv must be a header phi: `init` on the entry edge, exactly one value from inside the
    # loop (the increment). Two different back-edge values could step differently.
    entry = {p.dest: p.args[p.labels.index(pre.label)] for p in h.phis
             if p.dest is not None and pre.label in p.labels}
    init = entry.get(iv)
    latch = {a for a, lab in zip(phi.args, phi.labels, strict=False) if lab in body}
    if init is None or len(latch) != 1:
        return []
    step = _step(iv, latch.pop(), body, by_label, consts, invariant)
    if step is None:
        return []
    # Only a[iv] with an invariant `a`: one length test before the loop covers it. An
    # index other than iv itself (iv + 1, 2 * iv) is not what the proof covers.
    arrays = [i.args[0] for b in members for i in b.body
              if i.op in ("aload", "astore") and not i.in_bounds and i.args[1] == iv
              and invariant(i.args[0]) and i.args[0] not in consts]
    arrays = list(dict.fromkeys(arrays))
    # Affine indices a[iv + c] and a[iv * s + c] (c, s invariant): flat matrices index
    # a[i * n + k] and b[k * n + j]; guards on c, s and the bound cover them too.
    affine = _affine_uses(members, iv, invariant, consts)
    # Rows b[iv] (b invariant, b[iv] itself checked or proven): set and long enough, when
    # one scan before an enclosing loop says so (loop_rows), they lose their unset and
    # bounds checks in the copy too.
    rows: list[tuple[RowUse, str]] = []
    outer = [i.args[0] for b in members for i in b.body
             if i.op == "aload" and i.args[1] == iv and invariant(i.args[0])
             and i.args[0] not in consts]
    for use in row_uses(members, iv, list(dict.fromkeys(outer)), invariant, consts, types):
        least = scans.minimum(header, use.array, init, bound, op, use.line)
        if least is not None:
            rows.append((use, least))
    if not arrays and not rows and not affine:
        return []  # nothing to gain: copying would only grow the code
    return _rewrite(h, pre, exit_, members, body, iv, bound, op, init, step, arrays, rows,
                    consts, names, types, list(by_label.values()), affine)


class Affine:
    """``a[x]`` in the loop with ``x = iv * scale + offset`` (``scale`` None: 1), ``a``,
    ``scale`` and ``offset`` invariant."""

    __slots__ = ("array", "index", "scale", "offset")

    def __init__(self, array: str, index: str, scale: str | None, offset: str) -> None:
        self.array, self.index, self.scale, self.offset = array, index, scale, offset

    def key(self) -> tuple[str, str | None, str]:
        return (self.array, self.scale, self.offset)


def _affine_uses(members: list[QBlock], iv: str, invariant: Callable[[str], bool],
                 consts: Mapping[str, object]) -> list[Affine]:
    """The checked ``aload``/``astore`` of an invariant array at ``iv + c``, ``c + iv``,
    ``iv * s + c`` (any operand order) computed in the loop; one entry per distinct
    (array, scale, offset). A constant offset or scale below 0 is left out (a guard
    that always fails would only slow the loop down)."""
    defs = {i.dest: i for b in members for i in b.body if i.dest is not None}

    def usable(name: str) -> bool:
        c = consts.get(name)
        if isinstance(c, bool):
            return False
        return invariant(name) and (not isinstance(c, int) or c >= 0)

    found: dict[tuple[str, str | None, str], Affine] = {}
    for b in members:
        for i in b.body:
            if i.op not in ("aload", "astore") or i.in_bounds or len(i.args) < 2:
                continue
            a, x = i.args[0], i.args[1]
            d = defs.get(x)
            if not invariant(a) or a in consts or d is None or d.op != "add":
                continue
            for term, offset in ((d.args[0], d.args[1]), (d.args[1], d.args[0])):
                if not usable(offset):
                    continue
                scale: str | None = None
                if term != iv:
                    m = defs.get(term)
                    if m is None or m.op != "mul" or iv not in m.args:
                        continue
                    scale = m.args[1] if m.args[0] == iv else m.args[0]
                    s = consts.get(scale)
                    if scale == iv or not usable(scale) \
                            or (isinstance(s, int) and s > MAX_STEP):
                        continue
                use = Affine(a, x, scale, offset)
                found.setdefault(use.key(), use)
                break
    return list(found.values())


def _step(iv: str, nxt: str, body: set[str], by_label: dict[str, QBlock],
          consts: Mapping[str, object], invariant: Callable[[str], bool]) -> str | None:
    """The step s of ``nxt = add(iv, s)`` in the loop: a constant >= 1 or an invariant
    variable (tested before the fast loop runs); None otherwise."""
    # "i only grows" is what makes init >= 0 cover every iteration: the step must be an
    # add of something >= 1 (a constant checked now, a variable checked by a guard).
    for x in body:
        for i in by_label[x].body:
            if i.dest == nxt:
                if i.op != "add" or iv not in i.args:
                    return None
                s = i.args[1] if i.args[0] == iv else i.args[0]
                c = consts.get(s)
                if isinstance(c, int) and not isinstance(c, bool):
                    return s if 1 <= c <= MAX_STEP else None
                return s if invariant(s) else None
    return None


def _rewrite(h: QBlock, pre: QBlock, exit_: QBlock, members: list[QBlock], body: set[str],
             iv: str, bound: str, op: str, init: str, step: str, arrays: list[str],
             rows: list[tuple[RowUse, str]], consts: Mapping[str, object], names: Names,
             types: dict[str, Type], others: list[QBlock],
             affine: list[Affine] | None = None) -> list[QBlock]:
    slow = names.fresh(h.label + "slow", bare=False, sep="")
    clone = {b.label: names.fresh(b.label + "fast", bare=False, sep="") for b in members}
    # the tests, each a block: (op, a, b) meaning "a op b holds"

    def const(value: int) -> tuple[Instr, str]:
        name = names.fresh("k", bare=False, sep=".lh")
        types[name] = INT
        return Instr("const", name, INT, value=value), name

    # Guard 0 is the loop's own entry test on init: if the loop would not run at all, the
    # slow path runs it (zero iterations) and nothing else need be true.
    tests: list[tuple[list[Instr], str, str, str]] = [([], op, init, bound)]
    # 0 <= init: the lower half of the bounds check; free when init is a constant >= 0.
    start = consts.get(init)
    if not (isinstance(start, int) and start >= 0):
        k, zero = const(0)
        tests.append(([k], "ge", init, zero))
    # The upper half, per array: every iv the loop sees is < bound (or <= bound), so
    # bound <= len(a) (or bound < len(a)) proves iv < len(a) in every iteration.
    for a in arrays:
        n = names.fresh("len", bare=False, sep=".lh")
        types[n] = INT
        tests.append(([Instr("alen", n, INT, [a])], op == "lt" and "le" or "lt", bound, n))
    # A variable step: 1 <= s (i grows) and s <= 2^31 (i + s cannot wrap), see MAX_STEP.
    if step not in consts:
        k1, one = const(1)
        k2, big = const(MAX_STEP)
        tests.append(([k1], "ge", step, one))
        tests.append(([k2], "le", step, big))
    # Affine a[iv * s + c]: with 0 <= c, 0 <= s <= 2^31 and bound <= 2^31 nothing wraps
    # (|last * s| <= 2^62), x only grows with iv, so x >= c >= 0 and the largest x is
    # last * s + c, last = bound - 1 (bound for <=); then last * s < len(a) - c proves
    # every x < len(a). Without a scale (s = 1): bound <= len(a) - c (< for <=).
    # These come after the entry test (bound > init >= 0: bound - 1 cannot wrap).
    def temp(kind: str, ty: Type = INT) -> str:
        name = names.fresh(kind, bare=False, sep=".lh")
        types[name] = ty
        return name

    small: str | None = None
    for aff in affine or ():
        setup: list[Instr] = []
        if consts.get(aff.offset) is None:
            k, zero = const(0)
            tests.append(([k], "ge", aff.offset, zero))
        length, room = temp("len"), temp("room")
        setup = [Instr("alen", length, INT, [aff.array]),
                 Instr("sub", room, INT, [length, aff.offset])]
        if aff.scale is None:
            tests.append((setup, op == "lt" and "le" or "lt", bound, room))
            continue
        if small is None:
            k, small = const(MAX_STEP)
            tests.append(([k], "le", bound, small))
        if consts.get(aff.scale) is None:
            k, zero = const(0)
            tests.append(([k], "ge", aff.scale, zero))
            tests.append(([], "le", aff.scale, small))
        last = bound
        if op == "lt":
            k, one = const(1)
            last = temp("last")
            setup += [k, Instr("sub", last, INT, [bound, one])]
        top = temp("top")
        setup.append(Instr("mul", top, INT, [last, aff.scale]))
        tests.append((setup, "lt", top, room))
    proven = {(u.array, u.index) for u in affine or ()}
    # Rows (loop_rows): 0 <= j < m for each index j of a row, m the scan's shortest row
    # (-1 when a row is unset or missing); 0 <= m when rows are only read.
    set_rows: set[str] = set()
    row_indices: set[tuple[str, str]] = set()
    for use, least in rows:
        set_rows |= use.rows
        for j in use.indices:
            start = consts.get(j)
            if not (isinstance(start, int) and start >= 0):
                k, zero = const(0)
                tests.append(([k], "ge", j, zero))
            tests.append(([], "lt", j, least))
            row_indices.update((r, j) for r in use.rows)
        if not use.indices:
            k, zero = const(0)
            tests.append(([k], "ge", least, zero))
    labels = [names.fresh(h.label + "vers", bare=False, sep="") for _ in tests]
    fast_entry = clone[h.label]
    guard_blocks: list[QBlock] = []
    # A chain of guard blocks, each falling to the next or to the slow loop: any failed
    # test runs the original loop with every check, so traps happen exactly as before.
    for n_test, (setup, cmp, left, right) in enumerate(tests):
        ok = names.fresh("ok", bare=False, sep=".lh")
        types[ok] = BOOL
        nxt = labels[n_test + 1] if n_test + 1 < len(labels) else fast_entry
        guard_blocks.append(QBlock(labels[n_test], body=[
            *setup, Instr(cmp, ok, BOOL, [left, right]),
            Instr("br", args=[ok], labels=[nxt, slow])], succs=[nxt, slow]))
    slow_block = QBlock(slow, body=[Instr("jmp", labels=[h.label])], succs=[h.label])
    jmp = pre.body[-1].copy()
    jmp.labels = [labels[0]]
    pre.body = [*pre.body[:-1], jmp]
    pre.succs = [labels[0]]
    # the copy: fresh names for everything the loop defines, checks of a[iv] dropped
    # SSA: each name has one definition, so the copy needs fresh names for everything the
    # loop defines; invariant names (defined before the loop) are shared by both copies.
    rename: dict[str, str] = {}
    for b in members:
        for i in (*b.phis, *b.body):
            if i.dest is not None:
                rename[i.dest] = names.fresh(i.dest, bare=False, sep=".v")
                if i.dest in types:
                    types[rename[i.dest]] = types[i.dest]
    checked = set(arrays)
    copies: list[QBlock] = []
    for b in sorted(members, key=lambda m: m is not h):  # the header first
        cb = QBlock(clone[b.label])
        for i in b.phis:
            c = i.copy()
            c.dest = rename[str(i.dest)]
            c.args = [rename.get(a, a) for a in c.args]
            c.labels = [clone.get(x, labels[-1] if x == pre.label else x) for x in c.labels]
            cb.phis.append(c)
        for i in b.body:
            c = i.copy()
            if c.dest is not None:
                c.dest = rename[c.dest]
            # The whole point: the guards proved these accesses in bounds, so selection
            # emits them without compare and branch (the "proven in bounds" pattern).
            if i.op in ("aload", "astore") and i.args[1] == iv and i.args[0] in checked:
                c.in_bounds = True
            if i.op == "aload" and i.dest in set_rows:
                c.set_known = True  # every row the loop reads was shown set
            if i.op in ("aload", "astore") and (i.args[0], i.args[1]) in row_indices:
                c.in_bounds = True
            if i.op in ("aload", "astore") and (i.args[0], i.args[1]) in proven:
                c.in_bounds = True
            c.args = [rename.get(a, a) for a in c.args]
            c.labels = [clone.get(x, x) for x in c.labels]
            cb.body.append(c)
        cb.succs = [clone.get(x, x) for x in b.succs]
        copies.append(cb)
    # the original loop is entered from S; its values leave through phis at the exit
    relabel_phis(h, pre.label, slow)
    out_names = {str(i.dest) for i in (*h.phis, *h.body) if i.dest is not None}
    after = [b for b in others if b.label not in body]
    used = sorted({a for b in after for i in (*b.phis, *b.body) for a in i.args
                   if a in out_names})
    # Values used after the loop now come from either copy: a phi at the single exit joins
    # them (x from the slow header, x' from the fast one), and later uses read the phi.
    if used:
        outer = {x: names.fresh(x, bare=False, sep=".out") for x in used}
        for b in after:  # every use after the loop is dominated by its only exit
            b.phis = [i.renamed(outer) for i in b.phis]
            b.body = [i.renamed(outer) for i in b.body]
        for x, y in outer.items():
            if x in types:
                types[y] = types[x]
            exit_.phis.append(Instr("phi", y, types.get(x), [x, rename[x]],
                                    labels=[h.label, clone[h.label]]))
    return [*guard_blocks, *copies, slow_block]
