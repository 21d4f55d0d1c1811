"""Checked loads hoisted out of loops: ``a[i]`` read once before a loop that reads it
every iteration, when the loop's first iteration would read it first thing.

An ``aload`` with loop-invariant operands gives the same value (or the same trap) in every
iteration, but it cannot simply move above the loop: when the loop runs zero times it must
not run at all, and when it traps it must trap before anything else of the loop is seen.
So a load is taken out of a loop only when

* the loop's header only tests (pure operations, then ``br``; its phis read the
  preheader's values), entered from outside through one block ending in ``jmp header``;
* the load lies on the straight path the first iteration takes from the header's in-loop
  successor (blocks with one predecessor each, joined by ``jmp``), and everything before
  it on that path is pure and cannot trap (so the load is the first thing an iteration
  can be seen doing);
* its operands are defined outside the loop (or by loads hoisted before it), the loop
  stores into no array of its array's type (any such array may be the same one) and
  calls nothing (a callee may store).

The preheader then tests the header's condition on the entry values itself (``G``) and,
when the loop will run, does the loads (``L``); a join (``J``) gives each load's original
name a phi of the loaded value and a 0 that no iteration reads (the loop does not run on
that edge). The header still tests as before, so the loop's shape does not change::

    P: ... jmp H              P: ... jmp G
                              G: c' = test(entry values); br c' L J
                              L: h = aload a i; jmp J
                              J: x = phi(G: 0, L: h); jmp H
    H: phis; c = test; br c T E    (unchanged; its phis now name J instead of P)
    T: x = aload a i  (deleted)

matmul's inner loop reads ``a[i]`` (a row) once per ``j`` instead of once per ``k``: a
bounds check, a load and an unset check fewer an iteration. The fuel check of the header
(with a step limit) now comes after such a load's trap: fuel counts blocks, not the
interpreters' exact steps, so only the endless loop's message is kept exact and it still
is. Runs on the quads blocks of one function before instruction selection, so x86-64 and
AArch64 share it; a function whose Bril variables may be unassigned is left alone.
"""

from __future__ import annotations

from ssa_course import opcodes
from ssa_course.codegen.quadcfg import QBlock, relabel_phis
from ssa_course.quads.domtree import Dominance
from ssa_course.quads.ir import UNDEFINED, Instr
from ssa_course.quads.loops import natural_loops
from ssa_course.quads.names import Names
from ssa_course.tiny.types import INT, Type

# Safe to pass over, whatever the opcode table says: const and id cannot fail, and `alen`
# only reads an array's length word, which never changes after `new`.
_SAFE = frozenset(("const", "id", "alen"))


def pure(i: Instr) -> bool:
    """Neither an effect nor a trap: may be passed over (or copied) freely."""
    if i.op in _SAFE:
        return i.dest is not None
    # From the one opcode table: a new operator is judged here by its own flags, so this
    # pass never needs editing when the language grows.
    op = opcodes.get(i.op)
    return op is not None and op.pure and not op.may_trap and i.dest is not None


def defined_everywhere(blocks: list[QBlock], params: list[str]) -> bool:
    """Does every variable read have a definition, on every edge (not so for a Bril
    program's variable that some path leaves unassigned)?"""
    instrs = [i for b in blocks for i in (*b.phis, *b.body)]
    defined = set(params) | {i.dest for i in instrs if i.dest is not None}
    return not any(a == UNDEFINED or a not in defined for i in instrs for a in i.args)


