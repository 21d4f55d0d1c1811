"""The parser's symbol table as a node (lesson 06).

While parsing, the current definition of every variable in scope -- plus the current
control and memory -- is held as the inputs of a :class:`Scope` node. Being a node keeps
those values alive (nobody deletes a node the scope still reads) and lets
:meth:`~ssa_course.son.graph.Node.replace_with` update the table when the peephole driver
swaps a node for a better one. Slot 0 is control, slot 1 memory, then one slot per
variable, innermost block last, so leaving a block is a truncation.

Scopes are scaffolding: the builder deletes them when the function is done.

There is one Scope per function. A construct that needs the table as it was at its
start (``if``/``else``, a loop's breaks, ``&&``, ``try``) pushes a *frame*: an undo
journal that keeps, for each slot written since, its oldest value (held as the inputs of
a :class:`Delta`, so the peephole driver keeps them current). A side that waits to be
merged (the then-branch, a ``break``) is a Delta of the slots it changed. So a construct
costs the slots it writes, not every variable in scope (copying the table at every
``if`` made building quadratic).
"""

from __future__ import annotations

from collections.abc import Hashable

from ssa_course.son.graph import Graph, Node, init_unnumbered
from ssa_course.son.types import CTRL, MEM, Type


class Delta(Node):
    """Values for some slots of the scope (slot -> node), held as inputs: a journal
    frame's old values or a side waiting to be merged. Builder scaffolding that takes no
    node id (ids, and so printed graphs, do not depend on how the builder keeps them)."""

    __slots__ = ("slots", "index")

    label = "Delta"
    scaffolding = True

    def __init__(self, graph: Graph):  # no super().__init__: registers no id
        init_unnumbered(self, graph)
        self.slots: list[int] = []
        self.index: dict[int, int] = {}  # slot -> input position

    def put(self, slot: int, node: Node | None) -> None:
        """Record ``node`` for ``slot`` unless the slot already has a value."""
        if slot not in self.index:
            self.index[slot] = len(self.inputs)
            self.slots.append(slot)
            self.add_input(node)

    def set(self, slot: int, node: Node | None) -> None:
        pos = self.index.get(slot)
        if pos is None:
            self.put(slot, node)
        else:
            self.set_input(pos, node)

    def value(self, slot: int) -> Node | None:
        return self.inputs[self.index[slot]]

    def release(self) -> None:
        # Dropping the edges makes the values' use counts honest again: a value only this Delta
        # held may now be dead, and the caller hands those to the driver.
        """Let go of every value (the caller decides which ones to discard)."""
        self.truncate_inputs(0)
        self.slots.clear()
        self.index.clear()

    # Scaffolding is never value-numbered: two Deltas with equal slots are two records.
    def key(self) -> None:
        return None


