"""Where inlining a call cannot change what the call depth limit does (for the
``inline`` pass, :mod:`ssa_course.quads.inline`).

An inlined call no longer enters a frame, so a run that stopped with ``stack overflow``
when entering the callee (LANGUAGE.md, "Limits") would go on. This module answers, for
a call of a leaf in a caller, whether that can happen differently:

* a caller that no recursive function reaches runs at a depth of at most the number of
  functions (:func:`deep_functions` are the others): its callee's frame never overflows
  -- as long as the depth limit is above that chain of calls. The default limit is
  100,000; ``run --depth N`` with ``N`` below the program's longest chain of
  non-recursive calls (``--depth 2`` for ``main`` -> ``f`` -> ``g``) is the one case
  where an input stops with ``stack overflow`` and its optimized form does not;
* a call that every path follows with a call that stays, with nothing observable between
  (:func:`followed_by_call`): if entering the callee overflowed, entering that call does
  too, at the same depth, before anything is seen;
* a call that every path reaches after a call that stays, in the same frame
  (:func:`calls_after_a_call`): that call entered a frame one deeper, so the limit allows
  the callee's frame too.

A call *stays* when its callee is recursive (:func:`recursive_functions`): such a callee
always calls the next function of its cycle, so it is never a leaf and never inlined. A
leaf call cannot vouch for another: it may be inlined as well, and print first.
"""

from __future__ import annotations

from typing import Any

from ssa_course.quads.analyses import available
from ssa_course.quads.cfg import build_cfg
from ssa_course.quads.components import components
from ssa_course.quads.flow import solve
from ssa_course.quads.ir import Function, Instr, Label, Program, may_trap

MAX_WALK = 32  # labels looked at for the call that must follow a call (recursive callers)


def calls_of(fn: Function) -> set[str]:
    return {i.funcs[0] for i in fn.instrs() if i.op == "call" and i.funcs}


def call_graph_reach(program: Program) -> dict[str, set[str]]:
    """For each function, the functions its calls can reach (transitively)."""
    graph = {name: calls_of(fn) & program.functions.keys()
             for name, fn in program.functions.items()}
    reach: dict[str, set[str]] = {}
    for start in graph:  # explicit stack: no recursion on a long call chain
        seen: set[str] = set()
        stack = list(graph[start])
        while stack:
            name = stack.pop()
            if name not in seen:
                seen.add(name)
                stack.extend(graph[name])
        reach[start] = seen
    return reach


def recursive_functions(program: Program) -> set[str]:
    """Functions on a call-graph cycle (Tarjan's strongly connected components, on an
    explicit stack: linear in the calls). A call of one is never inlined (the callee always
    calls the next function of its cycle, so it is never a leaf): such calls stay, and can
    vouch for the depth of the calls around them. Frame arrays (lesson 10) avoid them too."""
    calls = {name: [f for i in fn.instrs() if i.op == "call" for f in i.funcs
                    if f in program.functions] for name, fn in program.functions.items()}
    found: set[str] = set()
    for component in components(calls, calls.__getitem__):
        if len(component) > 1 or component[0] in calls[component[0]]:
            found.update(component)
    return found


def deep_functions(program: Program) -> set[str]:
    """Functions on a call-graph cycle, or called (transitively) from one: only these can
    run at an unbounded call depth."""
    reach = call_graph_reach(program)
    deep = {name for name in reach if name in reach[name]}
    for name in list(deep):
        deep |= reach[name]
    return deep


def nonzero_constants(fn: Function) -> set[str]:
    """Variables assigned once in ``fn``, by a non-zero constant: wherever one is read,
    that is its value (a divisor that cannot trap)."""
    defs: dict[str, list[Instr]] = {p: [] for p, _ in fn.params}
    for instr in fn.instrs():
        if instr.dest:
            defs.setdefault(instr.dest, []).append(instr)
    return {name for name, ds in defs.items() if len(ds) == 1 and ds[0].op == "const"
            and ds[0].value not in (0, False) and name not in dict(fn.params)}


def _quiet(instr: Instr, safe_divisors: set[str]) -> bool:
    """Can ``instr`` neither print nor stop the program (nor leave the frame)?"""
    if instr.op in ("div", "rem"):
        return instr.args[1] in safe_divisors
    return instr.op not in ("print", "ret", "throw", "enter", "leave") and not may_trap(instr.op)


def _next_step(body: list[Any], i: int, labels: dict[str, int], safe: set[str],
               staying: set[str]) -> list[int] | None:
    """From ``body[i]`` on: ``[]`` when a call of a function in ``staying`` comes before
    anything observable, the positions of the labels a jump goes to, or None (something
    observable, the end, or another call: it may be inlined, and print)."""
    while i < len(body):
        item = body[i]
        if isinstance(item, Label):
            i += 1
        elif item.op == "call":
            return [] if item.funcs and item.funcs[0] in staying else None
        elif item.op in ("jmp", "br"):
            return [labels[lb] for lb in item.labels]
        elif not _quiet(item, safe):
            return None
        else:
            i += 1
    return None


def followed_by_call(body: list[Any], k: int, safe: set[str], labels: dict[str, int],
                     staying: set[str]) -> bool:
    """Does every path from the call at ``body[k]`` reach a call that stays (of a function
    in ``staying``), with nothing observable (output, a possible trap, a return, a
    handler) and no loop before it? ``safe`` are the divisors known not to be zero,
    ``labels`` where each label is."""
    done: set[int] = set()
    on_path: set[int] = set()
    stack: list[tuple[int, list[int]]] = []
    first = _next_step(body, k + 1, labels, safe, staying)
    if first is None:
        return False
    stack.append((k + 1, list(first)))
    on_path.add(k + 1)
    while stack:  # depth-first over the jumps, explicit stack; a loop fails
        node, todo = stack[-1]
        if not todo:
            stack.pop()
            on_path.discard(node)
            done.add(node)
            continue
        nxt = todo.pop()
        if nxt in on_path or len(done) + len(on_path) > MAX_WALK:
            return False
        if nxt in done:
            continue
        step = _next_step(body, nxt, labels, safe, staying)
        if step is None:
            return False
        stack.append((nxt, list(step)))
        on_path.add(nxt)
    return True


def calls_after_a_call(body: list[Any], staying: set[str]) -> set[int]:
    """Positions of the calls in ``body`` that every path reaches only after a call that
    stays (of a function in ``staying``) in the same frame (a must problem over the
    blocks). That earlier call entered a frame one deeper: the depth limit allowed it, so
    a leaf called at that same depth cannot overflow."""
    def stays(instr: Instr) -> bool:
        return instr.op == "call" and bool(instr.funcs) and instr.funcs[0] in staying

    cfg = build_cfg(Function("f", [], None, body))  # (its instructions are copies)
    positions = iter(k for k, item in enumerate(body) if not isinstance(item, Label))
    # one fact: "a staying call has run", on every path (a must problem; none on entry)
    called = solve(cfg, available(cfg, lambda i: ("called",) if stays(i) else (),
                                  ("called",)))
    found: set[int] = set()
    for name, block in cfg.blocks.items():
        for instr, before in zip(block.instrs, called.points(name), strict=False):
            k = next(positions)
            if instr.op == "call" and before:
                found.add(k)
    return found
