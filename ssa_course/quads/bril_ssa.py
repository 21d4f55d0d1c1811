"""Bril programs already in SSA form, translated out of it for the stages that build their
own SSA.

Bril has two SSA forms. The classic one (``docs/lang/ssa.md`` in Bril's repository) has
``x.2: int = phi x.0 x.1 .entry .loop;``: the argument paired with the label of the block
control came from. The current one (``ssa2.md``) has ``set x v;`` (store ``v`` in the
*shadow* of ``x``), ``x: int = get;`` (read it) and ``x: int = undef;``.

The ``quads`` stage runs both as written, so ``--profile`` counts match Bril's reference
interpreter. Every other stage starts from :func:`out_of_ssa`'s program, which means the
same thing with plain copies:

* ``set x v`` becomes ``x.shadow = id v`` and ``x: T = get`` becomes ``x = id x.shadow``
  (a shadow variable per ``get`` name, private to the call like Bril's shadow store, so a
  ``get`` with no ``set`` before it is a runtime error, as in Bril);
* ``x: T = undef`` becomes ``x: T = const 0`` (or ``false``): a program may copy an
  undefined value around but never use it, so any value serves (a use is an error in the
  ``quads`` stage; :mod:`~ssa_course.quads.bril_check` rejects a use of a variable that is
  *only* ever ``undef`` when the program is loaded);
* the phis at the top of a block become *parallel* copies on each incoming edge: all
  sources are read before any destination is written (through temporaries when a
  destination is also a source, the swap problem). A ``br`` edge gets a block of its own
  so the copies run only on that edge. An argument that is never assigned in the function
  (Bril's ``__undefined``) gives no copy;
* a phi at the top of a *handler* (the second label of an ``enter``) names, besides
  ordinary predecessors, the blocks whose ``call`` or ``throw`` may land there (what
  ``opt -p ssa`` writes: each such instruction inside a ``try`` ends its block). Control
  reaches the handler from the middle of such a block, so its copies go right *before*
  each instruction that may throw to it (values before the call: a call that throws
  assigns nothing), into a temporary per phi (``s.3.exc``) that the handler then copies
  into the phi's name. Ordinary edges into a handler go through the same temporaries.
"""

from __future__ import annotations

from ssa_course.quads.cfg import build_cfg
from ssa_course.quads.exceptions import handler_stacks
from ssa_course.quads.ir import Function, Instr, Label, Program, first_index
from ssa_course.quads.names import label_names, variable_names
from ssa_course.tiny.types import BOOL, INT

SSA_FORM_OPS = frozenset({"phi", "set", "get", "undef"})


def uses_ssa_ops(program: Program) -> bool:
    return any(i.op in SSA_FORM_OPS for fn in program.functions.values()
               for i in fn.instrs())


def out_of_ssa(program: Program) -> Program:
    """The same program without ``phi``/``set``/``get``/``undef`` (the input is unchanged)."""
    if not uses_ssa_ops(program):
        return program
    functions = {name: _Translator(fn).run() for name, fn in program.functions.items()}
    return Program(functions, program.structs)