class Scope(Node):
    __slots__ = ("slots", "keys", "names", "types", "frames", "where")

    label = "Scope"
    scaffolding = True

    def __init__(self, graph: Graph, ctrl: Node | None, mem: Node | None):
        # node -> the slots holding it: the peephole driver replacing a node must not scan
        # every variable in scope (a loop's trivial phis are replaced at every loop)
        self.where: dict[Node, set[int]] = {}
        super().__init__(graph, ctrl, mem)
        self.slots: dict[Hashable, int] = {}
        self.keys: list[Hashable] = ["$ctrl", "$mem"]  # slot -> key (the inverse of slots)
        self.names: list[str] = ["$ctrl", "$mem"]
        self.types: list[Type] = [CTRL, MEM]
        self.frames: list[tuple[Delta, int]] = []  # (undo journal, scope size at its start)

    # edges, indexed by value ------------------------------------------------------

    # The ``where`` index mirrors the inputs at every edit, as ``outputs`` does: both edit
    # paths (add_input, set_input) keep it, so replace_input can trust it.
    def add_input(self, n: Node | None) -> None:
        if n is not None:
            self.where.setdefault(n, set()).add(len(self.inputs))
        super().add_input(n)

    def set_input(self, i: int, n: Node | None) -> None:
        old = self.inputs[i]
        if old is n:
            return
        if old is not None:
            held = self.where[old]
            held.discard(i)
            if not held:
                del self.where[old]
        if n is not None:
            self.where.setdefault(n, set()).add(i)
        super().set_input(i, n)

    def replace_input(self, old: Node, new: Node) -> None:
        # This is how the driver's ``replace_with`` updates the symbol table: the scope is one
        # more user of every variable's value (Click & Paleczny keep the scope as a node for
        # this reason).
        for i in sorted(self.where.get(old, ())):
            self.set_input(i, new)

    # control and memory --------------------------------------------------------

    @property
    def ctrl(self) -> Node | None:
        return self.inputs[0]

    @ctrl.setter
    def ctrl(self, node: Node | None) -> None:
        self.write(0, node)

    @property
    def mem(self) -> Node:
        """The current memory state (read only while control is live: it is a node)."""
        return self.operand(1)

    @mem.setter
    def mem(self, node: Node) -> None:
        self.write(1, node)

    # Control None marks the end of a path (return, break, throw, a branch never taken):
    # nothing after it is built.
    def dead(self) -> bool:
        return self.inputs[0] is None

    # variables -----------------------------------------------------------------

    def define(self, key: Hashable, node: Node | None, name: str, ty: Type) -> None:
        """A new variable in the innermost block (``node``: None in code control never
        reaches, where a caught exception may have no value)."""
        # Keys are the checker's variable objects, not names: shadowing declares a new key, and
        # the inner variable's slot is dropped with its block.
        self.slots[key] = len(self.inputs)
        self.keys.append(key)
        self.names.append(name)
        self.types.append(ty)
        self.add_input(node)

    def slot_of(self, key: Hashable) -> int | None:
        """The slot of a variable in scope, or None."""
        return self.slots.get(key)

    def lookup(self, key: Hashable) -> Node:
        """A variable's current value (a variable in scope always has one)."""
        return self.operand(self.slots[key])

    def update(self, key: Hashable, node: Node) -> None:
        self.write(self.slots[key], node)

    def write(self, slot: int, node: Node | None) -> None:
        """Set a slot, journaling its old value in the innermost frame (slots made after
        the frame began are truncated before it ends: nothing to undo)."""
        if self.frames:
            journal, size = self.frames[-1]
            # A slot made after the frame began has no old value to restore: it is truncated before
            # the frame ends.
            if slot < size:
                journal.put(slot, self.inputs[slot])
        self.set_input(slot, node)

    def size(self) -> int:
        return len(self.inputs)

    def truncate(self, n: int) -> None:
        """Forget every slot from ``n`` on (leaving a block drops its variables)."""
        self.truncate_inputs(n)
        for key in self.keys[n:]:  # only the dropped slots: leaving a block costs its size
            if self.slots.get(key, -1) >= n:
                del self.slots[key]
        del self.keys[n:]
        del self.names[n:]
        del self.types[n:]

    # journal frames ------------------------------------------------------------------

    def push(self) -> int:
        """Start a frame; returns its depth (for :meth:`changes_since`)."""
        self.frames.append((Delta(self.graph), len(self.inputs)))
        return len(self.frames) - 1

    def pop(self) -> None:
        """End the innermost frame: its oldest values move to the enclosing frame, which
        keeps its own older value for a slot it already journaled."""
        journal, _ = self.frames.pop()
        if self.frames:
            outer, size = self.frames[-1]
            # The invariant: each frame holds, for every slot written since it began, the value
            # before the first write -- so an undo of the outer frame still restores its start.
            for slot, node in zip(journal.slots, journal.inputs, strict=True):
                if slot < size:
                    outer.put(slot, node)
        journal.release()

    def changes_since(self, depth: int, limit: int) -> Delta:
        """The current values of the slots below ``limit`` written since frame ``depth``
        began (a side to merge later, relative to the table at that frame's start)."""
        side = Delta(self.graph)
        # A slot written in any frame since ``depth`` changed: the nested frames' journals
        # list the slots written inside them, the outer one's the rest.
        for journal, _ in self.frames[depth:]:
            for slot in journal.slots:
                if slot < limit:
                    side.put(slot, self.inputs[slot])
        return side

    def undo(self) -> None:
        """Put back the values the innermost frame journaled (it starts over, empty)."""
        journal, _ = self.frames[-1]
        for slot, node in zip(journal.slots, journal.inputs, strict=True):
            self.set_input(slot, node)
        journal.release()

    def value(self, side: Delta, slot: int) -> Node | None:
        """A side's value for ``slot``: its own, else the table's (None past its end)."""
        pos = side.index.get(slot)
        if pos is not None:
            return side.inputs[pos]
        return self.inputs[slot] if slot < len(self.inputs) else None

    # Only when the function is finished: the values lose the scope as a user, and those
    # with no other users are left to the driver (or the final sweep).
    def discard(self) -> None:
        for i in range(len(self.inputs)):
            self.set_input(i, None)
        self.graph.nodes.pop(self.id, None)

    def key(self) -> None:
        return None
