"""From quads to Julia's IRCode, and Julia's way of printing it.

:func:`build_ircode` renames variables to statement values in one walk of the dominator
tree (pruned phi placement, as in :mod:`ssa_course.ssa.construct`), with three Julia
touches:

* constants and copies are folded into operands: a literal is written in place, as
  Julia prints ``add_int(%1, 1)``, and a copy ``y = x`` makes ``y`` the same value;
* ``try``/``catch``: a catch block has no ordinary predecessors carrying values, so each
  variable live into it gets an **Upsilon** at the top of the try region and after every
  assignment inside it, and the catch block reads a **PhiC** listing those Upsilons;
* a branch on a comparison with a constant gets **PiNodes** on both sides recording what
  the branch proved (``π (%3, %3 < 10)``), and uses dominated by a side read the PiNode.

:func:`format_ir` prints with Julia's block rails; :func:`ssa_course.code_typed` is the notebook
entry point.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ssa_course import opcodes
from ssa_course.errors import Pos
from ssa_course.quads.analyses import liveness
from ssa_course.quads.cfg import CFG
from ssa_course.quads.exceptions import handler_stacks
from ssa_course.quads.ir import Function, Instr, Program, first_index
from ssa_course.ssa.construct import prepare_cfg
from ssa_course.ssa.dom import (
    dominance_frontiers,
    dominator_tree,
    fast_immediate_dominators,
)
from ssa_course.ssa.ircode import (
    STMT_TYPES,
    UNDEF,
    Argument,
    Block,
    EnterNode,
    Expr,
    GotoIfNot,
    GotoNode,
    IRCode,
    IRProgram,
    LeaveNode,
    PhiCNode,
    PhiNode,
    PiNode,
    ReturnNode,
    SSAValue,
    UpsilonNode,
    compact,
    fmt,
    is_terminator,
    set_operands,
)
from ssa_course.tiny.types import BOOL, VOID, Type

if TYPE_CHECKING:  # the drawing modules are imported where a drawing is made
    from ssa_course.viz.dot import Drawing
    from ssa_course.viz.options import DrawOptions


class _Ref:
    """A statement whose final number is not known yet (numbering happens at layout)."""

    __slots__ = ("stmt", "type", "line", "id", "src")

    def __init__(self, stmt: object, type_: Type | None, line: Pos | None,
                 src: int | None = None):
        self.stmt = stmt
        self.type = type_
        self.line = line
        self.id = 0
        self.src = src  # the source line of the statement it was made for


class _Builder:
    def __init__(self, fn: Function):
        self.fn = fn
        self.cfg: CFG = prepare_cfg(fn, exception_edges=False)
        self.stmts: dict[str, list[_Ref]] = {name: [] for name in self.cfg.blocks}
        self.src_line: int | None = None  # the statement being translated (``_Ref.src``)
        self.stacks: dict[str, list[object]] = {}
        for n, (name, _) in enumerate(fn.params, start=1):
            self.stacks[name] = [Argument(n, name)]
        self.types: dict[str, Type | None] = dict(fn.params)
        for instr in fn.instrs():
            if instr.dest is not None:
                self.types.setdefault(instr.dest, instr.type)

    def top(self, var: str) -> object:
        st = self.stacks.get(var)
        return st[-1] if st else UNDEF

    def emit(self, block: str, stmt: object, type_: Type | None = None,
             line: Pos | None = None) -> _Ref:
        ref = _Ref(stmt, type_, line, self.src_line)
        self.stmts[block].append(ref)
        return ref

    def build(self) -> IRCode:
        cfg = self.cfg
        succs = {n: list(b.succs) for n, b in cfg.blocks.items()}
        idom = fast_immediate_dominators(succs, cfg.entry)
        df = dominance_frontiers(succs, idom)
        tree = dominator_tree(idom)
        live_in = liveness(cfg).top
        stacks_at = handler_stacks(cfg)

        # Values live into a catch block travel through Upsilon/PhiC, not phis.
        handlers = {b.terminator.labels[1] for b in cfg.blocks.values()
                    if b.terminator is not None and b.terminator.op == "enter"}
        catch_vars: dict[str, list[str]] = {}
        for h in handlers:
            first = cfg.blocks[h].instrs[0] if cfg.blocks[h].instrs else None
            exc = first.dest if first is not None and first.op == "catch" else None
            catch_vars[h] = sorted(v for v in live_in[h] if v != exc and v in self.types)
        upsilons: dict[tuple[str, str], list[_Ref]] = {}

        defsites: dict[str, set[str]] = {name: {cfg.entry} for name, _ in self.fn.params}
        for name, block in cfg.blocks.items():
            for instr in block.instrs:
                if instr.dest is not None:
                    defsites.setdefault(instr.dest, set()).add(name)
        phis: dict[str, list[tuple[str, PhiNode, _Ref]]] = {n: [] for n in cfg.blocks}
        for var in sorted(defsites):
            for b in sorted(_phi_blocks(df, defsites[var], var, live_in, catch_vars)):
                preds = cfg.blocks[b].preds
                self.src_line = cfg.blocks[b].line  # a phi: the statement of its merge
                # its edges are block numbers, known at layout: until then value i
                # is the one from quads block preds[i]
                node = PhiNode([], [UNDEF] * len(preds))
                phis[b].append((var, node, self.emit(b, node, self.types.get(var))))

        enters: dict[str, _Ref] = {}
        slots: dict[str, dict[str, int]] = {}  # block -> pred -> its phi value's index
        pushed: dict[str, list[str]] = {}
        work: list[tuple[str, str]] = [("enter", cfg.entry)]
        while work:
            action, name = work.pop()
            if action == "exit":
                for var in reversed(pushed.pop(name)):
                    self.stacks[var].pop()
                continue
            mine: list[str] = []

            def define(var: str, value: object, region: tuple[str, ...], at: str,
                       mine: list[str]) -> None:
                self.stacks.setdefault(var, []).append(value)
                mine.append(var)
                for h in region:  # every enclosing try whose handler reads var
                    if var in catch_vars.get(h, ()):
                        ups = self.emit(at, UpsilonNode(value))
                        upsilons.setdefault((h, var), []).append(ups)

            for var, _, ref in phis[name]:
                self.stacks.setdefault(var, []).append(ref)
                mine.append(var)
            self.src_line = self.cfg.blocks[name].line
            for var in catch_vars.get(name, ()):
                phic = PhiCNode([])
                ref = self.emit(name, phic, self.types.get(var))
                phic.values = upsilons.setdefault((name, var), [])  # filled as we go
                self.stacks.setdefault(var, []).append(ref)
                mine.append(var)
            region = stacks_at.get(name, ())
            for instr in self.cfg.blocks[name].instrs:
                self.src_line = instr.line
                if instr.op == "leave":
                    self.emit(name, LeaveNode(enters[region[-1]]))
                    region = region[:-1]
                    continue
                if instr.op == "enter":
                    handler = instr.labels[1]
                    for var in catch_vars.get(handler, ()):
                        ups = self.emit(name, UpsilonNode(self.top(var)))
                        upsilons.setdefault((handler, var), []).append(ups)
                    enters[handler] = self.emit(name, ("enter", instr))
                    continue
                value = self.translate(name, instr)
                if instr.dest is not None:
                    define(instr.dest, value, region, name, mine)
            for s in self.cfg.blocks[name].succs:
                if phis[s] and s not in slots:  # once per block, not once per edge
                    slots[s] = first_index(self.cfg.blocks[s].preds)
                for var, node, _ in phis[s]:
                    node.values[slots[s][name]] = self.top(var)
            pushed[name] = mine
            work.append(("exit", name))
            for child in reversed(tree.get(name, [])):
                work.append(("enter", child))
        return self.layout(idom)

    def translate(self, block: str, instr: Instr) -> object:
        """Emit the statement(s) for one quad; returns the value it defines, if any."""
        args = [self.top(a) for a in instr.args]
        op = instr.op
        if op == "const":
            return instr.value
        if op == "id":
            return args[0]
        if op == "catch":
            return self.emit(block, Expr("the_exception"), instr.type, instr.pos)
        if op in ("jmp", "br", "ret", "nop"):
            if op == "ret":
                self.emit(block, ReturnNode(args[0] if args else None))
            elif op != "nop":
                self.emit(block, (op, instr, args))  # resolved at layout
            return None
        func = instr.funcs[0] if instr.funcs else None
        ty = instr.type if instr.dest is not None else VOID
        # ``at``: where an instruction that cannot fail (a struct literal) was written;
        # listings show it, no error ever reports it
        where = instr.pos if instr.pos is not None else instr.at
        return self.emit(block, Expr(op, args, func, instr.field), ty, where)

    # -- layout: block numbers, statement numbers, gotos --------------------------

    def layout(self, idom: dict[Any, Any]) -> IRCode:
        cfg = self.cfg
        names = list(cfg.blocks)
        order: list[tuple[str, str | None]] = []  # (quads block, or a synthetic goto target)
        for i, name in enumerate(names):
            order.append((name, None))
            term = cfg.blocks[name].terminator
            following = names[i + 1] if i + 1 < len(names) else None
            if term is not None and term.op in ("br", "enter") and not _one_target(term):
                through = term.labels[0]
                if through != following:
                    order.append((name, through))  # a block holding just "goto #through"
        number: dict[str, int] = {}
        synthetic: dict[tuple[str, str], int] = {}
        for k, (name, target) in enumerate(order, start=1):
            if target is None:
                number[name] = k
            else:
                synthetic[(name, target)] = k

        def edge_from(pred: str, succ: str) -> int:
            return synthetic.get((pred, succ), number[pred])

        ir = IRCode(self.fn.name, [n for n, _ in self.fn.params],
                    [t for _, t in self.fn.params], self.fn.ret)
        refs: list[_Ref] = []
        block_stmts: list[list[_Ref]] = []
        for k, (name, target) in enumerate(order, start=1):
            out: list[_Ref] = []
            if target is not None:
                term = cfg.blocks[name].terminator
                out.append(_Ref(GotoNode(number[target]), None, None,
                                term.line if term is not None else None))
            else:
                nxt = order[k][0] if k < len(order) and order[k][1] is None else None
                for ref in self.stmts[name]:
                    s = ref.stmt
                    if isinstance(s, tuple) and s[0] == "enter":
                        ref.stmt = EnterNode(number[s[1].labels[1]])
                    elif isinstance(s, tuple) and (s[0] == "jmp" or _one_target(s[1])):
                        # (``br c .L .L`` is one edge: a goto, so no block is entered
                        # twice from one predecessor and every phi lists the edge once)
                        dest = s[1].labels[0]
                        if dest == nxt and k < len(order) and order[k][0] == dest:
                            continue  # falls through
                        ref.stmt = GotoNode(number[dest])
                    elif isinstance(s, tuple) and s[0] == "br":
                        ref.stmt = GotoIfNot(s[2][0], number[s[1].labels[1]])
                    elif isinstance(s, PhiNode):
                        s.edges = [edge_from(p, name) for p in cfg.blocks[name].preds]
                    out.append(ref)
                if not out and k < len(order):
                    # no empty blocks: an explicit goto keeps the block a block
                    out.append(_Ref(GotoNode(k + 1), None, None, cfg.blocks[name].line))
            block_stmts.append(out)
            refs.extend(out)
        for i, ref in enumerate(refs, start=1):
            ref.id = i

        def operand(v: object) -> object:
            return SSAValue(v.id) if isinstance(v, _Ref) else v

        for out in block_stmts:
            start = len(ir.stmts) + 1
            for ref in out:
                s = ref.stmt
                if isinstance(s, STMT_TYPES):  # (a tuple: a jump resolved at layout)
                    set_operands(s, [operand(v) for v in s.operands()])
                ir.stmts.append(s)
                ir.types.append(ref.type)
                ir.lines.append(ref.line)
                ir.src.append(ref.src)
                ir.flags.append(0)
            ir.blocks.append(Block(start, len(ir.stmts)))
        # edges from the terminators (or fall-through)
        for k, blk in enumerate(ir.blocks, start=1):
            last = ir.stmts[blk.stop - 1] if blk.stop >= blk.start else None
            succs: list[int] = []
            if isinstance(last, GotoNode):
                succs = [last.label]
            elif isinstance(last, GotoIfNot):
                succs = list(dict.fromkeys([k + 1, last.dest]))  # one edge if both agree
            elif isinstance(last, EnterNode):
                succs = [k + 1, last.catch_dest]
            elif last is None or not is_terminator(last):
                succs = [k + 1] if k < len(ir.blocks) else []
            blk.succs = succs
            for s in succs:
                ir.blocks[s - 1].preds.append(k)
        insert_pi_nodes(ir)
        return compact(ir)


def _one_target(term: Instr) -> bool:
    """A ``br`` whose two labels name the same block: an unconditional jump."""
    return term.op == "br" and len(set(term.labels)) == 1


def insert_pi_nodes(ir: IRCode) -> int:
    """After ``goto #F if not (x < c)``: ``π (x, x < c)`` at the top of the fall-through
    block and ``π (x, x >= c)`` in ``#F`` (each only when that block has one
    predecessor); uses of ``x`` dominated by a PiNode read it instead. Returns how many.

    The uses are rewritten in one walk of the dominator tree that keeps, per value, a
    stack of the PiNodes in force -- the same shape as SSA renaming -- so the cost is
    linear in the size of the IR.
    """
    succs = {k: list(b.succs) for k, b in enumerate(ir.blocks, start=1)}
    idom = fast_immediate_dominators(succs, 1)
    # block -> the (value, PiNode) pairs placed at its top
    at_block: dict[int, list[tuple[object, SSAValue]]] = {}
    # 1. place: every block ending in a test of ``x <op> constant``
    for k, blk in enumerate(ir.blocks, start=1):
        last = ir.stmts[blk.stop - 1] if blk.stop >= blk.start else None
        if not isinstance(last, GotoIfNot) or not isinstance(last.cond, SSAValue):
            continue
        cmp = ir.stmts[last.cond.id - 1]
        rel_op = opcodes.bril_op(cmp.head) if isinstance(cmp, Expr) else None
        # a comparison the table can mirror and negate (lt, eq, ...)
        if rel_op is None or rel_op.negation is None or rel_op.mirror is None \
                or len(cmp.args) != 2:
            continue
        # written either way round (``c < x`` is ``x > c``): turn it to ``x <op> c``
        a, b = cmp.args
        row: opcodes.Opcode | None  # the comparison as ``x <op> c``
        if isinstance(b, int) and not isinstance(b, bool) and isinstance(a, SSAValue | Argument):
            x, row, c = a, rel_op, b
        elif isinstance(a, int) and not isinstance(a, bool) and isinstance(b, SSAValue | Argument):
            x, row, c = b, opcodes.get(rel_op.mirror), a
        else:
            continue
        if row is None or row.negation is None:
            continue  # (every mirror in the table negates too)
        if last.dest == k + 1:
            continue  # both outcomes reach one block: nothing is proved there
        # Julia's GotoIfNot falls through when the test holds: the next block learns
        # the relation, the jump target its negation
        negation = opcodes.get(row.negation)
        for target, rel in ((k + 1, row), (last.dest, negation)):
            if rel is None or rel.symbol is None:
                continue
            if target > len(ir.blocks) or ir.blocks[target - 1].preds != [k]:
                continue  # another way in: there the relation need not hold
            if target not in idom:
                continue
            tb = ir.blocks[target - 1]
            at = tb.start
            while at <= tb.stop and isinstance(ir.stmts[at - 1], PhiNode):
                at += 1
            if at > tb.stop:
                continue  # nothing after the phis to put the PiNode before
            # (the PiNode has x's type; its value is x, only known to be narrower)
            pi = ir.insert_node(at, PiNode(x, rel.symbol, c), ir.type_of(x))
            at_block.setdefault(target, []).append((x, pi))
    # 2. rename the uses that the PiNodes' blocks dominate
    if at_block:
        _rename_to_pis(ir, idom, at_block)
    return sum(len(v) for v in at_block.values())


def all_indices(items: list[Any]) -> dict[Any, Any]:
    """Every position of each item in ``items``."""
    index: dict[Any, Any] = {}
    for i, item in enumerate(items):
        index.setdefault(item, []).append(i)
    return index


def _rename_to_pis(ir: IRCode, idom: dict[Any, Any], at_block: dict[Any, Any]) -> None:
    tree = dominator_tree(idom)
    edge_slots: dict[int, dict[Any, Any]] = {}  # id(phi) -> edge -> positions
    # value -> the PiNodes narrowing it on the way down the dominator tree, innermost last
    active: dict[object, list[SSAValue]] = {}
    work: list[tuple[str, int]] = [("enter", 1)]  # ("exit", k) pops what k pushed
    while work:
        action, k = work.pop()
        if action == "exit":
            for x, _ in at_block.get(k, ()):
                active[x].pop()
            continue
        for x, pi in at_block.get(k, ()):
            outer = active.get(x)
            if outer:  # a PiNode inside another's region narrows the narrower value
                pi_node = ir.stmt_of(pi)
                assert isinstance(pi_node, PiNode)  # at_block holds PiNodes' values only
                pi_node.val = outer[-1]
            active.setdefault(x, []).append(pi)
        blk = ir.blocks[k - 1]
        for i in range(blk.start, blk.stop + 1):
            s = ir.stmts[i - 1]
            if s is None or isinstance(s, SSAValue | Argument | int | PhiNode):
                continue
            ops = s.operands()
            if any(active.get(v) for v in ops if isinstance(v, SSAValue | Argument)):
                set_operands(s, [active[v][-1] if isinstance(v, SSAValue | Argument)
                                 and active.get(v) else v for v in ops])
        for succ in blk.succs:  # phi operands flowing out of k
            sb = ir.blocks[succ - 1]
            for i in range(sb.start, sb.stop + 1):
                phi = ir.stmts[i - 1]
                if not isinstance(phi, PhiNode):
                    break
                # only the values on edges from k (rebuilding the whole list per edge is
                # quadratic on a join of thousands of edges)
                if id(phi) not in edge_slots:
                    edge_slots[id(phi)] = all_indices(phi.edges)
                    phi.values = list(phi.values)  # its own list, as before (no aliasing)
                for j in edge_slots[id(phi)].get(k, ()):
                    v = phi.values[j]
                    if isinstance(v, SSAValue | Argument) and active.get(v):
                        phi.values[j] = active[v][-1]
        work.append(("exit", k))
        for child in reversed(tree.get(k, [])):
            work.append(("enter", child))


def build_ircode(fn: Function) -> IRCode:
    """Julia-style IRCode of one quads function (compacted)."""
    return _Builder(fn).build()


def _phi_blocks(df: dict[Any, Any], defs: set[str], var: str, live_in: dict[Any, Any],
                catch_vars: dict[Any, Any]) -> set[str]:
    """Where ``var`` needs a phi: the iterated dominance frontier of its definitions,
    pruned as it grows (Cytron et al. with liveness): a frontier block where ``var`` is dead
    gets no phi and, being no definition, is not followed further -- following it would
    visit every join below it, quadratic on an else-if chain. A catch block whose PhiC
    defines ``var`` gets no phi but is followed (the PhiC is a definition)."""
    placed: set[str] = set()
    seen: set[str] = set()  # frontier blocks already decided (each is looked at once)
    work = list(defs)
    while work:
        for f in df.get(work.pop(), ()):
            if f in seen:
                continue
            seen.add(f)
            if var in catch_vars.get(f, ()):
                work.append(f)
            elif var in live_in[f]:
                placed.add(f)
                work.append(f)
    return placed


def program_ircode(program: Program) -> IRProgram:
    """Every function as IRCode, with the struct declarations running them needs."""
    return IRProgram({name: build_ircode(fn) for name, fn in program.functions.items()},
                     program.structs)


# ---------------------------------------------------------------- the printer


def _stmt_text(s: object) -> str:
    if isinstance(s, Expr):
        args = ", ".join(fmt(a) for a in s.args)
        if s.head == "call":
            return f"invoke {s.func}({args})"
        if s.field is not None:
            return f"{s.head}({args}, :{s.field})"
        return f"{s.head}({args})"
    if isinstance(s, PhiNode):
        pairs = ", ".join(f"#{e} => {fmt(v)}" for e, v in zip(s.edges, s.values, strict=True))
        return f"φ ({pairs})"
    if isinstance(s, PiNode):
        return f"π ({fmt(s.val)}, {fmt(s.val)} {s.op} {s.const})"
    if isinstance(s, UpsilonNode):
        return f"ϒ ({fmt(s.val)})"
    if isinstance(s, PhiCNode):
        return f"φᶜ ({', '.join(fmt(v) for v in s.values)})"
    if isinstance(s, GotoNode):
        return f"goto #{s.label}"
    if isinstance(s, GotoIfNot):
        return f"goto #{s.dest} if not {fmt(s.cond)}"
    if isinstance(s, ReturnNode):
        return "return" if s.val is None else f"return {fmt(s.val)}"
    if isinstance(s, EnterNode):
        return f"enter #{s.catch_dest}"
    if isinstance(s, LeaveNode):
        return f"leave {fmt(s.enter)}"
    if s is None:
        return "nothing"
    return fmt(s)


def format_ir(ir: IRCode) -> str:
    """Julia's ``code_typed`` look: block rails, ``%n = stmt::Type``, ``┄`` at merges."""
    nb = len(ir.blocks)
    w = len(str(nb))
    vw = len(f"%{len(ir.stmts)} = ")
    head = ", ".join(f"{n}::{t}" for n, t in zip(ir.argnames, ir.argtypes, strict=True))
    lines = [f"{ir.name}({head})" + (f" => {ir.ret}" if ir.ret is not None else "")]
    for k, blk in enumerate(ir.blocks, start=1):
        count = blk.stop - blk.start + 1
        for j, i in enumerate(range(blk.start, blk.stop + 1)):
            s = ir.stmts[i - 1]
            ty = ir.types[i - 1]
            has_value = ty is not None and ty != VOID and not isinstance(
                s, GotoNode | GotoIfNot | ReturnNode | UpsilonNode | LeaveNode) and (
                not isinstance(s, Expr) or s.head not in ("throw", "print", "astore", "setf",
                                                          "checkdef"))
            # An Upsilon has no value of its own, but the PhiC that reads its slot names
            # it by number, so it is numbered like the enter a leave names.
            value = f"%{i}".ljust(vw - 3) + " = " if has_value or isinstance(
                s, EnterNode | UpsilonNode) else ""
            text = value.ljust(vw) + _stmt_text(s)
            if has_value:
                text += f"::{ty}"
            if j == 0:
                rail = f"{k:>{w}} {'┄' if len(blk.preds) > 1 else '─'} "
            elif j == count - 1:
                rail = "└" + "─" * (w + 1) + " "
            else:
                rail = "│" + " " * (w + 2)
            lines.append(rail + text)
        if count == 0:
            lines.append(f"{k:>{w}} {'┄' if len(blk.preds) > 1 else '─'} " + " " * vw
                         + "nothing")
    return "\n".join(lines) + "\n"