def hoist_loop_loads(blocks: list[QBlock], headers: set[str], params: list[str],
                     types: dict[str, Type], guarded: set[str] | None = None
                     ) -> list[QBlock]:
    """``blocks`` with the invariant checked loads of each loop read before it (see the
    module's docstring); ``types`` gains the new names, ``guarded`` the names of the join
    phis (they hold 0, not an array, where the loop does not run: nothing may read
    through them before the loop, as AArch64's hoisted lengths would). The same list
    when nothing moves. Instructions are copied where changed, never edited (they belong
    to the program)."""
    if not headers:
        return blocks
    if not defined_everywhere(blocks, params):
        return blocks  # Bril variables that may hold no value: their checks stay in place
    instrs = [i for b in blocks for i in (*b.phis, *b.body)]
    defined = set(params) | {i.dest for i in instrs if i.dest is not None}
    by_label = {b.label: b for b in blocks}
    dom = Dominance({b.label: b.succs for b in blocks}, blocks[0].label)
    loops = natural_loops({b.label: b.preds for b in blocks}, dom)
    names = Names(defined | set(by_label))  # the function's one naming service
    home = {i.dest: b.label for b in blocks for i in (*b.phis, *b.body) if i.dest is not None}
    consts = {i.dest for i in instrs if i.op == "const" and i.dest is not None}
    order = [b.label for b in blocks]
    # Smallest (innermost) loops first: a load hoisted out of an inner loop lands in its
    # preheader blocks, which belong to the outer loop, so the outer loop may hoist it again.
    for header, (_, body) in sorted(loops.items(), key=lambda kv: len(kv[1])):
        new = _hoist_one(header, body, by_label, home, consts, set(params), names, types)
        if new:
            if guarded is not None:
                guarded.update(str(p.dest) for p in new[-1].phis)
            at = order.index(header)
            order[at:at] = [b.label for b in new]
            by_label.update((b.label, b) for b in new)
            # The join's phis re-define the hoisted names outside this loop: for an
            # enclosing loop they are now ordinary values of its body (or invariant).
            for b in new:
                for i in (*b.phis, *b.body):
                    if i.dest is not None:
                        home[i.dest] = b.label
    if len(order) == len(blocks):
        return blocks
    return [by_label[x] for x in order]


def _hoist_one(header: str, body: set[str], by_label: dict[str, QBlock],
               home: dict[str, str], consts: set[str], params: set[str], names: Names,
               types: dict[str, Type]) -> list[QBlock]:
    """Hoist what loop ``header`` allows; the new blocks G, L, J (empty: nothing moved)."""
    h = by_label[header]
    # One preheader P ending in `jmp H`: the guard, loads and join are spliced in on that
    # single edge, so every entry to the loop passes them.
    outside = [p for p in h.preds if p not in body]
    if len(outside) != 1 or h.handler or not h.body:
        return []
    pre = by_label[outside[0]]
    test = h.body[-1]
    if pre.handler or not pre.body or pre.body[-1].op != "jmp" or test.op != "br" \
            or not all(pure(i) for i in h.body[:-1]):
        return []
    inside = [x for x in h.succs if x in body]
    if len(inside) != 1 or len(h.succs) != 2:
        return []

    def invariant(name: str, moved: dict[str, str]) -> bool:
        return name in moved or name in params or name in consts \
            or (name in home and home[name] not in body)

    # what the loop may write: arrays of these types (a store to one may change any
    # array of its type); a call may write anything
    stored: set[object] = set()
    for x in body:
        for i in by_label[x].body:
            if i.op == "call":
                return []
            if i.op == "astore":
                stored.add(types.get(i.args[0]))
    loads: list[tuple[QBlock, Instr]] = []  # (block, aload) in the order met
    moved: dict[str, str] = {}  # original name -> the name L gives the hoisted load
    # Walk the first iteration's straight path. Stopping at the first impure instruction
    # is what keeps traps exact: a hoisted load's trap then happens before anything the
    # iteration could have shown (a print, a store, another trap).
    prev, cur = header, by_label[inside[0]]
    while cur.label in body and cur.label != header and cur.preds == [prev] \
            and not cur.handler and not cur.phis:
        for i in cur.body[:-1]:
            # Invariant operands, and no store in the loop to any array of this type (or an
            # unknown type): then every iteration would load the same value.
            if i.op == "aload" and all(invariant(a, moved) for a in i.args) \
                    and i.dest is not None and i.dest in types \
                    and types.get(i.args[0]) not in stored and None not in stored \
                    and types.get(i.args[0]) is not None:
                loads.append((cur, i))
                moved[i.dest] = names.fresh(i.dest, bare=False, sep=".lh")
            elif not pure(i):
                break
        else:  # the whole block passed: follow its unconditional jump
            last = cur.body[-1]
            if last.op == "jmp":
                prev, cur = cur.label, by_label[last.labels[0]]
                continue
        break
    if not loads:
        return []
    return _rewrite(h, pre, test, inside[0], loads, moved, names, types)


