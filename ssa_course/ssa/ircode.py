"""Julia-style IR: a flat vector of statements where a statement's position *is* its value.

``%7`` is the value of statement 7; there are no variable names at all. Basic blocks are
ranges of statement positions with predecessor and successor lists. The data structure
follows Julia's ``IRCode``:

* **the insertion buffer** -- :meth:`IRCode.insert_node` does not shift the vector (that
  would renumber every value); it appends to a side buffer and returns a *fresh* value
  numbered after the end of the vector, usable at once;
* **deleting** a statement sets it to ``None`` ("nothing"); **replacing all uses** of
  ``%i`` by ``v`` is setting statement ``i`` to the bare value ``v`` (a trivial copy);
* :func:`compact` does the work once: it places inserted statements, drops nothings,
  copies and dead blocks, and renumbers every use; :class:`IncrementalCompact` does the
  same lazily while a pass walks the statements.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ssa_course.errors import Pos
from ssa_course.tiny.types import Type

# ---------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class SSAValue:
    """The value of statement ``id`` (1-based)."""

    id: int

    def __str__(self) -> str:
        return f"%{self.id}"


@dataclass(frozen=True, slots=True)
class OldSSAValue:
    """During incremental compaction: a statement of the *old* numbering not placed yet."""

    id: int

    def __str__(self) -> str:
        return f"%old{self.id}"


@dataclass(frozen=True, slots=True)
class Argument:
    """The ``n``-th argument of the function (1-based), printed by name."""

    n: int
    name: str

    def __str__(self) -> str:
        return self.name


Operand = SSAValue | OldSSAValue | Argument | int | bool
UNDEF = "#undef"  # an operand with no value on some path (printed like Julia does)


def fmt(v: object) -> str:
    if v is True:
        return "true"
    if v is False:
        return "false"
    return str(v)


# ---------------------------------------------------------------- statements


@dataclass(eq=False, slots=True)
class Expr:
    """An operation (``add``, ``call``, ``print``, ``aload``...) on operands."""

    head: str
    args: list[Any] = field(default_factory=list)
    func: str | None = None  # the callee of ``call``
    field: str | None = None  # the field of ``getf``/``setf``

    def operands(self) -> list[Any]:
        return self.args


@dataclass(eq=False, slots=True)
class PhiNode:
    """Merge: takes ``values[i]`` when control arrives from block ``edges[i]``."""

    edges: list[int]
    values: list[Any]

    def operands(self) -> list[Any]:
        return self.values


@dataclass(eq=False, slots=True)
class PiNode:
    """``val``, known to satisfy ``val <op> const`` where this statement is dominated."""

    val: object
    op: str
    const: int

    def operands(self) -> list[Any]:
        return [self.val]


@dataclass(eq=False, slots=True)
class UpsilonNode:
    """A store into the hidden slot of the PhiC nodes that list this statement."""

    val: object

    def operands(self) -> list[Any]:
        return [self.val]


@dataclass(eq=False, slots=True)
class PhiCNode:
    """In a catch block: the value of the most recently executed of ``values`` (Upsilons)."""

    values: list[Any]

    def operands(self) -> list[Any]:
        return self.values


@dataclass(eq=False, slots=True)
class GotoNode:
    label: int

    def operands(self) -> list[Any]:
        return []


@dataclass(eq=False, slots=True)
class GotoIfNot:
    cond: object
    dest: int

    def operands(self) -> list[Any]:
        return [self.cond]


@dataclass(eq=False, slots=True)
class ReturnNode:
    val: object = None

    def operands(self) -> list[Any]:
        return [] if self.val is None else [self.val]


@dataclass(eq=False, slots=True)
class EnterNode:
    """Start of a try region: push a handler that continues at block ``catch_dest``."""

    catch_dest: int

    def operands(self) -> list[Any]:
        return []


@dataclass(eq=False, slots=True)
class LeaveNode:
    """End of a try region: pop the handler pushed by ``enter`` (an SSAValue)."""

    enter: object

    def operands(self) -> list[Any]:
        return [self.enter]


Stmt = (Expr | PhiNode | PiNode | UpsilonNode | PhiCNode | GotoNode | GotoIfNot | ReturnNode
        | EnterNode | LeaveNode)
STMT_TYPES = (Expr, PhiNode, PiNode, UpsilonNode, PhiCNode, GotoNode, GotoIfNot, ReturnNode,
              EnterNode, LeaveNode)
# What one slot of the statement vector holds: a statement, a bare value standing for a
# trivial copy (``UNDEF`` too) until compaction, or None ("nothing": deleted).
Slot = Stmt | Operand | str | None
TERMINATORS = (GotoNode, GotoIfNot, ReturnNode, EnterNode)


def is_terminator(stmt: object) -> bool:
    return isinstance(stmt, TERMINATORS) or (isinstance(stmt, Expr) and stmt.head == "throw")


def set_operands(stmt: object, new: list[Any]) -> None:
    """Replace a statement's operands (in the order :meth:`operands` lists them)."""
    if isinstance(stmt, Expr):
        stmt.args = list(new)
    elif isinstance(stmt, PhiNode | PhiCNode):
        stmt.values = list(new)
    elif isinstance(stmt, PiNode | UpsilonNode):
        stmt.val = new[0]
    elif isinstance(stmt, GotoIfNot):
        stmt.cond = new[0]
    elif isinstance(stmt, ReturnNode):
        stmt.val = new[0] if new else None
    elif isinstance(stmt, LeaveNode):
        stmt.enter = new[0]


