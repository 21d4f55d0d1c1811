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
from ssa_course.runtime import (
    ARRAY_LENGTH_TRAP,
    Heap,
    Limits,
    Output,
    Value,
    check_array_length,
    stack_overflow,
    step_limit_exceeded,
    uncaught,
)
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
    goes_to,
)
from ssa_course.son.data import Undefined, UndefinedValue
from ssa_course.son.graph import Node
from ssa_course.son.order import anti_dependences, dependency_order
from ssa_course.son.program import FunctionGraph, SeaOfNodes

_MISSING = object()
_MAX_RECURSION = 200  # deeper expressions are evaluated with an explicit stack

# what the run loop does at each kind of control node
_GO_ON, _IF, _START, _CALL, _RETURN, _THROW, _TRAP = range(7)


class Plan:
    """What the interpreter precomputes for one graph: successors, phis, pinned order."""

    def __init__(self, fg: FunctionGraph):
        self.next: dict[Node, Node] = {}
        self.branches: dict[Node, tuple[Node | None, Node | None]] = {}
        self.phis: dict[Node, list[Phi]] = {}
        self.pinned: dict[Node, list[Node]] = {}
        self.path: dict[tuple[Node, Node], int] = {}
        self.kind: dict[Node, int] = {}
        # One pass over the graph before the run: the run loop then only looks things up, and
        # the graph's structural invariants (one successor per plain control node) are
        # checked once, with the verifier's messages.
        for node in fg.nodes():
            if node.is_control:
                self.kind[node] = _IF if isinstance(node, If) else _START if isinstance(
                    node, Start) else _CALL if isinstance(node, Call) else _RETURN if \
                    isinstance(node, Return) else _THROW if isinstance(node, Throw) else \
                    _TRAP if isinstance(node, Trap) else _GO_ON
            if isinstance(node, Region):
                self.phis[node] = node.phis()
                # Which path control came in on decides which input every phi takes.
                for i, pred in enumerate(node.inputs[1:], start=1):
                    if pred is not None:
                        self.path[(node, pred)] = i
            if not node.is_control:
                continue
            projs = {u.index: u for u in node.outputs if isinstance(u, Proj) and u.is_control}
            # The two ways out of a multi-valued control node: an If's true and false sides, a
            # Call's normal and exceptional continuations (projections 0 and 3).
            if isinstance(node, (If, Call, Start)):
                first = 0
                self.branches[node] = (projs.get(first), projs.get(1 if isinstance(node, If)
                                                                   else 3))
            succ = [u for u in node.outputs
                    if not isinstance(u, (Proj, Never)) and goes_to(node, u)]
            # Stop is the one control node with many inputs and no successor it must choose.
            if succ and not isinstance(node, (If, Call, Start)):
                if len(succ) != 1 and not isinstance(node, Stop):
                    raise VerifyError("one control successor", repr(node),
                                      f"has {len(succ)}: {succ}")
                self.next[node] = succ[0]
            self.pinned[node] = _block_order(node)


def _block_order(ctrl: Node) -> list[Node]:
    """The pinned nodes hanging on ``ctrl``, dependencies first (ties: creation order),
    looking through the floating expressions between them."""
    members = [u for u in dict.fromkeys(ctrl.outputs) if u.is_pinned() and not u.is_control
               and u.inputs[0] is ctrl]
    if not members:
        return []
    # A load must run before a later store to the memory it read, though no edge says so
    # (the store does not read the load): the same rule GCM's local order keeps.
    loads_before = anti_dependences(members)
    return dependency_order(
        members, lambda n: [*n.inputs[1:], *loads_before(n)],
        # A pinned node may depend on another through floating nodes in between
        # (``a[i] = a[j] + 1``): the order looks through them.
        walk_through=lambda d: not d.is_control and not d.is_pinned()
        and not isinstance(d, Phi))


@dataclass(slots=True)
class _State:
    out: Output
    heap: Heap
    bril: object = None  # Bril's alloc/free heap, made on first use (son/bril_memory.py)


