"""SSA on the fly (Braun, Buchwald, Hack, Leißa, Mallon, Zwinkau 2013): no dominators.

This is how a front end can emit SSA *while* it builds the program, the way Click's
parser builds the sea of nodes: every block keeps the current value of each variable;
reading a variable a block does not define asks its predecessors; a block with several
predecessors gets a phi. Two ideas make it work:

* **sealing** -- a block is *sealed* once all its predecessors are known. Reading a
  variable in an unsealed block (a loop header whose back edge is not built yet) makes an
  *incomplete* phi, completed when the block is sealed;
* **trivial phis** -- a phi whose operands are all the same value (or itself) is replaced
  by that value, and phis that used it are re-checked.

Here the algorithm walks a quads CFG in reverse postorder, sealing each block as soon as
all its predecessors are done -- exactly the order a one-pass front end emits blocks in.
"""

from __future__ import annotations

from ssa_course.quads.cfg import CFG
from ssa_course.quads.ir import Function, Instr, Program
from ssa_course.quads.names import Names
from ssa_course.runtime import deep_recursion
from ssa_course.ssa.construct import UNDEFINED, SSAStats, prepare_cfg
from ssa_course.ssa.dom import postorder
from ssa_course.tiny.types import Type


class Value:
    """An SSA value: an instruction's result, a parameter, a phi, or undefined."""

    __slots__ = ("name", "replaced_by")

    def __init__(self, name: str):
        self.name = name
        self.replaced_by: Value | None = None

    def resolve(self) -> Value:
        v = self
        while v.replaced_by is not None:
            v = v.replaced_by
        return v


class Phi(Value):
    __slots__ = ("block", "var", "operands", "users", "type")

    def __init__(self, name: str, block: str, var: str, type_: Type | None):
        super().__init__(name)
        self.block = block
        self.var = var
        self.operands: list[tuple[str, Value]] = []  # (predecessor, value)
        self.users: set[Phi] = set()
        self.type = type_


UNDEF = Value(UNDEFINED)


class Builder:
    def __init__(self, fn: Function, cfg: CFG):
        self.fn = fn
        self.cfg = cfg
        self.current: dict[str, dict[str, Value]] = {name: {} for name in cfg.blocks}
        self.sealed: set[str] = set()
        self.incomplete: dict[str, dict[str, Phi]] = {name: {} for name in cfg.blocks}
        self.phis: dict[str, list[Phi]] = {name: [] for name in cfg.blocks}
        self.types: dict[str, Type | None] = dict(fn.params)
        for instr in fn.instrs():
            if instr.dest is not None:
                self.types.setdefault(instr.dest, instr.type)
        self.names = Names(self.types)  # versions x.1, x.2, ... of every variable
        self.phis_made = 0
        self.phis_removed = 0

    def fresh(self, var: str) -> str:
        return self.names.fresh(var, bare=False)

    # -- the algorithm ---------------------------------------------------------

    def write(self, var: str, block: str, value: Value) -> None:
        self.current[block][var] = value

    def read(self, var: str, block: str) -> Value:
        value = self.current[block].get(var)
        if value is not None:
            return value.resolve()
        return self.read_recursive(var, block)

    def read_recursive(self, var: str, block: str) -> Value:
        preds = self.cfg.blocks[block].preds
        if block not in self.sealed:
            phi = self.new_phi(var, block)
            self.incomplete[block][var] = phi
            value: Value = phi
        elif len(preds) == 1:
            value = self.read_on_edge(var, preds[0], block)
        elif not preds:
            value = UNDEF
        else:
            phi = self.new_phi(var, block)
            self.write(var, block, phi)  # break cycles: the loop reads this phi
            value = self.add_operands(phi)
        self.write(var, block, value)
        return value

    def read_on_edge(self, var: str, pred: str, succ: str) -> Value:
        return self.read(var, pred)

    def new_phi(self, var: str, block: str) -> Phi:
        self.phis_made += 1
        phi = Phi(self.fresh(var), block, var, self.types.get(var))
        self.phis[block].append(phi)
        return phi

    def add_operands(self, phi: Phi) -> Value:
        for pred in self.cfg.blocks[phi.block].preds:
            value = self.read_on_edge(phi.var, pred, phi.block)
            phi.operands.append((pred, value))
            if isinstance(value, Phi):
                value.users.add(phi)
        return self.try_remove_trivial(phi)

    def try_remove_trivial(self, phi: Phi) -> Value:
        same: Value | None = None
        for _, op in phi.operands:
            op = op.resolve()
            if op is same or op is phi:
                continue
            if same is not None:
                return phi  # merges at least two values: not trivial
            same = op
        if same is None:
            same = UNDEF
        phi.replaced_by = same
        self.phis_removed += 1
        for user in list(phi.users):
            if user is not phi and user.replaced_by is None:
                self.try_remove_trivial(user)
        return same

    def seal(self, block: str) -> None:
        for phi in self.incomplete[block].values():
            self.add_operands(phi)
        self.sealed.add(block)