# ---------------------------------------------------------------- the IR


@dataclass(eq=False, slots=True)
class Block:
    """Statements ``start..stop`` (inclusive, 1-based), and the block numbers around it."""

    start: int
    stop: int
    preds: list[int] = field(default_factory=list)
    succs: list[int] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class NewNode:
    pos: int
    attach_after: bool
    stmt: Slot
    type: Type | None
    line: Pos | None


class IRProgram(dict[Any, Any]):
    """A whole program in IRCode: function name -> :class:`IRCode`, plus ``structs`` (the
    struct declarations, name -> fields), so it carries everything running it needs."""

    def __init__(self, functions: dict[str, IRCode] | None = None,
                 structs: dict[str, Any] | None = None):
        super().__init__(functions or {})
        self.structs = structs or {}


@dataclass(eq=False)
class IRCode:
    """One function in Julia's flat SSA form."""

    name: str
    argnames: list[str]
    argtypes: list[Type]
    ret: Type | None
    # index 0 is statement %1; Any, not Slot: passes read the fields of the kind they matched
    stmts: list[Any] = field(default_factory=list)
    types: list[Type | None] = field(default_factory=list)
    lines: list[Pos | None] = field(default_factory=list)  # source positions (for errors)
    # per statement: the source line of the statement it was made for (the lines face,
    # :mod:`ssa_course.srclines`), None when it has none; may be shorter than ``stmts``
    src: list[Any] = field(default_factory=list)
    flags: list[Any] = field(default_factory=list)  # per statement: flag bits (FLAG_NONE)
    blocks: list[Block] = field(default_factory=list)  # index 0 is block #1
    new_nodes: list[NewNode] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.stmts)

    def __getitem__(self, v: SSAValue) -> Slot:
        stmt: Slot = self.stmts[v.id - 1]
        return stmt

    def __setitem__(self, v: SSAValue, stmt: Slot) -> None:
        self.stmts[v.id - 1] = stmt

    def block_of(self, idx: int) -> int:
        """The (1-based) block number holding statement ``idx`` (binary search)."""
        lo, hi = 0, len(self.blocks) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.blocks[mid].start <= idx:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    def insert_node(self, pos: int, stmt: Slot, type_: Type | None = None,
                    attach_after: bool = False, line: Pos | None = None) -> SSAValue:
        """Queue ``stmt`` before (or after) statement ``pos``; its value is usable now."""
        # Julia's trick: inserting into the middle of the vector would renumber every
        # later value, so new statements wait in a buffer, numbered past the end, until
        # ``compact`` places them and renumbers everything once
        self.new_nodes.append(NewNode(pos, attach_after, stmt, type_, line))
        return SSAValue(len(self.stmts) + len(self.new_nodes))

    def delete(self, v: SSAValue) -> None:
        """Turn statement ``v`` into nothing (its uses must be gone or replaced)."""
        self.stmts[v.id - 1] = None  # (the slot stays: other ids do not move until compact)

    def replace_uses(self, v: SSAValue, by: Slot) -> None:
        """Every use of ``v`` will read ``by`` after compaction (a trivial copy)."""
        # no walk over the uses now: the slot itself becomes the value, and compaction
        # reads through such copies when it renumbers operands
        self.stmts[v.id - 1] = by

    def stmt_of(self, v: SSAValue) -> Slot:
        """The statement of a value, whether in the vector or in the insertion buffer."""
        if v.id <= len(self.stmts):
            stmt: Slot = self.stmts[v.id - 1]
            return stmt
        return self.new_nodes[v.id - len(self.stmts) - 1].stmt

    def type_of(self, v: object) -> Type | None:
        from ssa_course.tiny.types import BOOL, INT

        if isinstance(v, SSAValue):
            if v.id <= len(self.stmts):
                return self.types[v.id - 1]
            return self.new_nodes[v.id - len(self.stmts) - 1].type
        if isinstance(v, Argument):
            return self.argtypes[v.n - 1]
        if isinstance(v, bool):
            return BOOL
        if isinstance(v, int):
            return INT
        return None