def ir_graph(ir: IRCode, prefix: str = "", cluster: str | None = None
             ) -> tuple[list[Any], list[Any]]:
    """Nodes and edges of one function's IRCode blocks, each listing its statements as
    :func:`format_ir` does (``prefix`` keeps ids unique when functions share a picture)."""
    from ssa_course.viz.dot import GraphEdge, GraphNode

    text = format_ir(ir).split("\n")[1:]
    rail = len(str(len(ir.blocks))) + 3
    nodes: list[GraphNode] = []
    pos = 0
    for k, blk in enumerate(ir.blocks, start=1):
        count = max(1, blk.stop - blk.start + 1)
        lines = tuple(line[rail:] for line in text[pos:pos + count])
        pos += count
        nodes.append(GraphNode(f"{prefix}b{k}", header=f"#{k}", lines=lines,
                               emphasis=k == 1, cluster=cluster, kind="block"))
    edges: list[GraphEdge] = []
    for k, blk in enumerate(ir.blocks, start=1):
        last = ir.stmts[blk.stop - 1] if blk.stop >= blk.start else None
        for s in blk.succs:
            label, style = "", "solid"
            if isinstance(last, GotoIfNot):
                label = "F" if s == last.dest else "T"
            if isinstance(last, EnterNode) and s == last.catch_dest:
                label, style = "catch", "dashed"
            edges.append(GraphEdge(f"{prefix}b{k}", f"{prefix}b{s}", label, style,
                                   kind="flow"))
    return nodes, edges