class _Translator:
    def __init__(self, fn: Function):
        self.fn = fn
        self.names = variable_names(fn)
        self.labels = label_names(fn)
        self.assigned = {n for n, _ in fn.params} | {i.dest for i in fn.instrs()
                                                      if i.dest is not None}
        self.shadows: dict[str, str] = {}
        self.phis_at: dict[str, list[Instr]] = {}
        self.slots: dict[int, dict[str, int]] = {}  # id(phi) -> label -> arg index
        self.handlers = {i.labels[1] for i in fn.instrs() if i.op == "enter"}
        self.temps: dict[int, str] = {}  # id(phi) at a handler -> its temporary

    def shadow(self, var: str) -> str:
        if var not in self.shadows:
            self.shadows[var] = self.names.fresh(f"{var}.shadow")
        return self.shadows[var]

    def copies(self, pred: str | None, target: str) -> list[Instr]:
        """Parallel copies for the edge ``pred`` -> ``target``."""
        moves: list[tuple[Instr, str]] = []  # (phi, source)
        for phi in self.phis_at.get(target, []):
            if id(phi) not in self.slots:  # once per phi: ``labels.index`` per edge is slow
                self.slots[id(phi)] = first_index(phi.labels)
            if pred is None or pred not in self.slots[id(phi)]:
                continue
            source = phi.args[self.slots[id(phi)][pred]]
            # (into a handler even x = phi x ...: the handler reads the temporary)
            if source in self.assigned and (source != phi.dest or target in self.handlers):
                moves.append((phi, source))
        if target in self.handlers:  # into the temporaries: no destination is a source
            return [Instr("id", self.temp(phi), phi.type, [source]) for phi, source in moves]
        dests = {phi.dest for phi, _ in moves}
        if not any(source in dests for _, source in moves):
            return [Instr("id", phi.dest, phi.type, [source]) for phi, source in moves]
        temps = [self.names.fresh(f"{phi.dest}.in") for phi, _ in moves]
        out = [Instr("id", t, phi.type, [source]) for t, (phi, source) in zip(temps, moves,
                                                                              strict=True)]
        out += [Instr("id", phi.dest, phi.type, [t]) for t, (phi, _) in zip(temps, moves,
                                                                            strict=True)]
        return out

    def temp(self, phi: Instr) -> str:
        if id(phi) not in self.temps:
            self.temps[id(phi)] = self.names.fresh(f"{phi.dest}.exc")
        return self.temps[id(phi)]

    def _handler_phis(self) -> list[Instr]:
        return [phi for h in sorted(self.handlers) for phi in self.phis_at.get(h, [])]

    def throws_to(self) -> dict[int, str]:
        """id(instruction) -> the handler with phis that a ``call``/``throw`` may land in
        (the innermost handler of its ``try`` region)."""
        if not any(h in self.phis_at for h in self.handlers):
            return {}
        cfg = build_cfg(self.fn)
        stacks = handler_stacks(cfg)
        out: dict[int, str] = {}
        originals = iter(i for i in self.fn.body if isinstance(i, Instr))
        for name, block in cfg.blocks.items():  # blocks hold copies, in body order
            stack = stacks.get(name)
            for instr in block.instrs:
                original = next(originals)
                if stack is None:
                    continue
                if instr.op == "leave" and stack:
                    stack = stack[:-1]
                elif instr.op in ("call", "throw") and stack and stack[-1] in self.phis_at:
                    out[id(original)] = stack[-1]
        return out

    def run(self) -> Function:
        fn = self.fn
        current: str | None = None
        for item in fn.body:
            if isinstance(item, Label):
                current = item.name
            elif item.op == "phi" and current is not None:
                self.phis_at.setdefault(current, []).append(item)
        throws_to = self.throws_to()
        body: list[Instr | Label] = []
        edges: list[Instr | Label] = []  # edge blocks, placed after the function's code
        current = None
        for item in fn.body:
            if isinstance(item, Label):
                falls_in = not (body and isinstance(body[-1], Instr)
                                and body[-1].is_terminator())
                if falls_in and item.name in self.phis_at:
                    body += self.copies(current, item.name)
                body.append(item)
                current = item.name
                if item.name in self.handlers:  # the temporaries become the phis' names
                    body += [Instr("id", phi.dest, phi.type, [self.temp(phi)])
                             for phi in self.phis_at.get(item.name, [])]
                continue
            op = item.op
            if op == "phi":
                continue
            if id(item) in throws_to:  # the exceptional edge leaves from here
                body += self.copies(current, throws_to[id(item)])
            if op == "set":
                shadow = self.shadow(item.args[0])
                body.append(Instr("id", shadow, None, [item.args[1]], pos=item.pos))
            elif op == "get":
                body.append(Instr("id", item.dest, item.type, [self.shadow(item.result())],
                                  pos=item.pos))
            elif op == "undef":
                if item.type in (INT, BOOL):
                    zero = False if item.type == BOOL else 0
                    body.append(Instr("const", item.dest, item.type, value=zero))
            elif op == "jmp" and item.labels[0] in self.phis_at:
                body += self.copies(current, item.labels[0])
                body.append(item.copy())
            elif op in ("br", "enter") and any(lb in self.phis_at for lb in item.labels):
                body.append(self.split(item, current, edges))
            else:
                body.append(item.copy())
        # A temporary no throwing point set (an argument with no value) leaves the phi
        # with a value nobody reads as such (its status, if read, says so: see
        # undefined_reads): start every int or bool temporary at 0 / false.
        body[:0] = [Instr("const", t, phi.type, value=False if phi.type == BOOL else 0)
                    for phi in self._handler_phis() if phi.type in (INT, BOOL)
                    for t in [self.temp(phi)]]
        if edges:
            if not (body and isinstance(body[-1], Instr) and body[-1].is_terminator()):
                body.append(Instr("ret"))  # the code used to fall off the end here
            body += edges
        self.type_shadows(body)
        return Function(fn.name, list(fn.params), fn.ret, body)

    def split(self, item: Instr, current: str | None, edges: list[Instr | Label]) -> Instr:
        """A branch whose targets have phis: each such edge goes through its own block."""
        new = item.copy()
        if item.op == "br" and item.labels[0] == item.labels[1]:
            moves = self.copies(current, item.labels[0])
            if moves:  # both edges are one edge: one block of copies
                new.labels = [self.edge_block(item.labels[0], current, moves, edges)] * 2
            return new
        for k, target in enumerate(item.labels):
            if item.op == "enter" and k == 1:
                continue  # a handler is entered from throwing points, not this edge
            moves = self.copies(current, target) if target in self.phis_at else []
            if moves:
                new.labels[k] = self.edge_block(target, current, moves, edges)
        return new

    def edge_block(self, target: str, current: str | None, moves: list[Instr],
                   edges: list[Instr | Label]) -> str:
        name = self.labels.fresh(f"{current or self.fn.name}.to.{target}")
        edges += [Label(name), *moves, Instr("jmp", labels=[target])]
        return name

    def type_shadows(self, body: list[Instr | Label]) -> None:
        """A shadow variable has the type of the ``get`` that reads it."""
        types = {i.dest: i.type for i in self.fn.instrs() if i.op == "get"}
        var_of = {shadow: var for var, shadow in self.shadows.items()}
        for item in body:
            if isinstance(item, Instr) and item.type is None and item.dest in var_of:
                item.type = types.get(var_of[item.dest]) or INT