class _EdgeAwareBuilder(Builder):
    """Reads on an exceptional edge see the value from before the throwing call."""

    def __init__(self, fn: Function, cfg: CFG):
        super().__init__(fn, cfg)
        self.before_throw: dict[str, tuple[str, Value]] = {}

    def read_on_edge(self, var: str, pred: str, succ: str) -> Value:
        shadow = self.before_throw.get(pred)
        if shadow is not None and self.cfg.blocks[pred].throws_to == succ and shadow[0] == var:
            return shadow[1].resolve()
        return self.read(var, pred)


def braun_ssa(fn: Function, stats: SSAStats | None = None) -> Function:
    """SSA form of ``fn`` built on the fly, as quads with phis."""
    cfg = prepare_cfg(fn)
    b = _EdgeAwareBuilder(fn, cfg)
    succs = {name: list(block.succs) for name, block in cfg.blocks.items()}
    order = list(reversed(postorder(succs, cfg.entry)))
    done: set[str] = set()
    out: dict[str, list[tuple[Instr, list[Value], Value | None]]] = {}
    for name, _ in fn.params:
        b.write(name, cfg.entry, Value(name))

    def maybe_seal(name: str) -> None:
        if name not in b.sealed and all(p in done for p in cfg.blocks[name].preds):
            b.seal(name)

    with deep_recursion():
        for name in order:
            maybe_seal(name)
            block = cfg.blocks[name]
            emitted = []
            for i, instr in enumerate(block.instrs):
                args = [b.read(a, name) if _defined_somewhere(b, a) else Value(a)
                        for a in instr.args]
                dest_value = None
                if instr.dest is not None:
                    if block.throws_to is not None and i == len(block.instrs) - 1:
                        before = b.read(instr.dest, name) if _defined_somewhere(
                            b, instr.dest) else UNDEF
                        b.before_throw[name] = (instr.dest, before)
                    dest_value = Value(b.fresh(instr.dest))
                    b.write(instr.dest, name, dest_value)
                emitted.append((instr, args, dest_value))
            out[name] = emitted
            done.add(name)
            for s in block.succs:
                maybe_seal(s)
        for name in order:
            maybe_seal(name)

    for name, block in cfg.blocks.items():
        instrs: list[Instr] = []
        for phi in b.phis[name]:
            if phi.replaced_by is not None:
                continue
            ops = dict(phi.operands)
            preds = block.preds
            instrs.append(Instr("phi", phi.name, phi.type,
                                [ops[p].resolve().name for p in preds], [], list(preds)))
        for instr, args, dest_value in out.get(name, []):
            new = instr.copy()
            new.args = [v.resolve().name for v in args]
            if dest_value is not None:
                new.dest = dest_value.name
            instrs.append(new)
        block.instrs = instrs
    if stats is not None:
        kept = sum(1 for phis in b.phis.values() for p in phis if p.replaced_by is None)
        stats.phis += kept
        stats.per_function[fn.name] = kept
    return cfg.to_function()


def _defined_somewhere(b: Builder, var: str) -> bool:
    return var in b.types


def program_braun_ssa(program: Program, stats: SSAStats | None = None) -> Program:
    return Program({n: braun_ssa(f, stats) for n, f in program.functions.items()},
                   program.structs)
