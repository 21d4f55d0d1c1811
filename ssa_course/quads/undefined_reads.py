"""Reads that may find no value, made explicit: Bril's "undefined variable" as a check.

Bril lets a variable be assigned on some paths only, and ``x: T = undef`` gives a value
that may be copied but not used. Reading a variable with no value (or using an ``undef``
one) stops the program -- in Bril's reference interpreter and in our ``quads`` stage,
which runs the program as written. Every other stage works on a translation, and there a
read is just an edge in a data-flow graph: SSA renames the variable (the message said
``x.2``), dead-code elimination drops an unused read, the sea of nodes folds a phi of
"nothing" and a value into the value, and machine code has no "no value" at all.

So for those stages the read becomes what a bounds check is: an explicit test that every
optimization keeps (it may trap) and may remove only where it proves it passes. For each
function:

1. *candidates*: the variables some read may find without a value -- a read (or a phi
   argument, at the end of its predecessor) with no assignment of the variable on the
   dominator-tree path to it, an ``undef``, a phi with an argument never assigned, and
   every variable copied (``id``, ``phi``, ``set``/``get``) from a candidate;
2. a forward *must* analysis over the blocks finds which candidates are surely assigned
   and surely hold a value at each read (an ``undef`` assigns without a value; a read that
   passed its test proves it from then on); a read not proven gets a check;
3. each candidate ``x`` gets a status variable (``x.st``: 0 no value assigned, 1 ``undef``,
   2 a value), set at entry and after every assignment (a copy copies the status, a phi
   gets a status phi, ``set``/``get`` a status shadow), and an initial dummy value (0 or
   false) so that no stage ever reads a variable with nothing in it;
4. a read that may find no value is preceded by ``ok = le one x.st`` (a copy: ``id``,
   ``set``) or ``ok = eq x.st two`` (any other use), then ``checkdef ok x``, which stops the
   program with ``undefined variable 'x'`` -- the program's own name -- unless ``ok``.

A function whose reads are all proven is returned unchanged (nearly every program: no
check costs anything then). ``undef`` becomes the dummy value everywhere. Functions with
``try`` regions are analysed without their exceptional edges: a handler proves nothing.
A reference-typed candidate gets an empty array or a struct of dummies (none for a struct
that contains itself).
"""

from __future__ import annotations

from functools import reduce
from operator import and_

from ssa_course.quads.bril_defined import _blocks
from ssa_course.quads.dataflow import Analysis, solve
from ssa_course.quads.domtree import Dominance
from ssa_course.quads.ir import Function, Instr, Label, Program, StructInfo
from ssa_course.quads.names import variable_names
from ssa_course.tiny.types import BOOL, FLOAT, INT, ArrayType, StructType, Type

UNASSIGNED, UNDEF, VALUE = 0, 1, 2  # a status variable's values
COPIES = frozenset({"id", "set"})  # reads that take an ``undef`` along (need status >= 1)
NEVER = "__undefined"  # Bril's phi argument with no value


def lower_undefined_reads(program: Program) -> Program:
    """The same program with a check before every read that may find no value (the
    input is unchanged; it is returned as is when no read needs one)."""
    functions = {name: _Function(fn, program.structs).lower()
                 for name, fn in program.functions.items()}
    if all(functions[n] is f for n, f in program.functions.items()):
        return program
    return Program(functions, program.structs)