FLAG_NONE = 0  # no statement carries a flag here (Julia's IRCode sets effect bits)


def _is_value(x: object) -> bool:
    """A bare operand standing as a statement: a trivial copy."""
    return isinstance(x, SSAValue | Argument | bool | int)


# ---------------------------------------------------------------- compaction


def _reachable_blocks(ir: IRCode) -> list[bool]:
    live = [False] * len(ir.blocks)
    if not ir.blocks:
        return live
    live[0] = True
    work = [1]
    while work:
        b = work.pop()
        for s in ir.blocks[b - 1].succs:
            if not live[s - 1]:
                live[s - 1] = True
                work.append(s)
    return live


def compact(ir: IRCode) -> IRCode:
    """A new IRCode: insertions placed, nothings/copies/dead blocks gone, uses renumbered."""
    n_old = len(ir.stmts)
    # old statement id -> the ids of the buffered insertions placed before / after it
    before: dict[int, list[int]] = {}
    after: dict[int, list[int]] = {}
    for k, node in enumerate(ir.new_nodes):
        (after if node.attach_after else before).setdefault(node.pos, []).append(n_old + k + 1)

    def stmt(i: int) -> Slot:
        return ir.stmts[i - 1] if i <= n_old else ir.new_nodes[i - n_old - 1].stmt

    def type_(i: int) -> Type | None:
        return ir.types[i - 1] if i <= n_old else ir.new_nodes[i - n_old - 1].type

    def line(i: int) -> Pos | None:
        return ir.lines[i - 1] if i <= n_old else ir.new_nodes[i - n_old - 1].line

    def src(i: int) -> int | None:
        if i <= n_old:
            return ir.src[i - 1] if i <= len(ir.src) else None
        pos = ir.new_nodes[i - n_old - 1].line
        return pos.line if pos is not None else None

    def flag(i: int) -> int:
        return ir.flags[i - 1] if i <= n_old else FLAG_NONE

    live = _reachable_blocks(ir)
    block_map: dict[int, int] = {}  # old block number -> new one (dead blocks dropped)
    for b, alive in enumerate(live, start=1):
        if alive:
            block_map[b] = len(block_map) + 1

    # Pass 1: the order of the new statement vector and where each old value went.
    order: list[list[int]] = []  # per new block: old ids in their new order
    value_map: dict[int, SSAValue | tuple[str, Slot]] = {}  # old id -> new SSAValue, or
    # ("copy", the operand a trivial copy stands for)
    count = 0
    for b, block in enumerate(ir.blocks, start=1):
        if not live[b - 1]:
            continue
        ids: list[int] = []
        for i in range(block.start, block.stop + 1):
            ids.extend(before.get(i, []))
            ids.append(i)
            ids.extend(after.get(i, []))
        kept: list[int] = []
        for i in ids:
            s = stmt(i)
            if s is None:
                continue
            if _is_value(s) or isinstance(s, OldSSAValue):
                value_map[i] = ("copy", s)
                continue
            count += 1
            value_map[i] = SSAValue(count)
            kept.append(i)
        order.append(kept)

    # Pass 2: write the kept statements with every operand renumbered (a use of a
    # trivial copy reads what the copy stands for, through chains of them).
    def resolve(v: Slot, depth: int = 0) -> Slot:
        while isinstance(v, SSAValue | OldSSAValue):
            target = value_map.get(v.id)
            if target is None:
                return UNDEF  # a use of a deleted statement
            if isinstance(target, SSAValue):
                return target
            v = target[1]
            depth += 1
            if depth > len(value_map) + 1:
                return UNDEF  # a cycle of copies: no value
        return v

    new = IRCode(ir.name, list(ir.argnames), list(ir.argtypes), ir.ret)
    for kept in order:
        start = len(new.stmts) + 1
        for i in kept:
            s = stmt(i)
            assert isinstance(s, STMT_TYPES)  # pass 1 kept statements only
            s = _copy_stmt(s)
            set_operands(s, [resolve(v) for v in s.operands()])
            if isinstance(s, PhiNode):
                pairs = [(block_map[e], v) for e, v in zip(s.edges, s.values, strict=True)
                         if e in block_map]
                s.edges = [e for e, _ in pairs]
                s.values = [v for _, v in pairs]
            elif isinstance(s, GotoNode):
                s.label = block_map[s.label]
            elif isinstance(s, GotoIfNot):
                s.dest = block_map[s.dest]
            elif isinstance(s, EnterNode):
                s.catch_dest = block_map[s.catch_dest]
            new.stmts.append(s)
            new.types.append(type_(i))
            new.lines.append(line(i))
            new.src.append(src(i))
            new.flags.append(flag(i))
        new.blocks.append(Block(start, len(new.stmts)))
    old_blocks = [b for b, alive in enumerate(live, start=1) if alive]
    for b_new, b_old in enumerate(old_blocks, start=1):
        blk = new.blocks[b_new - 1]
        blk.preds = [block_map[p] for p in ir.blocks[b_old - 1].preds if p in block_map]
        blk.succs = [block_map[s] for s in ir.blocks[b_old - 1].succs if s in block_map]
    return new


