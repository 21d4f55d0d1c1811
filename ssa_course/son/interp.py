"""Run a sea-of-nodes graph directly, without scheduling it into blocks (lesson 06).

The interpreter follows *control*: from Start, each control node names the next one (an
``If`` picks a projection by its predicate, entering a Region assigns its Phis -- all at
once, from the path control came in on). Everything else is evaluated when needed:

* *pinned* nodes (stores, loads, print, allocation, guarded division) run when control
  reaches the node they hang on, in an order their inputs and memory edges allow;
* *floating* nodes (arithmetic, comparisons, constants) are evaluated on demand and
  remembered until control enters a Region again (a Phi may have changed).

That a program gives the same output this way and through the CFG-based executors is
what the differential test checks for every program. Calls keep an explicit frame stack,
so recursion depth is limited only by ``Limits.depth``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ssa_course.errors import RuntimeTrap, VerifyError
from ssa_course.runtime import Limits, Output, stack_overflow, step_limit_exceeded, uncaught
from ssa_course.son.control import (
    Call,
    If,
    Never,
    Phi,
    Proj,
    Region,
    Return,
    Start,
    Stop,
    Throw,
    Trap,
)
from ssa_course.son.data import Undefined, UndefinedValue
from ssa_course.son.emit import FunctionGraph, SeaOfNodes
from ssa_course.son.graph import Node
from ssa_course.son.memory import Load, LoadField, Print, Store, StoreField


class Plan:
    """What the interpreter precomputes for one graph: successors, phis, pinned order."""

    def __init__(self, fg: FunctionGraph):
        self.next: dict[Node, Node] = {}
        self.branches: dict[Node, tuple[Node | None, Node | None]] = {}
        self.phis: dict[Node, list[Phi]] = {}
        self.pinned: dict[Node, list[Node]] = {}
        self.path: dict[tuple[Node, Node], int] = {}
        for node in fg.nodes():
            if isinstance(node, Region):
                self.phis[node] = node.phis()
                for i, pred in enumerate(node.inputs[1:], start=1):
                    if pred is not None:
                        self.path[(node, pred)] = i
            if not node.is_control:
                continue
            projs = {u.index: u for u in node.outputs if isinstance(u, Proj) and u.is_control}
            if isinstance(node, (If, Call, Start)):
                first = 0
                self.branches[node] = (projs.get(first), projs.get(1 if isinstance(node, If)
                                                                   else 3))
            succ = [u for u in node.outputs if u.is_control
                    and not isinstance(u, (Proj, Never))
                    and (isinstance(u, Region) or u.inputs[0] is node)]
            if succ and not isinstance(node, (If, Call, Start)):
                if len(succ) != 1 and not isinstance(node, Stop):
                    raise VerifyError("one control successor", repr(node),
                                      f"has {len(succ)}: {succ}")
                self.next[node] = succ[0]
            self.pinned[node] = _block_order(node)


def _block_order(ctrl: Node) -> list[Node]:
    """The pinned nodes hanging on ``ctrl``, dependencies first (ties: creation order)."""
    members = sorted((u for u in ctrl.outputs if u.is_pinned() and not u.is_control
                      and u.inputs[0] is ctrl), key=lambda n: n.id)
    if not members:
        return []
    member_set = set(members)
    loads_of: dict[Node, list[Node]] = {}
    for m in members:
        if isinstance(m, (Load, LoadField)):
            loads_of.setdefault(m.inputs[1], []).append(m)
    order: list[Node] = []
    done: set[Node] = set()
    explored: set[Node] = set()
    for root in members:
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            n, expanded = stack.pop()
            if n in done:
                continue
            if expanded:
                done.add(n)
                if n in member_set:
                    order.append(n)
                continue
            if n in explored:
                continue  # a floating node on the current path: its members come first
            explored.add(n)
            stack.append((n, True))
            deps = [i for i in n.inputs[1:] if i is not None]
            if isinstance(n, (Store, StoreField, Print)):
                deps += loads_of.get(n.inputs[1], [])  # read memory before overwriting it
            for d in reversed(deps):
                if d in member_set or (not d.is_control and not d.is_pinned()
                                       and not isinstance(d, Phi)):
                    stack.append((d, False))
    return order


@dataclass(slots=True)
class _State:
    out: Output


class _Frame:
    __slots__ = ("fg", "plan", "ctrl", "vals", "cache", "call")

    def __init__(self, fg: FunctionGraph, plan: Plan, args: list[object]):
        self.fg = fg
        self.plan = plan
        self.ctrl: Node = fg.start
        self.vals: dict[Node, object] = {fg.start: (None, None, *args)}
        self.cache: dict[Node, object] = {}
        self.call: Call | None = None


class Interpreter:
    def __init__(self, program: SeaOfNodes, out: Output, limits: Limits):
        self.program = program
        self.out = out
        self.limits = limits
        self.steps = 0
        self.plans: dict[str, Plan] = {}
        self.state = _State(out)

    def plan(self, name: str) -> Plan:
        plan = self.plans.get(name)
        if plan is None:
            plan = self.plans[name] = Plan(self.program.functions[name])
        return plan

    def value(self, frame: _Frame, node: Node) -> object:
        """A data node's current value (floating nodes are evaluated on demand)."""
        vals, cache = frame.vals, frame.cache
        if node in vals:
            return vals[node]
        if node in cache:
            return cache[node]
        stack = [node]
        while stack:
            n = stack[-1]
            if n in cache or n in vals:
                stack.pop()
                continue
            if n.is_pinned() or isinstance(n, Phi) or n.is_control:
                raise VerifyError("values are defined before use", repr(n),
                                  "read before control reached it")
            missing = [i for i in n.inputs[1:] if i is not None and i not in vals
                       and i not in cache]
            if isinstance(n, Proj) and n.inputs[0] not in vals:
                missing.append(n.inputs[0])
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            cache[n] = self._evaluate(frame, n)
        return cache[node]

    def _evaluate(self, frame: _Frame, n: Node) -> object:
        self.steps += 1
        if isinstance(n, Proj):
            return frame.vals[n.inputs[0]][n.index]
        if isinstance(n, Undefined):
            return n.evaluate([], self.state)
        return n.evaluate(self.args(frame, n), self.state)

    def args(self, frame: _Frame, n: Node) -> list[object]:
        """The values of ``n``'s inputs (input 0, control, has none)."""
        args: list[object] = [None]
        for i in n.inputs[1:]:
            v = self.value(frame, i) if i is not None else None
            if type(v) is UndefinedValue:
                raise RuntimeTrap(f"undefined variable '{v.name}'")
            args.append(v)
        return args

    def _enter(self, frame: _Frame, region: Node, came_from: Node) -> None:
        index = frame.plan.path[(region, came_from)]
        phis = frame.plan.phis[region]
        if phis:
            new = [self.value(frame, p.inputs[index]) for p in phis]
            for p, v in zip(phis, new, strict=True):
                frame.vals[p] = v
        frame.cache.clear()

    def run(self, args: list[object]) -> int:
        limit = self.limits.steps
        main = self.program.functions["main"]
        frames = [_Frame(main, self.plan("main"), args)]
        while True:
            frame = frames[-1]
            node = frame.ctrl
            self.steps += 1
            if self.steps > limit:
                raise step_limit_exceeded()
            for pinned in frame.plan.pinned.get(node, ()):
                self.steps += 1
                frame.vals[pinned] = pinned.evaluate(self.args(frame, pinned), self.state)
            if isinstance(node, If):
                taken = frame.plan.branches[node][0 if self.args(frame, node)[1] else 1]
                frame.ctrl = taken
                continue
            if isinstance(node, Start):
                frame.ctrl = frame.plan.branches[node][0]
                continue
            if isinstance(node, Call):
                callee = self.program.functions[node.fn]
                call_args = self.args(frame, node)[2:]
                if len(frames) >= self.limits.depth:
                    raise stack_overflow()
                frame.call = node
                frames.append(_Frame(callee, self.plan(node.fn), call_args))
                continue
            if isinstance(node, Return):
                result = self.args(frame, node)[2]
                frames.pop()
                if not frames:
                    return self.steps
                caller = frames[-1]
                caller.vals[caller.call] = (None, None, result, None, None)
                caller.ctrl = caller.plan.branches[caller.call][0]
                continue
            if isinstance(node, Throw):
                self._throw(frames, self.args(frame, node)[2])
                continue
            if isinstance(node, Trap):
                raise RuntimeTrap(node.message, node.pos)
            nxt = frame.plan.next.get(node)
            if nxt is None:
                raise VerifyError("control reaches an exit", repr(node), "dead end")
            if isinstance(nxt, Region):
                self._enter(frame, nxt, node)
            frame.ctrl = nxt

    def _throw(self, frames: list[_Frame], value: object) -> None:
        frames.pop()
        while frames:
            caller = frames[-1]
            handler = caller.plan.branches[caller.call][1]
            if handler is not None:
                caller.vals[caller.call] = (None, None, None, None, value)
                caller.ctrl = handler
                return
            frames.pop()
        raise uncaught(value)


def run_graphs(program: SeaOfNodes, args: list[object], out: Output,
               limits: Limits | None = None) -> int:
    """Run ``main`` of a sea-of-nodes program; returns the number of steps taken."""
    return Interpreter(program, out, limits or Limits()).run(args)