class _Function:
    def __init__(self, fn: Function, structs: dict[str, StructInfo]):
        self.fn = fn
        self.structs = structs
        self.blocks, self.succs, _ = _blocks(fn)
        self.end = len(self.blocks)
        self.graph = {b: [s for s in self.succs[b] if s != self.end]
                      for b in range(self.end)}
        self.params = {n for n, _ in fn.params}
        self.types: dict[str, Type | None] = dict(fn.params)
        for i in fn.instrs():
            if i.dest is not None and i.type is not None:
                self.types.setdefault(i.dest, i.type)
        self.assigned = self.params | {i.dest for i in fn.instrs() if i.dest is not None}
        self.block_labels: dict[int, list[str]] = {}  # block index -> its labels
        index, nonempty = 0, False  # numbered the way ``_blocks`` numbers them
        for item in fn.body:
            if isinstance(item, Label):
                if nonempty:
                    index, nonempty = index + 1, False
                self.block_labels.setdefault(index, []).append(item.name)
            else:
                nonempty = True
                if item.is_terminator():
                    index, nonempty = index + 1, False
        self.labels = {lb: b for b, names in self.block_labels.items() for lb in names}

    # -- 1. candidates ----------------------------------------------------------------

    def candidates(self, dom: Dominance[int]) -> set[str]:
        found: set[str] = set()
        scope: set[str] = set(self.params)
        stack: list[tuple[int, list[str] | None]] = [(0, None)]
        while stack:
            b, added = stack.pop()
            if added is not None:
                scope.difference_update(added)
                continue
            mine: list[str] = []
            label = self._label_of(b)
            for item in self.blocks[b]:
                if item.op == "undef":
                    found.add(item.result())
                elif item.op == "phi":
                    if any(a == NEVER or a not in self.assigned for a in item.args):
                        found.add(item.result())
                else:
                    found.update(a for a in _reads(item) if a not in scope)
                if item.dest is not None and item.dest not in scope:
                    scope.add(item.dest)
                    mine.append(item.dest)
            for s in self.graph[b]:  # phi arguments are read at the end of this block
                for phi in self._phis(s):
                    for a, lb in zip(phi.args, phi.labels, strict=False):
                        if lb == label and a != NEVER and a not in scope:
                            found.add(a)
            stack.append((b, mine))
            stack.extend((kid, None) for kid in reversed(dom.children[b]))
        return self._closure(found)

    def _closure(self, found: set[str]) -> set[str]:
        """Every variable copied from a candidate is one too."""
        copies: dict[str, list[str]] = {}
        gets = {i.dest for i in self.fn.instrs() if i.op == "get"}
        for i in self.fn.instrs():
            if i.op in ("id", "phi") and i.dest is not None:
                for a in i.args:
                    copies.setdefault(a, []).append(i.dest)
            elif i.op == "set" and i.args[0] in gets:
                copies.setdefault(i.args[1], []).append(i.args[0])
        work = list(found)
        while work:
            for d in copies.get(work.pop(), ()):
                if d not in found:
                    found.add(d)
                    work.append(d)
        found.discard(NEVER)
        return found

    def _label_of(self, b: int) -> str | None:
        names = self.block_labels.get(b)
        return names[-1] if names else None  # the label a phi names: the last one

    def _phis(self, b: int) -> list[Instr]:
        return [i for i in self.blocks[b] if i.op == "phi"]

    # -- 2. which reads are proven ----------------------------------------------------

    def unproven(self, cands: list[str], dom: Dominance[int]) -> dict[int, list[tuple[str, int]]]:
        """id(instruction) -> [(variable, status it needs)] for the reads not proven."""
        bit = {v: 1 << k for k, v in enumerate(cands)}
        full = (1 << len(cands)) - 1
        handlers = {self.labels[i.labels[1]] for i in self.fn.instrs() if i.op == "enter"
                    and i.labels[1] in self.labels}
        entry = sum(bit[p] for p in self.params if p in bit)
        order = list(dom.pre)  # the reachable blocks, each after its dominator
        succs = {b: [s for s in self.graph[b] if s in dom.pre] for b in order}

        def start(b: int, fact: tuple[int, int]) -> tuple[int, int]:
            """What block ``b`` starts from: the parameters at the entry, nothing in a
            handler (a throw may come from anywhere in its try), else what flows in."""
            return (0, 0) if b in handlers else (entry, entry) if b == 0 else fact

        def meet(*facts: tuple[int, int]) -> tuple[int, int]:
            return (reduce(and_, (f[0] for f in facts)), reduce(and_, (f[1] for f in facts)))

        # A must problem (on every path): bitwise "and" where paths join, everything
        # assigned where no path was seen yet.
        found = solve(succs, Analysis(True, (full, full), meet,
                                      lambda b, fact: self._walk(b, start(b, fact), bit, None)),
                      0)
        need: dict[int, list[tuple[str, int]]] = {}
        for b in order:
            self._walk(b, start(b, found.top[b]), bit, need)
        return need

    def _walk(self, b: int, state: tuple[int, int], bit: dict[str, int],
              need: dict[int, list[tuple[str, int]]] | None) -> tuple[int, int]:
        a, v = state
        for item in self.blocks[b]:
            if item.op != "phi":
                wants: list[tuple[str, int]] = []
                for x in _reads(item):
                    k = bit.get(x)
                    if k is None:
                        continue
                    level = UNDEF if item.op in COPIES else VALUE
                    if not (a & k) or (level == VALUE and not (v & k)):
                        wants.append((x, level))
                    a |= k  # it passed: from here on it is known
                    if level == VALUE:
                        v |= k
                if wants and need is not None:
                    need[id(item)] = wants
            d = item.args[0] if item.op == "set" else item.dest
            k = bit.get(d) if d is not None else None
            if k is None or item.op == "set":
                continue
            if item.op == "undef":
                a, v = a | k, v & ~k
            elif item.op == "id" and item.args[0] in bit:
                src = bit[item.args[0]]
                a, v = a | k, (v | k) if v & src else v & ~k
            elif item.op in ("phi", "get"):
                a, v = a & ~k, v & ~k  # not followed along edges: unknown
            else:
                a, v = a | k, v | k
        return a, v

    # -- 3 and 4. the lowering ----------------------------------------------------------

    def lower(self) -> Function:
        dom = Dominance(self.graph, 0)
        cands = sorted(self.candidates(dom))
        need = self.unproven(cands, dom) if cands else {}
        if not need:  # every read proven (an ``undef`` never used: out_of_ssa's const)
            return self.fn
        return _Writer(self, set(cands), need).write()