def _copy_stmt(s: Stmt) -> Stmt:
    """A copy of a statement, with its own operand lists."""
    if isinstance(s, Expr):
        return Expr(s.head, list(s.args), s.func, s.field)
    if isinstance(s, PhiNode):
        return PhiNode(list(s.edges), list(s.values))
    if isinstance(s, PhiCNode):
        return PhiCNode(list(s.values))
    if isinstance(s, PiNode):
        return PiNode(s.val, s.op, s.const)
    if isinstance(s, UpsilonNode):
        return UpsilonNode(s.val)
    if isinstance(s, GotoNode):
        return GotoNode(s.label)
    if isinstance(s, GotoIfNot):
        return GotoIfNot(s.cond, s.dest)
    if isinstance(s, ReturnNode):
        return ReturnNode(s.val)
    if isinstance(s, EnterNode):
        return EnterNode(s.catch_dest)
    return LeaveNode(s.enter)


class IncrementalCompact:
    """Compaction while a pass walks the statements (Julia's ``IncrementalCompact``).

    Iterating yields ``(new_index, stmt)`` in the new order, with inserted statements in
    place and operands already renumbered where their definition was placed (a use of a
    later statement shows as ``%oldN`` until :meth:`finish`). The pass may change the
    statement it is given (``compact[new_index] = stmt``), delete it
    (``compact.delete(new_index)``), or insert before it (:meth:`insert_here`), all
    without any renumbering. :meth:`finish` returns the compacted IRCode.
    """

    def __init__(self, ir: IRCode):
        # Place the insertion buffer and drop dead blocks first; the walk itself then
        # renumbers one statement at a time.
        self.ir = compact(ir) if ir.new_nodes else ir
        self.result: list[Slot] = []
        self.types: list[Type | None] = []
        self.lines: list[Pos | None] = []
        self.src: list[int | None] = []
        self.flags: list[int] = []
        self.old_to_new: dict[int, int] = {}
        self.extra: list[tuple[int, Slot, Type | None]] = []  # (before new index, stmt, type)
        self.deleted: set[int] = set()

    def __iter__(self) -> Iterator[tuple[int, Slot]]:
        for i, s in enumerate(self.ir.stmts, start=1):
            if isinstance(s, STMT_TYPES):  # (a bare value or nothing stays as it is)
                s = _copy_stmt(s)
                set_operands(s, [self._rename(v) for v in s.operands()])
            self.result.append(s)
            self.types.append(self.ir.types[i - 1])
            self.lines.append(self.ir.lines[i - 1])
            self.src.append(self.ir.src[i - 1] if i <= len(self.ir.src) else None)
            self.flags.append(self.ir.flags[i - 1])
            self.old_to_new[i] = len(self.result)
            yield len(self.result), s

    def _rename(self, v: Slot) -> Slot:
        if isinstance(v, SSAValue):
            new = self.old_to_new.get(v.id)
            return SSAValue(new) if new is not None else OldSSAValue(v.id)
        return v

    def __getitem__(self, idx: int) -> Slot:
        return self.result[idx - 1]

    def __setitem__(self, idx: int, stmt: Slot) -> None:
        self.result[idx - 1] = stmt

    def delete(self, idx: int) -> None:
        self.result[idx - 1] = None

    def insert_here(self, stmt: Slot, type_: Type | None = None) -> SSAValue:
        """Insert ``stmt`` before the statement just yielded; returns its (final) value."""
        pos = len(self.result)
        self.extra.append((pos, stmt, type_))
        return SSAValue(-len(self.extra))  # a placeholder fixed by finish()

    def finish(self) -> IRCode:
        """Resolve every pending ``%oldN``, place insertions, and compact once more."""
        out = IRCode(self.ir.name, list(self.ir.argnames), list(self.ir.argtypes), self.ir.ret)
        out.blocks = [Block(b.start, b.stop, list(b.preds), list(b.succs))
                      for b in self.ir.blocks]
        n = len(self.result)

        def fix(v: Slot) -> Slot:
            if isinstance(v, OldSSAValue):
                return SSAValue(self.old_to_new[v.id])
            if isinstance(v, SSAValue) and v.id < 0:
                return SSAValue(n - v.id)  # the k-th insertion is numbered n + k
            return v

        for s, ty, ln, fl, sl in zip(self.result, self.types, self.lines, self.flags,
                                     self.src, strict=True):
            if isinstance(s, STMT_TYPES):
                set_operands(s, [fix(v) for v in s.operands()])
            elif isinstance(s, SSAValue | OldSSAValue):
                s = fix(s)
            out.stmts.append(s)
            out.types.append(ty)
            out.lines.append(ln)
            out.src.append(sl)
            out.flags.append(fl)
        for pos, s, ty in self.extra:
            if isinstance(s, STMT_TYPES):
                s = _copy_stmt(s)
                set_operands(s, [fix(v) for v in s.operands()])
            out.insert_node(pos, s, ty)
        return compact(out)