def ir_to_dot(ir: IRCode, options: DrawOptions | None = None) -> str:
    """DOT of one function's IRCode blocks; ``options`` (a
    :class:`~ssa_course.viz.options.DrawOptions`) may narrow it to the blocks around one
    (``around="3"`` or ``"#3"``) or to a budget of blocks."""
    return program_ir_dot({ir.name: ir}, f"{ir.name} (IRCode)", options)


def program_ir_dot(program: Mapping[str, IRCode], title: str | None = None,
                   options: DrawOptions | None = None) -> str:
    """DOT of the functions' IRCode (name -> IRCode) that ``options`` picks (by default
    every function unless they are over the node budget together, then ``main``), one
    framed cluster per function; ``around`` names a block (``3`` or ``#3``) of the first."""
    from ssa_course.viz.options import options_or_default
    from ssa_course.viz.select import functions_to_dot

    graphs = {fn: (lambda prefix, cluster, ir=ir: ir_graph(ir, prefix, cluster))
              for fn, ir in program.items()}
    return functions_to_dot(graphs, {n: len(ir.blocks) for n, ir in program.items()}, title,
                            options_or_default(options),
                            cluster_title=lambda fn: f"{fn} (IRCode)",
                            prefix=lambda fn: f"{fn}/", name="ircode",
                            around_prefix=lambda fn: f"{fn}/b")


class TypedCode:
    """What :func:`code_typed` returns: prints like Julia's, draws as a CFG."""

    def __init__(self, ir: IRCode):
        self.ir = ir

    def __str__(self) -> str:
        return format_ir(self.ir)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(format_ir(self.ir))}</pre>"

    def draw(self) -> Drawing:
        from ssa_course.viz.dot import Drawing

        return Drawing(ir_to_dot(self.ir))


__all__ = ["BOOL", "TypedCode", "build_ircode", "format_ir", "ir_to_dot", "program_ir_dot",
           "program_ircode"]
