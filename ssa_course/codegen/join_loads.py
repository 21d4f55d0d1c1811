"""A load after an ``&&`` reuses the load its test made: ``while (j >= 0 && a[j] > v)
{ a[j + 1] = a[j]; ... }`` reads ``a[j]`` once an iteration, not twice.

The middle end leaves the ``&&`` as a join whose branch tests a phi::

    P1: x1 = aload a j; c1 = gt x1 v; jmp J      P2: (j < 0) jmp J
    J:  c = phi(P1: c1, P2: false); br c T F
    T:  x2 = aload a j; ...                      (T's only way in is J)

Every path into T comes through P1 (on P2's edge ``c`` is the constant false, so J goes
to F), and on that path ``a[j]`` was just read, with nothing in between that could store
into an array of its type. So ``x2`` is that value: J gets ``x = phi(P1: x1, P2: 0)`` (the
0 is never read: that edge never reaches T) and T's load goes, check included (the same
check passed in P1). Machine-code threading (``thread.py``) later sends P1 straight to T,
as before; only the second load is gone. Runs on quads blocks before selection, so both
targets share it; only loads of ints and bools (a reference would need the unset check's
reasoning and AArch64's hoisted lengths to know about the 0), only names defined before
J (not renamed by its phis).
"""

from __future__ import annotations

from ssa_course.codegen.loop_loads import defined_everywhere, pure
from ssa_course.codegen.quadcfg import QBlock
from ssa_course.quads.ir import Instr
from ssa_course.quads.names import Names
from ssa_course.tiny.types import INT, Type


def reuse_join_loads(blocks: list[QBlock], params: list[str], types: dict[str, Type]
                     ) -> int:
    """Replace each load that an ``&&``'s test already made (see the module docstring);
    the number of loads removed. Blocks are edited in place; ``types`` gains the names."""
    if not defined_everywhere(blocks, params):
        return 0
    by_label = {b.label: b for b in blocks}
    consts = {i.dest: i.value for b in blocks for i in b.body
              if i.op == "const" and i.dest is not None}
    names: Names | None = None
    rename: dict[str, str] = {}
    for t in blocks:
        if len(t.preds) != 1 or t.handler or t.phis:
            continue
        j = by_label[t.preds[0]]
        last = j.body[-1] if j.body else None
        if last is None or last.op != "br" or last.labels[0] != t.label \
                or last.labels[1] == t.label or j.handler \
                or not all(pure(i) for i in j.body[:-1]):
            continue
        test = next((p for p in j.phis if p.dest == last.args[0]), None)
        if test is None:
            continue
        defined_in_j = {i.dest for i in (*j.phis, *j.body) if i.dest is not None}
        for x in _first_loads(t, types):
            if any(a in defined_in_j for a in x.args):
                continue
            # per edge into J: the value of a[i] at its end, or None when that edge never
            # goes on to T (the test's phi is the constant false there)
            values: list[str | None] = []
            for arg, pred in zip(test.args, test.labels, strict=True):
                if consts.get(arg) is False:
                    values.append(None)
                    continue
                values.append(_available(by_label[pred], x, types))
                if values[-1] is None or by_label[pred].handler:
                    break
            else:
                if all(v is None for v in values):
                    continue
                if names is None:
                    names = Names({i.dest for b in blocks for i in (*b.phis, *b.body)
                                   if i.dest is not None} | set(params) | set(by_label))
                joined = names.fresh(str(x.dest), bare=False, sep=".jl")
                types[joined] = x.result_type()
                args = []
                for v, pred in zip(values, test.labels, strict=True):
                    if v is None:  # never read: this edge does not reach T
                        zero = names.fresh("zero", bare=False, sep=".jl")
                        types[zero] = INT
                        p = by_label[pred]
                        p.body.insert(len(p.body) - 1, Instr("const", zero, INT, value=0))
                        v = zero
                    args.append(v)
                j.phis.append(Instr("phi", joined, x.type, args, labels=list(test.labels)))
                t.body = [i for i in t.body if i is not x]
                rename[str(x.dest)] = joined
    if rename:  # copies, never edits: the instructions belong to the compiled program
        for b in blocks:
            b.phis = [i.renamed(rename) for i in b.phis]
            b.body = [i.renamed(rename) for i in b.body]
    return len(rename)


def _first_loads(t: QBlock, types: dict[str, Type]) -> list[Instr]:
    """T's loads of ints and bools before anything in T that could store or call."""
    out = []
    for i in t.body:
        if i.op == "aload" and i.dest is not None and i.type is not None \
                and not i.type.is_ref():
            out.append(i)
        elif not pure(i) and i.op != "aload":
            break
    return out


def _available(p: QBlock, x: Instr, types: dict[str, Type]) -> str | None:
    """The name holding ``aload x.args`` at the end of ``p`` (loaded there, nothing
    after it that could store into an array of that type or call), else None."""
    kind = types.get(x.args[0])
    found: str | None = None
    for i in p.body:
        if i.op == "aload" and i.args == x.args and i.dest is not None:
            found = i.dest
        elif i.op == "call" or (i.op == "astore" and types.get(i.args[0]) in (kind, None)):
            found = None
        elif not pure(i) and i.op not in ("aload", "astore", "jmp", "br", "print",
                                          "newarr"):
            found = None  # anything else unknown (a struct store is harmless, but rare)
    return found