def _rewrite(h: QBlock, pre: QBlock, test: Instr, inside: str,
             loads: list[tuple[QBlock, Instr]], moved: dict[str, str], names: Names,
             types: dict[str, Type]) -> list[QBlock]:
    g_label, l_label, j_label = (names.fresh(h.label + what, bare=False, sep="")
                                 for what in ("guard", "load", "join"))
    # G: the header's test on the values the loop starts with
    entry = {p.dest: p.args[p.labels.index(pre.label)] for p in h.phis
             if p.dest is not None and pre.label in p.labels}
    # The header only computes pure values and branches (checked by the caller), so running
    # a renamed copy of it before the loop has no effect besides deciding the branch.
    guard: list[Instr] = []
    for i in h.body[:-1]:
        c = i.copy()
        c.args = [entry.get(a, a) for a in c.args]
        new = names.fresh(str(i.dest), bare=False, sep=".lh")
        entry[str(i.dest)] = new
        c.dest = new
        if i.type is not None:
            types[new] = i.type
        guard.append(c)
    cond = entry.get(test.args[0], test.args[0])
    # which arm enters the loop: the one naming the header's in-loop successor
    enters_on_true = test.labels[0] == inside
    arms = [l_label, j_label] if enters_on_true else [j_label, l_label]
    guard.append(Instr("br", args=[cond], labels=arms, line=test.line))
    g = QBlock(g_label, body=guard, succs=list(arms), preds=[pre.label])
    # L: the loads, operands renamed to the loads hoisted before them
    body: list[Instr] = []
    for _, i in loads:
        c = i.copy()
        c.args = [moved.get(a, a) for a in c.args]
        c.dest = moved[str(i.dest)]
        types[c.dest] = types[str(i.dest)]
        body.append(c)
    body.append(Instr("jmp", labels=[j_label]))
    load = QBlock(l_label, body=body, succs=[j_label], preds=[g_label])
    # J: each original name is a phi of its load (0 on the edge where the loop won't run)
    # 0 on the edge that skips L: the loop is not entered on that path, so nothing reads
    # the phi there; it only has to be *some* value for the phi to be well formed.
    zero = names.fresh("zero", bare=False, sep=".lh")
    types[zero] = INT
    g.body.insert(len(g.body) - 1, Instr("const", zero, INT, value=0))
    phis = [Instr("phi", orig, types[orig], [zero, new], labels=[g_label, l_label])
            for orig, new in moved.items()]
    join = QBlock(j_label, phis=phis, body=[Instr("jmp", labels=[h.label])],
                  succs=[h.label], preds=[g_label, l_label])
    # P now jumps to G; the header's phis name J where they named P
    jmp = pre.body[-1].copy()
    jmp.labels = [g_label]
    pre.body = [*pre.body[:-1], jmp]
    pre.succs = [g_label]
    h.preds = [j_label if p == pre.label else p for p in h.preds]
    relabel_phis(h, pre.label, j_label)
    # the loads leave the loop
    # The originals go: the join's phis define their names, so every use in the loop now
    # reads the value loaded once before it.
    gone = {id(i) for _, i in loads}
    for b, _ in loads:
        b.body = [i for i in b.body if id(i) not in gone]
    return [g, load, join]
