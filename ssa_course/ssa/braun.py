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
from ssa_course.quads.ir import UNDEFINED, Function, Instr, Program
from ssa_course.quads.names import Names
from ssa_course.runtime import deep_recursion
from ssa_course.ssa.construct import SSAStats, prepare_cfg
from ssa_course.ssa.dom import postorder
from ssa_course.tiny.types import Type


class Value:
    """An SSA value: an instruction's result, a parameter, a phi, or undefined."""

    __slots__ = ("name", "replaced_by")

    def __init__(self, name: str):
        self.name = name
        self.replaced_by: Value | None = None

    def resolve(self) -> Value:
        # a trivial phi is not deleted where it is used: it points at its replacement
        # (which may itself be replaced later), and every use follows the chain
        v = self
        while v.replaced_by is not None:
            v = v.replaced_by
        return v


class Phi(Value):
    __slots__ = ("block", "var", "operands", "users", "type")

    def __init__(self, name: str, block: str, var: str, type_: Type | None):
        super().__init__(name)
        self.block = block
        self.var = var  # the source variable it merges (x for x.3)
        self.operands: list[tuple[str, Value]] = []  # (predecessor, value)
        # the phis that read this one: when it turns out trivial, they may become so too
        self.users: set[Phi] = set()
        self.type = type_


# What a read finds when no path from the entry assigns the variable.
UNDEF = Value(UNDEFINED)


class Builder:
    """The paper's algorithm, one method per procedure of its figures (writeVariable,
    readVariable, readVariableRecursive, addPhiOperands, tryRemoveTrivialPhi, sealBlock)."""

    def __init__(self, fn: Function, cfg: CFG):
        self.fn = fn
        self.cfg = cfg
        # block -> variable -> its value at the *end* of the block so far (the paper's
        # currentDef): what a later instruction of the block, or a successor, reads
        self.current: dict[str, dict[str, Value]] = {name: {} for name in cfg.blocks}
        self.sealed: set[str] = set()  # blocks whose predecessors are all known
        # phis made in a block before it was sealed: their operands are read at sealing
        self.incomplete: dict[str, dict[str, Phi]] = {name: {} for name in cfg.blocks}
        self.phis: dict[str, list[Phi]] = {name: [] for name in cfg.blocks}
        # a variable's type is the type of its first definition (Tiny gives one per name)
        self.types: dict[str, Type | None] = dict(fn.params)
        for instr in fn.instrs():
            if instr.dest is not None:
                self.types.setdefault(instr.dest, instr.type)
        self.names = Names(self.types)  # versions x.1, x.2, ... of every variable

    def fresh(self, var: str) -> str:
        return self.names.fresh(var, bare=False)

    # -- the algorithm ---------------------------------------------------------

    def write(self, var: str, block: str, value: Value) -> None:
        # an assignment: later reads in this block (and its successors) see ``value``
        self.current[block][var] = value

    def read(self, var: str, block: str) -> Value:
        # local value numbering: the block assigned the variable itself
        value = self.current[block].get(var)
        if value is not None:
            return value.resolve()
        # global value numbering: ask the predecessors
        return self.read_recursive(var, block)

    def read_recursive(self, var: str, block: str) -> Value:
        preds = self.cfg.blocks[block].preds
        if block not in self.sealed:
            # more predecessors may come (a loop's back edge): an operandless phi now,
            # its operands read when the block is sealed
            phi = self.new_phi(var, block)
            self.incomplete[block][var] = phi
            value: Value = phi
        elif len(preds) == 1:
            # one predecessor: no merge, no phi -- its value flows straight in
            value = self.read_on_edge(var, preds[0], block)
        elif not preds:
            value = UNDEF  # the entry, and the variable is not a parameter
        else:
            phi = self.new_phi(var, block)
            self.write(var, block, phi)  # break cycles: the loop reads this phi
            value = self.add_operands(phi)
        # remember the answer: the next read in this block costs one lookup
        self.write(var, block, value)
        return value

    def read_on_edge(self, var: str, pred: str, succ: str) -> Value:
        return self.read(var, pred)

    def new_phi(self, var: str, block: str) -> Phi:
        phi = Phi(self.fresh(var), block, var, self.types.get(var))
        self.phis[block].append(phi)
        return phi

    def add_operands(self, phi: Phi) -> Value:
        # one operand per predecessor, in the predecessors' order (a phi's labels)
        for pred in self.cfg.blocks[phi.block].preds:
            value = self.read_on_edge(phi.var, pred, phi.block)
            phi.operands.append((pred, value))
            if isinstance(value, Phi):
                value.users.add(phi)
        return self.try_remove_trivial(phi)

    def try_remove_trivial(self, phi: Phi) -> Value:
        # trivial: every operand is one value ``same``, or the phi itself (a loop that
        # does not change the variable) -- then the phi is just ``same``
        same: Value | None = None
        for _, op in phi.operands:
            op = op.resolve()
            if op is same or op is phi:
                continue
            if same is not None:
                return phi  # merges at least two values: not trivial
            same = op
        if same is None:
            same = UNDEF  # only itself: unreachable, or read before any assignment
        phi.replaced_by = same
        # a phi that read this one may now read only ``same`` and itself: check it again
        for user in list(phi.users):
            if user is not phi and user.replaced_by is None:
                self.try_remove_trivial(user)
        return same

    def seal(self, block: str) -> None:
        # all predecessors are known now: complete the phis made while they were not
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
    # reverse postorder: a block comes after its predecessors, except along back edges
    # -- the order a one-pass front end emits blocks in
    order = list(reversed(postorder(succs, cfg.entry)))
    done: set[str] = set()
    # per block: each instruction with the values its operands read and the value it
    # defines (names are written out at the end, once trivial phis are all resolved)
    out: dict[str, list[tuple[Instr, list[Value], Value | None]]] = {}
    for name, _ in fn.params:  # parameters are values defined on entry
        b.write(name, cfg.entry, Value(name))

    def maybe_seal(name: str) -> None:
        if name not in b.sealed and all(p in done for p in cfg.blocks[name].preds):
            b.seal(name)

    # reads recurse through chains of predecessors: a long program needs a deep stack
    with deep_recursion():
        for name in order:
            maybe_seal(name)
            block = cfg.blocks[name]
            emitted = []
            for i, instr in enumerate(block.instrs):
                # operands first (``x = x + 1`` reads the old x), then the definition;
                # a name never assigned (a function's global) is kept as it is
                args = [b.read(a, name) if _defined_somewhere(b, a) else Value(a)
                        for a in instr.args]
                dest_value = None
                if instr.dest is not None:
                    if block.throws_to is not None and i == len(block.instrs) - 1:
                        # a throwing ``x = call f`` never writes x on the handler's edge:
                        # remember what x was before it for the handler's reads
                        before = b.read(instr.dest, name) if _defined_somewhere(
                            b, instr.dest) else UNDEF
                        b.before_throw[name] = (instr.dest, before)
                    dest_value = Value(b.fresh(instr.dest))
                    b.write(instr.dest, name, dest_value)
                emitted.append((instr, args, dest_value))
            out[name] = emitted
            done.add(name)
            for s in block.succs:  # a successor may now have all its predecessors
                maybe_seal(s)
        for name in order:  # (blocks no path reaches are sealed last)
            maybe_seal(name)

    # Write the blocks out: the surviving phis at the top, then each instruction with
    # the final names of its values (following the chains of replaced phis).
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