class _Frame:
    __slots__ = ("fg", "plan", "ctrl", "vals", "cache", "call")

    def __init__(self, fg: FunctionGraph, plan: Plan, args: list[Value]):
        self.fg = fg
        self.plan = plan
        self.ctrl: Node = fg.start
        # a multi-valued node's value is a tuple (Start's: control, memory, the arguments)
        self.vals: dict[Node, Value] = {fg.start: (None, None, *args)}
        # Two tables: ``vals`` holds what control assigned (phis, pinned nodes, tuples) and
        # lasts; ``cache`` holds floating values and is cleared at every merge, since a
        # floating value computed from a phi changes when the phi does.
        self.cache: dict[Node, Value] = {}
        self.call: Call | None = None  # the call this frame waits on (set while it runs)


class Interpreter:
    def __init__(self, program: SeaOfNodes, out: Output, limits: Limits):
        self.program = program
        self.out = out
        self.limits = limits
        self.steps = 0
        self.plans: dict[str, Plan] = {}
        self.state = _State(out, Heap(limits))

    def plan(self, name: str) -> Plan:
        plan = self.plans.get(name)
        if plan is None:
            plan = self.plans[name] = Plan(self.program.functions[name])
        return plan

    def value(self, frame: _Frame, node: Node) -> Value:
        """A data node's current value (floating nodes are evaluated on demand)."""
        v = frame.vals.get(node, _MISSING)
        if v is _MISSING:
            v = frame.cache.get(node, _MISSING)
            if v is _MISSING:
                v = self._compute(frame, node, 0)
        return v

    def _compute(self, frame: _Frame, n: Node, depth: int) -> Value:
        """Evaluate a floating node, its missing inputs first (recursion for the usual
        shallow expressions, an explicit stack beyond that)."""
        if depth > _MAX_RECURSION:
            return self._compute_deep(frame, n)
        # A value needed before control assigned it is a schedule error in the graph (a use
        # not dominated by its definition), reported as the invariant it breaks.
        if n.is_control or n.is_pinned() or isinstance(n, Phi):
            raise VerifyError("values are defined before use", repr(n),
                              "read before control reached it")
        vals, cache = frame.vals, frame.cache
        if isinstance(n, Proj):
            src = n.operand(0)
            tup = vals.get(src, _MISSING)
            if tup is _MISSING:
                tup = self._compute(frame, src, depth + 1)
            result = tup[n.index]
        elif isinstance(n, Undefined):
            result = n.evaluate([], self.state)
        else:
            args: list[Value] = [None]
            for i in n.inputs[1:]:
                if i is None:
                    args.append(None)
                    continue
                v = vals.get(i, _MISSING)
                if v is _MISSING:
                    v = cache.get(i, _MISSING)
                    if v is _MISSING:
                        v = self._compute(frame, i, depth + 1)
                # An undefined value may flow through phis, but an operation on it is Bril's runtime
                # error.
                if type(v) is UndefinedValue:
                    raise RuntimeTrap(f"undefined variable '{v.name}'")
                args.append(v)
            result = n.evaluate(args, self.state)
        self.steps += 1
        cache[n] = result
        return result

    def _compute_deep(self, frame: _Frame, node: Node) -> Value:
        """The same, for a very deep expression: inputs first, with an explicit stack."""
        vals, cache = frame.vals, frame.cache
        stack = [node]
        while stack:
            n = stack[-1]
            if n in cache or n in vals:
                stack.pop()
                continue
            missing = [i for i in n.inputs[1:] if i is not None and i not in vals
                       and i not in cache]
            if isinstance(n, Proj) and n.inputs[0] not in vals:
                missing.append(n.operand(0))
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            self._compute(frame, n, 0)  # its inputs are ready: no recursion
        return cache[node]

    def args(self, frame: _Frame, n: Node) -> list[Value]:
        """The values of ``n``'s inputs (input 0, control, has none)."""
        args: list[Value] = [None]
        for i in n.inputs[1:]:
            v = self.value(frame, i) if i is not None else None
            if type(v) is UndefinedValue:
                raise RuntimeTrap(f"undefined variable '{v.name}'")
            args.append(v)
        return args

    def _enter(self, frame: _Frame, region: Node, came_from: Node) -> None:
        index = frame.plan.path[(region, came_from)]
        phis = frame.plan.phis[region]
        # All phis read their inputs first, then all are assigned: they happen at once on the
        # edge (a swap ``a, b = b, a`` round a loop must not see a half-done assignment).
        if phis:
            new = [self.value(frame, p.operand(index)) for p in phis]
            for p, v in zip(phis, new, strict=True):
                frame.vals[p] = v
        # The floating values computed before may depend on a phi that just changed.
        frame.cache.clear()

    def run(self, args: list[Value]) -> int:
        limit = self.limits.steps
        main = self.program.functions["main"]
        frames = [_Frame(main, self.plan("main"), args)]
        state = self.state
        while True:
            frame = frames[-1]
            plan = frame.plan
            node = frame.ctrl
            self.steps += 1
            if self.steps > limit:
                raise step_limit_exceeded()
            # The effects hanging on this control node run as control arrives, in their planned
            # order.
            for pinned in plan.pinned.get(node, ()):
                self.steps += 1
                frame.vals[pinned] = pinned.evaluate(self.args(frame, pinned), state)
            kind = plan.kind[node]
            if kind == _GO_ON:
                nxt = plan.next.get(node)
                if nxt is None:
                    raise VerifyError("control reaches an exit", repr(node), "dead end")
                if nxt in plan.phis:
                    self._enter(frame, nxt, node)
                frame.ctrl = nxt
            elif kind == _IF:
                frame.ctrl = _taken(plan, node, 0 if self.args(frame, node)[1] else 1)
            elif kind == _START:
                frame.ctrl = _taken(plan, node, 0)
            elif kind == _CALL:
                assert isinstance(node, Call)
                callee = self.program.functions[node.fn]
                call_args = self.args(frame, node)[2:]
                if len(frames) >= self.limits.depth:
                    raise stack_overflow()
                # No Python recursion for calls: a new frame on an explicit stack, so the
                # depth limit is the program's, reported as a stack overflow.
                frame.call = node
                frames.append(_Frame(callee, self.plan(node.fn), call_args))
            elif kind == _RETURN:
                result = self.args(frame, node)[2]
                frames.pop()
                if not frames:
                    if self.state.bril is not None:  # brili: every block freed at the end
                        self.state.bril.check_all_freed()  # type: ignore[attr-defined]
                    return self.steps
                caller = frames[-1]
                call = caller.call
                assert call is not None, "a frame below another waits on a call"
                # The call's tuple, as its projections read it: the result at index 2.
                caller.vals[call] = (None, None, result, None, None)
                caller.ctrl = _taken(caller.plan, call, 0)
            elif kind == _THROW:
                self._throw(frames, self.args(frame, node)[2])
            else:
                assert isinstance(node, Trap)
                # One Trap for both ends of the length test: the message must name the end
                # that failed, as the other executors do.
                if node.message == ARRAY_LENGTH_TRAP:  # which end of the length test failed
                    check_array_length(self.args(frame, node)[2], node.pos)
                raise RuntimeTrap(node.message, node.pos)

    def _throw(self, frames: list[_Frame], value: Value) -> None:
        frames.pop()
        while frames:
            caller = frames[-1]
            call = caller.call
            assert call is not None, "a frame below another waits on a call"
            # A call inside a try has an exceptional projection: control goes there with the
            # thrown value at index 4; otherwise the exception unwinds further.
            handler = caller.plan.branches[call][1]
            if handler is not None:
                caller.vals[call] = (None, None, None, None, value)
                caller.ctrl = handler
                return
            frames.pop()
        raise uncaught(value)


def _taken(plan: Plan, node: Node, side: int) -> Node:
    """Where control goes when it leaves ``node`` (an If, Start or Call) by ``side``."""
    target = plan.branches[node][side]
    if target is None:
        raise VerifyError("a taken branch has its projection", repr(node),
                          f"no projection {side}")
    return target


def run_graphs(program: SeaOfNodes, args: list[Value], out: Output,
               limits: Limits | None = None) -> int:
    """Run ``main`` of a sea-of-nodes program; returns the number of steps taken."""
    return Interpreter(program, out, limits or Limits()).run(args)
