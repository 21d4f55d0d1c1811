"""Basic blocks and the control-flow graph of a quads function.

A *leader* starts a basic block: the first instruction, every labelled instruction (a
jump may land there), and every instruction right after a terminator. A block runs from
its leader to the next one; its successors are the targets of its terminator, or, when
it does not end in one, the next block in layout order (fall-through).

``enter`` ends a block with two successors: the try body and the handler (that edge is
what keeps a catch block reachable). ``throw`` and ``ret`` end a block with none.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ssa_course.quads.ir import (
    NEVER_RETURNS,
    TERMINATORS,
    Function,
    Instr,
    Label,
    never_returns,
    returns_somewhere,
)
from ssa_course.quads.names import Names, label_names

if TYPE_CHECKING:  # networkx is imported where it is used: 0.1 s of every start-up
    import networkx as nx


@dataclass(eq=False, slots=True)
class BasicBlock:
    """A straight-line run of instructions: entered at the top, left at the bottom."""

    name: str
    instrs: list[Instr] = field(default_factory=list)
    succs: list[str] = field(default_factory=list)
    preds: list[str] = field(default_factory=list)
    labelled: bool = True  # False when the name was made up (no label in the source)
    # Set by quads.exceptions: the handler the block's last instruction may throw to (an
    # extra, *exceptional* successor; values on that edge are those before the instruction).
    throws_to: str | None = None
    line: int | None = None  # its label's source line (the statement that made the block)

    @property
    def terminator(self) -> Instr | None:
        if self.instrs and self.instrs[-1].is_terminator():
            return self.instrs[-1]
        return None


@dataclass(eq=False, slots=True)
class CFG:
    """The blocks of one function in layout order, with edges both ways."""

    function: Function
    blocks: OrderedDict[str, BasicBlock]
    entry: str

    def edges(self) -> list[tuple[str, str]]:
        return [(b.name, s) for b in self.blocks.values() for s in b.succs]

    def to_function(self, copy: bool = True) -> Function:
        """Lay the blocks out again as a flat function; add a ``jmp`` only where a block's
        fall-through successor does not come next (or the block is empty).

        The function holds copies of the blocks' instructions; ``copy=False`` hands it the
        blocks' own objects, for a caller that drops the CFG (a pass's result: no pass
        changes an instruction of the function it was given, so sharing one is safe)."""
        body: list[Instr | Label] = []
        names = list(self.blocks)
        for i, name in enumerate(names):
            block = self.blocks[name]
            body.append(Label(name, block.line))
            if copy:
                body.extend(instr.copy() for instr in block.instrs)
            else:
                body.extend(block.instrs)
            if block.terminator is None and block.succs:
                following = names[i + 1] if i + 1 < len(names) else None
                # An empty block falling into the next would merge with it when the CFG
                # is rebuilt (two labels in a row name one block): keep it apart.
                if block.succs[0] != following or not block.instrs:
                    body.append(Instr("jmp", labels=[block.succs[0]]))
            elif block.terminator is None and not block.succs and i + 1 < len(names):
                body.append(Instr("ret"))  # fell off the end of the function
        return Function(self.function.name, list(self.function.params), self.function.ret,
                        body)

    def reachable(self) -> set[str]:
        seen = {self.entry}
        work = [self.entry]
        while work:
            for s in self.blocks[work.pop()].succs:
                if s not in seen:
                    seen.add(s)
                    work.append(s)
        return seen


def find_leaders(fn: Function) -> list[int]:
    """Indices into ``fn.body`` where basic blocks start.

    A label starts a block (several labels in a row start one block); an instruction
    starts one when it is the first, or follows a terminator without a label between.
    """
    leaders: list[int] = []
    # (True at the start: the first instruction leads, as if a terminator came before it)
    after_terminator, after_label = True, False
    for i, item in enumerate(fn.body):
        if isinstance(item, Label):
            if not after_label:
                leaders.append(i)
            after_terminator, after_label = False, True
            continue
        if after_terminator and not after_label:
            leaders.append(i)
        after_terminator, after_label = item.is_terminator(), False
    return leaders


def build_cfg(fn: Function, copy: bool = True) -> CFG:
    """Split ``fn`` into basic blocks and connect them.

    The blocks hold copies of ``fn``'s instructions, so a pass may edit them in place;
    ``copy=False`` keeps ``fn``'s own instruction objects (for a reader that keys facts by
    instruction identity, as code generation does with escape analysis' arrays, and for a
    pass that only reads its CFG or copies what it changes: no pass changes the function
    it was given, ``tests/test_quads_shared_work.py``). Either way ``fn`` is left as it
    was: an instruction that must be relabelled is copied first.
    """
    # Names for blocks without a label (b0, b1, ...) and the labels phis name are each a
    # scan of the whole body: made when first needed (most bodies need neither).
    labels: Names | None = None
    phi_preds: set[str] | None = None
    # in layout order: fall-through means "the next block in this dict"
    blocks: OrderedDict[str, BasicBlock] = OrderedDict()
    alias: dict[str, str] = {}  # several labels in a row name one block
    current: BasicBlock | None = None
    instrs: list[Instr] = []  # current's instructions
    ended = True  # current's last instruction is a terminator (or there is no current)
    for item in fn.body:
        if isinstance(item, Label):
            if current is not None and not instrs and current.labelled:
                # An empty labelled block that a phi names as a predecessor stays a block
                # of its own: merged into the next label, the phi's edge from it would
                # become an edge from itself.
                if phi_preds is None:
                    phi_preds = {lb for i in fn.body if isinstance(i, Instr)
                                 and i.op == "phi" for lb in i.labels}
                if current.name not in phi_preds:
                    alias[item.name] = current.name
                    continue
            current = BasicBlock(item.name, [], [], [], line=item.line)  # (lists given:
            blocks[current.name] = current  # no default factories, 30k blocks at 10k)
            instrs, ended = current.instrs, False
            continue
        # code after a terminator (or at the very start) without a label: a new block
        # no jump can reach -- unless it is the entry -- named b0, b1, ...
        if ended:
            if labels is None:
                labels = label_names(fn)
            name = labels.fresh("b", bare=False, sep="", start=0)
            current = BasicBlock(name, [], [], [], labelled=False)
            blocks[name] = current
            instrs = current.instrs
        instrs.append(item.copy() if copy else item)
        ended = item.op in TERMINATORS
    if not blocks:
        name = label_names(fn).fresh("b", bare=False, sep="", start=0)
        blocks[name] = BasicBlock(name, labelled=False)
    # Edges: a terminator's labels, or falling through to the next block.
    names = list(blocks)
    for i, block in enumerate(blocks.values()):
        body = block.instrs
        term = body[-1] if body and body[-1].op in TERMINATORS else None  # (.terminator)
        if term is None:
            if i + 1 < len(names):
                block.succs.append(names[i + 1])
        elif term.op in ("jmp", "br", "enter"):
            succs = block.succs
            for label in term.labels:
                target = alias.get(label, label)
                if target not in succs:
                    succs.append(target)
    if alias:  # jumps to an alias label now name the block itself, and so do phis
        for block in blocks.values():  # naming it as a predecessor
            body = block.instrs
            term = body[-1] if body and body[-1].op in TERMINATORS else None
            for k, instr in enumerate(body):
                if (instr.op == "phi" or instr is term) and \
                        any(lb in alias for lb in instr.labels):
                    if not copy:  # fn's own instruction: relabel a copy
                        instr = block.instrs[k] = instr.copy()
                    instr.labels = [alias.get(lb, lb) for lb in instr.labels]
    # predecessors mirror successors (a jump to an unknown label has no block to enter;
    # the checks report it)
    for block in blocks.values():
        for s in block.succs:
            if s in blocks:
                blocks[s].preds.append(block.name)
    return CFG(fn, blocks, names[0])


def remove_unreachable(cfg: CFG) -> list[str]:
    """Delete blocks that no path from the entry reaches; returns their names."""
    live = cfg.reachable()
    # (the entry is always reached; a dead block's edges into live ones go with it)
    dead = [name for name in cfg.blocks if name not in live]
    for name in dead:
        del cfg.blocks[name]
    for block in cfg.blocks.values():
        block.preds = [p for p in block.preds if p in live]
    if dead and cfg.function.ret is not None and not returns_somewhere(
            i for b in cfg.blocks.values() for i in b.instrs):
        # The last ``ret`` was on a dead path (every live path loops forever): keep one
        # in a block no jump reaches, as Bril wants (ir.never_returns).
        cfg.blocks[NEVER_RETURNS] = BasicBlock(NEVER_RETURNS, never_returns())
    return dead


def to_networkx(cfg: CFG) -> nx.DiGraph:
    """The CFG as a networkx graph (nodes are block names, in layout order)."""
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(cfg.blocks)
    g.add_edges_from(cfg.edges())
    return g
