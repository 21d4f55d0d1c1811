"""Build the sea of nodes from SSA quads -- how Bril programs enter the graph world.

A Bril program has no Tiny syntax tree to parse, so its graph is built from its pruned
SSA form instead (lesson 03's CFG with phis), block by block in reverse postorder with
the same peephole driver on every new node:

* a block with several predecessors becomes a Region, its phis become Phi nodes, and a
  memory Phi merges the memory state; a path not built yet (a back edge) is filled in when
  its block is done, and until then the phis assume the bottom of their type;
* ``br`` becomes an If and its projections, ``ret`` a Return, every instruction the node
  of the same meaning, with the same explicit checks as the Tiny builder;
* a call or throw inside a try region (an *exceptional edge* of the SSA CFG) feeds the
  handler's Region; ``catch`` reads the thrown value there.

The result runs through the same graph interpreter and verifier as graphs parsed from
Tiny, so the differential test covers Bril programs through the sea of nodes too.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from ssa_course import opcodes
from ssa_course.quads.ir import UNDEFINED, Function, Instr, Program
from ssa_course.quads.memory import PURE as PURE_BRIL
from ssa_course.quads.memory import SHAPES as BRIL_MEMORY
from ssa_course.runtime import paused_gc
from ssa_course.son.bril_memory import BrilEffect, BrilPure, BrilValue
from ssa_course.son.control import Never, Phi, Region, Return, Throw, goes_to
from ssa_course.son.data import Undefined, operator_node
from ssa_course.son.emit import Dead, Emitter, sweep
from ssa_course.son.endless import reaching
from ssa_course.son.graph import Node
from ssa_course.son.memory import Len, Print
from ssa_course.son.program import FunctionGraph, SeaOfNodes, lattice_type
from ssa_course.son.types import INT_BOTTOM, MEM, Type
from ssa_course.ssa.construct import to_ssa_cfg
from ssa_course.ssa.dom import postorder
from ssa_course.tiny import types as tt

# What a phi of a merge still being built waits for, path by path: memory, the thrown
# value, or the value the SSA phi instruction names for that path.
_Waiting = Instr | str  # an Instr, "mem" or "thrown"


@dataclass(slots=True)
class _Edge:
    ctrl: Node
    mem: Node
    thrown: Node | None = None  # on an exceptional edge: the thrown value




class SsaGraphBuilder(Emitter):
    def __init__(self, program: Program, fn: Function, optimize: bool = True):
        super().__init__(fn.name, [lattice_type(t) for _, t in fn.params],
                         [n for n, _ in fn.params], optimize)
        self.program = program
        self.fn = fn
        # Pruned SSA: a phi only where its variable is live, so no dead phi becomes a node.
        self.cfg = to_ssa_cfg(fn, pruned=True)
        self.ctrl, self.mem, parms = self.start_projections()
        # SSA names are defined once, so this is a plain map with no scope or journal (the
        # Tiny builder needs those because a variable's value changes as it parses).
        self.vals: dict[str, Node] = {n: p for (n, _), p in zip(fn.params, parms, strict=True)}
        # (source block, target block) -> the control and memory leaving by that edge; None
        # when the edge is dead (a folded branch).
        self.edges: dict[tuple[str, str], _Edge | None] = {}
        self.done: set[str] = set()
        # phis waiting for a path built later: (region, block, [(phi, what)])
        self.pending: list[tuple[Region, str, list[tuple[Node, _Waiting]]]] = []
        self.current = self.cfg.entry
        self.thrown: Node | None = None  # in a handler: the exception being handled

    def value(self, name: str, var: str | None = None) -> Node:
        """The node of SSA name ``name``; ``var`` names the variable of a phi argument."""
        if name == UNDEFINED:
            name = f"{UNDEFINED}:{var}"
        node = self.vals.get(name)
        if node is None:  # read on a path where it was never assigned (Bril allows it)
            shown = var if var is not None else _source_name(name)
            node = self.vals[name] = self.p(Undefined(self.g, self.start, shown))
        return node

    def build(self) -> FunctionGraph:
        cfg = self.cfg
        succs = {n: list(b.succs) for n, b in cfg.blocks.items()}
        # Reverse postorder: every block comes after its predecessors, except along back
        # edges -- the only paths a merge must wait for.
        for name in reversed(postorder(succs, cfg.entry)):
            self.block(name)
            self.done.add(name)
        self.g.line = 0  # nodes made from here on belong to no statement
        self._fill_pending()
        # Building block by block can leave control that no path from Start enters (a loop
        # whose entry branch folded): found here, dropped before the finish.
        entered = self._reached_from_start()
        dropped = self._drop_unreached_paths(entered)
        live_exits = [e for e in self.exits if e.id in entered]  # not a dead loop's Trap
        swept = dropped or len(live_exits) < len(self.exits)
        self.exits = live_exits
        self._endless_loops_get_an_exit(entered)
        ret = self.fn.ret
        fg = self.finish(self.fn.name, list(self.fn.params), ret)
        if swept and not self.optimize:  # (with peepholes on, finish() sweeps anyway)
            sweep(self.g)  # the raw graph keeps what was built, but not what nothing enters
        return fg

    # -- blocks ---------------------------------------------------------------------

    def block(self, name: str) -> None:
        block = self.cfg.blocks[name]
        self.current = name
        phis = [i for i in block.instrs if i.op == "phi"]
        body = [i for i in block.instrs if i.op != "phi"]
        # nodes remember the statement they are made for (Graph.lines): a block's merge
        # (Region, Phis) that of the statement that made the block
        self.g.line = block.line or 0
        if name != self.cfg.entry and not self._enter(name, block.preds, phis):
            return  # no live way in
        with contextlib.suppress(Dead):
            for instr in body:
                self.g.line = instr.line or (instr.pos.line if instr.pos else 0)
                if self.instr(instr, block.throws_to):
                    return
        if self.ctrl is None:
            return
        if block.succs:  # fell off the end: continue into the next block
            self._jump(name, block.succs[0])
        else:  # the end of a function without ``ret``
            self.exits.append(self.p(Return(self.g, self.ctrl, self.mem, None)))

    def _enter(self, name: str, preds: list[str], phis: list[Instr]) -> bool:
        incoming = [self.edges.get((p, name)) for p in preds]
        later = [p not in self.done for p in preds]
        # Every predecessor is built and none sends control here: the block is dead.
        if not any(later) and all(e is None for e in incoming):
            return False
        # One way in: no Region, and its phis (one argument each) are just that value.
        if len(preds) == 1:
            edge = incoming[0]
            assert edge is not None, f"the only way into {name} is built first"
            self.ctrl, self.mem = edge.ctrl, edge.mem
            self.thrown = edge.thrown
            for phi in phis:
                self.vals[phi.result()] = self.value(phi.args[0], _source_name(phi.result()))
            return True
        region = Region(self.g, None, *(e.ctrl if e else None for e in incoming))
        # Open while a predecessor is still to be built (a back edge): rules must not read a
        # Region whose paths are not all there (Region.in_progress).
        region.open = any(later)
        merged = self.p(region)  # (control nodes are not idealized while building)
        assert merged is region, "a new Region is its own peephole"
        waiting: list[tuple[Node, _Waiting]] = []

        def merge(what: _Waiting, values: list[Node | None], declared: Type,
                  label: str) -> Node:
            phi = self.p(Phi(self.g, region, *values, declared=declared, name=label))
            if region.open:
                waiting.append((phi, what))
            self.phis_to_clean.append(phi)
            return phi

        # Memory merges like a variable: a memory Phi, so loads after the merge read the state
        # of whichever path came in.
        self.mem = merge("mem", [e.mem if e else None for e in incoming], MEM, "$mem")
        self.thrown = None
        if any(e is not None and e.thrown is not None for e in incoming):
            self.thrown = merge("thrown", [e.thrown if e else None for e in incoming],
                                INT_BOTTOM, "$exc")
        for phi in phis:
            var = _source_name(phi.result())
            values = [self.value(phi.args[phi.labels.index(p)], var) if e is not None else None
                      for p, e in zip(preds, incoming, strict=True)]
            self.vals[phi.result()] = merge(phi, values, lattice_type(phi.type), phi.result())
        self.ctrl = region
        if region.open:
            self.pending.append((region, name, waiting))
        return True

    def _fill_pending(self) -> None:
        for region, name, waiting in self.pending:
            preds = self.cfg.blocks[name].preds
            # Input i of the Region is the edge from predecessor i, and so is input i of each of
            # its phis: filling both together keeps them matched.
            for i, pred in enumerate(preds, start=1):
                if region.inputs[i] is not None:
                    continue
                edge = self.edges.get((pred, name))
                if edge is None:
                    continue
                region.set_input(i, edge.ctrl)
                for phi, what in waiting:
                    value: Node | None
                    if what == "mem":
                        value = edge.mem
                    elif what == "thrown":
                        value = edge.thrown
                    else:
                        assert isinstance(what, Instr)
                        value = self.value(what.args[what.labels.index(pred)],
                                           _source_name(what.result()))
                    phi.set_input(i, value)
            # Closed: from now on the peepholes may look at it.
            region.open = False

    def _drop_unreached_paths(self, entered: set[int]) -> bool:
        """A live Region loses the paths no live control takes: the back edge of a loop
        that a constant branch skipped, or its exit into code after it. Built block by
        block, such a loop keeps only its back edge (its way in went dead when the branch
        folded); with the path gone, nothing reads it and the sweep drops it, as SCCP
        would (GCM needs every Phi's Region in a block)."""
        dropped = False
        for region in [n for n in self.g.nodes.values() if isinstance(n, Region)]:
            if region.id not in entered:
                continue
            dead = [i for i in range(len(region.inputs) - 1, 0, -1)
                    if (path := region.inputs[i]) is not None and path.id not in entered]
            for i in dead:
                for phi in [u for u in region.outputs if isinstance(u, Phi)
                            and u.inputs[0] is region]:
                    phi.remove_input(i)
                region.remove_input(i)
            dropped = dropped or bool(dead)
        return dropped

    def _endless_loops_get_an_exit(self, entered: set[int]) -> None:
        """A loop head from which no exit is reachable gets a Never exit (control never
        takes it), so that Stop still reaches the loop and what it prints."""
        # Types are not final while building: walk every control input, dead-looking or not.
        reaches_stop = reaching(list(self.exits), live_only=False)
        # Only a merge that waited for a back edge can head a loop; the others are plain joins.
        for region, _, waiting in self.pending:
            if region.id in reaches_stop or region.id not in entered:
                continue  # a loop no live path enters (a constant branch skipped it) is dead
            # The memory phi at the head is what the loop's effects chain from and back to:
            # reading it keeps them alive.
            mem = next((phi for phi, what in waiting if what == "mem"), self.mem)
            self.exits.append(self.p(Never(self.g, region, mem)))

    def _reached_from_start(self) -> set[int]:
        """Control nodes some path from Start reaches (following control forwards). A loop
        whose entry edges all went dead while building (``br`` on a constant) keeps only
        its back edge: nothing reaches it, so it gets no Never exit and the sweep drops it.
        """
        seen: set[int] = set()
        # Forwards from Start along the one control rule (goes_to), the way every walk does.
        work = [u for u in self.start.outputs if u.is_control]
        while work:
            n = work.pop()
            if n.id in seen:
                continue
            seen.add(n.id)
            work.extend(u for u in n.outputs if goes_to(n, u))
        return seen

    def _jump(self, src: str, dst: str, thrown: Node | None = None) -> None:
        self.edges[(src, dst)] = _Edge(self.live_ctrl(), self.mem, thrown)

    def _end(self, src: str, dst: str, ctrl: Node | None) -> None:
        self.edges[(src, dst)] = _Edge(ctrl, self.mem) if ctrl is not None else None

    # -- instructions -----------------------------------------------------------------

    def instr(self, i: Instr, throws_to: str | None) -> bool:
        """Build one instruction; True when it ended the block."""
        op, g = i.op, self.g
        # Operands first: an SSA name is a node already (or an Undefined for a name that is
        # never assigned on some path).
        a = [self.value(x) for x in i.args]
        result: Node | None = None
        src = self.current
        if op == "const" and isinstance(i.value, str):  # a Bril char
            result = self.p(BrilPure(g, self.start, "const", [], lattice_type(i.type),
                                     i.value))
        elif op == "const":
            value = i.constant()
            assert not isinstance(value, str)  # (chars: above)
            result = self.const(value)
        elif op == "id":
            # A copy makes no node: the destination names the same value (copy propagation for
            # free).
            result = a[0]
        elif (row := opcodes.bril_op(op)) is not None:  # a row of the opcode table
            if row.may_trap:
                result = self.divide(op, a[0], a[1] if len(a) > 1 else None, i.pos)
            else:
                result = self.p(operator_node(g, None, op, *a))
        elif op == "print":
            self.mem = self.p(Print(g, self.ctrl, self.mem, *a))
        elif op == "call":
            callee = self.program.functions[i.funcs[0]]
            result, exc, thrown = self.call(i.funcs[0], a, callee.ret, throws_to is not None)
            if throws_to is not None:
                assert exc is not None, "a call that catches has an exceptional projection"
                self.edges[(src, throws_to)] = _Edge(exc, self.mem, thrown)
        elif op == "newarr":
            elem = i.type.elem if isinstance(i.type, tt.ArrayType) else tt.INT
            result = self.new_array(a[0], elem, i.pos)
        elif op == "alen":
            result = self.p(Len(g, None, a[0]))
        elif op == "aload":
            result = self.load_element(a[0], a[1], i.result_type(), i.pos)
        elif op == "astore":
            self.store_element(a[0], a[1], a[2], i.pos)
        elif op == "newstruct":
            struct = self.program.structs[str(i.type)]
            result = self.new_struct(str(i.type), [f for f, _ in struct.fields], a)
        elif op == "getf":
            result = self.load_field(a[0], i.field_name(), i.result_type())
        elif op == "setf":
            self.store_field(a[0], i.field_name(), a[1])
        elif op in BRIL_MEMORY:  # Bril's memory and char extensions (son/bril_memory.py)
            result = self.bril_memory_op(i, a)
        elif op == "catch":
            result = self.thrown
        elif op == "checkdef":  # a Bril read that may find no value: a check, kept
            # The SSA construction found a read that may find no value: the run stops there,
            # naming the variable.
            self.guard(a[0], f"undefined variable '{i.field}'", None)
        elif op in ("leave", "nop"):
            pass
        else:
            return self.terminator(i, a, src, throws_to)
        if i.dest is not None and result is not None:
            self.vals[i.dest] = result
        return False

    def bril_memory_op(self, i: Instr, a: list[Node]) -> Node | None:
        """A pure one floats; ``alloc``/``load``/``int2char`` are pinned and kept on the
        memory chain (``keep``); ``store``/``free`` are effects (one memory class)."""
        g, op = self.g, i.op
        if op in PURE_BRIL:
            return self.p(BrilPure(g, None, op, a, lattice_type(i.type)))
        ctrl = self.live_ctrl()
        if i.dest is not None:
            value = self.p(BrilValue(g, ctrl, self.mem, op, a, lattice_type(i.type), i.pos))
            self.mem = self.p(BrilEffect(g, ctrl, self.mem, "keep", [value]))
            return value
        self.mem = self.p(BrilEffect(g, ctrl, self.mem, op, a, i.pos))
        return None

    def terminator(self, i: Instr, a: list[Node], src: str, throws_to: str | None) -> bool:
        op = i.op
        if op == "jmp":
            self._jump(src, i.labels[0])
        elif op == "enter":  # control goes into the try body; the handler is reached
            self._jump(src, i.labels[0])  # only through exceptional edges
        elif op == "br":
            # Both targets the same: a jump, whatever the condition.
            if i.labels[0] == i.labels[1]:
                self._jump(src, i.labels[0])
            else:
                # A constant condition gives a None side: that edge is recorded dead, and a
                # block only it enters is never built.
                t, f = self.branch(a[0])
                self._end(src, i.labels[0], t)
                self._end(src, i.labels[1], f)
        elif op == "ret":
            self.exits.append(self.p(Return(self.g, self.ctrl, self.mem,
                                            a[0] if a else None)))
        elif op == "throw":
            if throws_to is not None:
                self._jump(src, throws_to, a[0])
            else:
                self.exits.append(self.p(Throw(self.g, self.ctrl, self.mem, a[0])))
        else:
            from ssa_course.errors import UsageError

            raise UsageError(f"the sea of nodes does not take Bril's '{op}' operation")
        self.ctrl = None
        return True


def _source_name(ssa_name: str) -> str:
    """``x.3`` -> ``x`` (SSA versions append ``.N``)."""
    base, _, version = ssa_name.rpartition(".")
    return base if base and version.isdigit() else ssa_name


def graphs_from_quads(program: Program, optimize: bool = True) -> SeaOfNodes:
    """Every function of a quads (Bril) program as a sea-of-nodes graph."""
    with paused_gc():
        functions = {name: SsaGraphBuilder(program, fn, optimize).build()
                     for name, fn in program.functions.items()}
    return SeaOfNodes(functions, "", optimize)