def _in_order(wants: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The checks of one instruction in the order ``quads`` finds the problems: first any
    operand with nothing assigned, then any holding an ``undef`` (each in operand order)."""
    if len(wants) < 2:
        return wants
    return [(x, UNDEF) for x, _ in wants] + [(x, lv) for x, lv in wants if lv == VALUE]


def _reads(item: Instr) -> list[str]:
    if item.op == "phi":
        return []
    return item.args[1:] if item.op == "set" else list(item.args)


class _Writer:
    def __init__(self, f: _Function, tracked: set[str], need: dict[int, list[tuple[str, int]]]):
        self.f = f
        self.tracked = tracked
        self.need = need
        self.names = variable_names(f.fn)  # the one naming service (quads/names.py)
        self.status = {x: self.fresh(f"{x}.st") for x in sorted(tracked)}
        self.one = self.fresh("st.one")
        self.two = self.fresh("st.two")
        self.zero = self.fresh("st.zero")

    def fresh(self, base: str) -> str:
        return self.names.fresh(base)

    def st(self, var: str) -> str:
        """The status variable standing for ``var`` in a copy or phi."""
        if var in self.status:
            return self.status[var]
        return self.zero if var == NEVER or var not in self.f.assigned else self.two

    def write(self) -> Function:
        f = self.f
        body: list[Instr | Label] = []
        if self.tracked:
            body += [Instr("const", self.zero, INT, value=UNASSIGNED),
                     Instr("const", self.one, INT, value=UNDEF),
                     Instr("const", self.two, INT, value=VALUE)]
            for x in sorted(self.tracked):
                body.append(Instr("id", self.status[x], INT,
                                  [self.two if x in f.params else self.zero]))
                if x not in f.params:
                    body += self.dummy(x, f.types.get(x), set())
        for item in f.fn.body:
            if isinstance(item, Label):
                body.append(item)
                continue
            for x, level in _in_order(self.need.get(id(item), [])):
                ok = self.fresh(f"{x}.ok")
                body.append(Instr("le", ok, BOOL, [self.one, self.status[x]])
                            if level == UNDEF else
                            Instr("eq", ok, BOOL, [self.status[x], self.two]))
                body.append(Instr("checkdef", args=[ok], field=x))
            body += self.rewrite(item)
        return Function(f.fn.name, list(f.fn.params), f.fn.ret, body)

    def dummy(self, x: str, ty: Type | None, making: set[str]) -> list[Instr]:
        """Instructions giving ``x`` some value of type ``ty`` (never read as such: its
        status says "no value"): 0, false, 0.0, an empty array, a struct of dummies -- or
        nothing for a struct that contains itself."""
        value = _dummy(ty)
        if value is not None:
            return [Instr("const", x, ty, value=value)]
        if isinstance(ty, ArrayType):
            return [Instr("newarr", x, ty, [self.zero])]
        info = self.f.structs.get(ty.name) if isinstance(ty, StructType) else None
        if info is None or info.name in making:
            return []
        out: list[Instr] = []
        fields: list[str] = []
        for fname, fty in info.fields:
            part = self.fresh(f"{x}.{fname}")
            made = self.dummy(part, fty, making | {info.name})
            if not made:
                return []
            out += made
            fields.append(part)
        return [*out, Instr("newstruct", x, ty, fields)]

    def rewrite(self, item: Instr) -> list[Instr]:
        """The instruction (``undef`` as its dummy value) and the status it assigns."""
        out: list[Instr] = []
        if item.op == "undef":
            dummy = _dummy(item.type)
            if dummy is not None:
                out.append(Instr("const", item.dest, item.type, value=dummy))
        else:
            out.append(item.copy())
        d = item.args[0] if item.op == "set" else item.dest
        if d is None or d not in self.status:
            return out
        s = self.status[d]
        if item.op == "undef":
            out.append(Instr("id", s, INT, [self.one]))
        elif item.op == "id":
            out.append(Instr("id", s, INT, [self.st(item.args[0])]))
        elif item.op == "phi":
            out.append(Instr("phi", s, INT, [self.st(a) for a in item.args],
                             labels=list(item.labels)))
        elif item.op == "set":
            out.append(Instr("set", args=[s, self.st(item.args[1])]))
        elif item.op == "get":
            out.append(Instr("get", s, INT))
        else:
            out.append(Instr("id", s, INT, [self.two]))
        return out


def _dummy(ty: Type | None) -> int | bool | float | None:
    return {INT: 0, BOOL: False, FLOAT: 0.0}.get(ty) if ty is not None else None
