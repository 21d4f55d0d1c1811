"""Strength reduction: ``m = iv * c`` in an innermost counting loop becomes an induction
variable of its own.

In ``for (k = init; ...; k = k + s) { ... b[k * n + j] ... }`` the product ``k * n``
changes by ``s * n`` from one trip to the next, so instead of multiplying in every trip
the loop can keep the product in a variable ``kn`` that starts at ``init * n`` (computed
once before the loop) and grows by ``s * n`` (also computed once) where ``k`` grows::

    pre:    kn0 = mul init n;  d = mul s n;  jmp H
    H:      k = phi(init, k');  kn = phi(kn0, kn')
    body:   m = id kn                      (was: m = mul k n)
    latch:  k' = add k s;  kn' = add kn d;  jmp H

Exact in Tiny's 64-bit wrapping arithmetic: ``(k + s) * n = k * n + s * n`` holds modulo
2^64 as it does in the integers, so no guard is needed and a product that wraps wraps to
the same value either way. Only products by a loop-invariant *variable* are rewritten (a
constant factor is one cheap ``imul``/``lea``, not worth a register for the whole loop),
in innermost loops with one way in and one back edge. Runs on quads blocks before
selection, after :mod:`ssa_course.codegen.loop_version` (whose guards read ``k * n``
in its original shape), so both targets and both copies of a versioned loop gain it.
"""

from __future__ import annotations

from ssa_course.codegen.loop_loads import defined_everywhere
from ssa_course.codegen.quadcfg import QBlock
from ssa_course.quads.domtree import Dominance
from ssa_course.quads.ir import Instr
from ssa_course.quads.loops import natural_loops
from ssa_course.quads.names import Names
from ssa_course.tiny.types import INT, Type


def reduce_strength(blocks: list[QBlock], params: list[str], types: dict[str, Type]) -> int:
    """Rewrite, in place, each ``iv * c`` of an innermost counting loop as an induction
    variable (see the module's docstring); ``types`` gains the new names. Returns how
    many products were rewritten."""
    if not blocks or not defined_everywhere(blocks, params):
        return 0
    dom = Dominance({b.label: b.succs for b in blocks}, blocks[0].label)
    loops = natural_loops({b.label: b.preds for b in blocks}, dom)
    if not loops:
        return 0
    by_label = {b.label: b for b in blocks}
    instrs = [i for b in blocks for i in (*b.phis, *b.body)]
    names = Names(set(params) | {i.dest for i in instrs if i.dest is not None}
                  | set(by_label))
    home = {i.dest: b.label for b in blocks for i in (*b.phis, *b.body) if i.dest is not None}
    consts = {i.dest for i in instrs if i.op == "const" and i.dest is not None}
    headers = set(loops)
    done = 0
    for header, (_, body) in loops.items():
        if any(x in headers for x in body if x != header):
            continue  # not innermost
        done += _reduce(by_label[header], body, by_label, home, consts, set(params), names,
                        types)
    return done


def _reduce(h: QBlock, body: set[str], by_label: dict[str, QBlock], home: dict[str, str],
            consts: set[str], params: set[str], names: Names, types: dict[str, Type]) -> int:
    outside = [p for p in h.preds if p not in body]
    inside = [p for p in h.preds if p in body]
    if len(outside) != 1 or len(inside) != 1 or h.handler:
        return 0
    pre, latch = by_label[outside[0]], by_label[inside[0]]
    if not pre.body or not pre.body[-1].is_terminator() or not latch.body \
            or latch.body[-1].op != "jmp" or pre.handler:
        return 0

    def invariant(name: str) -> bool:
        return name in params or name in consts or (name in home and home[name] not in body)

    defs = {i.dest: i for x in body for i in by_label[x].body if i.dest is not None}
    members = [by_label[x] for x in sorted(body)]
    done = 0
    for phi in list(h.phis):
        if phi.dest is None or types.get(phi.dest) != INT or len(phi.args) != 2:
            continue
        iv = phi.dest
        init = phi.args[phi.labels.index(pre.label)]
        nxt = defs.get(phi.args[phi.labels.index(latch.label)])
        if nxt is None or nxt.op != "add" or iv not in nxt.args:
            continue
        step = nxt.args[1] if nxt.args[0] == iv else nxt.args[0]
        if step == iv or not invariant(step):
            continue
        for b in members:
            for k, i in enumerate(b.body):
                if i.op != "mul" or i.dest is None or iv not in i.args:
                    continue
                factor = i.args[1] if i.args[0] == iv else i.args[0]
                if factor == iv or factor in consts or not invariant(factor):
                    continue
                start, delta, value, after = (
                    _fresh(names, types, i.dest, tag) for tag in (".s0", ".sd", ".sr", ".sn"))
                pre.body[-1:-1] = [Instr("mul", start, INT, [init, factor]),
                                   Instr("mul", delta, INT, [step, factor])]
                labels = [pre.label, latch.label]
                h.phis.append(Instr("phi", value, INT, [start, after], labels=labels))
                latch.body[-1:-1] = [Instr("add", after, INT, [value, delta])]
                b.body[k] = Instr("id", i.dest, INT, [value], pos=i.pos, line=i.line, at=i.at)
                done += 1
    return done


def _fresh(names: Names, types: dict[str, Type], base: str, sep: str) -> str:
    name = names.fresh(base, bare=False, sep=sep)
    types[name] = INT
    return name
