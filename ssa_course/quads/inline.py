"""Inlining small leaf functions (the ``inline`` pass of ``ssa-course opt``).

A ``call`` costs the caller more than the work it asks for: the ``call`` and the callee's
``ret`` are executed instructions (Bril's ``brili -p`` counts both), and everything the
optimizer knows stops at the call -- a constant argument is not folded into the callee,
an expression the callee recomputes is not shared, a loop around the call cannot hoist the
callee's invariant work. Inlining replaces the call by a renamed copy of the callee's body:

* each parameter becomes a fresh variable, assigned from its argument by an ``id`` (the
  sea of nodes built next sees through copies, so they cost nothing after ``sccp``);
* every other variable and label of the callee gets a fresh name, so the copy cannot
  clash with the caller or with another copy;
* ``ret v`` becomes ``dest = id v`` and a ``jmp`` to a new label right after the copy
  (running off the end of the callee falls through to it), ``ret`` without a value (or a
  value nobody receives) just the ``jmp``; layout removes the jumps that go nowhere.

What is inlined, and why that is safe:

* only *leaf* callees (they call nobody), small (:data:`MAX_CALLEE` instructions, or
  :data:`MAX_SINGLE` when the program calls them from one place: the copy duplicates
  nothing) and free of exception regions (``enter``/``leave``/``catch``: a handler
  belongs to its frame). A ``throw`` may stay: with no handler of its own, the callee's
  exception unwinds into the caller's innermost handler, which is exactly where the
  inlined ``throw`` goes. Leaves of leaves become leaves, so the pass repeats until
  nothing changes (bottom-up);
* only callees whose every read is of a variable assigned on *every* path before it (a
  must-be-defined data-flow problem): Bril may read a variable that one path leaves
  unassigned -- an error in the callee's fresh frame, but in an inlined copy it would read
  what the previous call left behind;
* runtime errors keep their message and position (the copied instructions keep ``pos``),
  output happens in the same order, and no instruction is executed more often;
* the **call depth** (LANGUAGE.md, "Limits"): an inlined call no longer counts, so a run
  that stopped with ``stack overflow`` when entering the callee must still stop. We inline
  a call only where that cannot happen differently:

  - the caller is not reachable from any recursive function: its depth is at most the
    number of functions, far below the limit, so the callee's frame could never overflow;
  - or every path from the call reaches a call of a *recursive* function (one on a
    call-graph cycle: never a leaf, so never inlined itself) with nothing observable in
    between (no output, nothing that may trap, no loop): if entering the callee
    overflowed, entering that call does too, at the same depth, before anything is seen;
  - or every path to the call passed such a call of a recursive function first, in the
    same frame: that call entered a frame one deeper and the limit allowed it.

  Only calls that certainly stay may vouch: a leaf call vouching for another could be
  inlined too, and its body print before the overflow.

The pass works on ordinary quads (no phis: ``Compilation.quads`` is out of SSA) and is run
before ``parse``, so everything after it optimizes across the former call boundary.
"""

from __future__ import annotations

from ssa_course.quads.cfg import build_cfg
from ssa_course.quads.ir import Function, Instr, Label, Program, may_trap

MAX_CALLEE = 60  # instructions in a callee worth copying into its callers
MAX_SINGLE = 400  # ... and in a callee called from one place (nothing is duplicated)
MAX_CALLER = 4000  # a caller stops growing here
MAX_ROUNDS = 8  # leaves of leaves of ... inlined bottom-up, at most this deep
MAX_WALK = 32  # labels looked at for the call that must follow a call (recursive callers)
_NEVER = frozenset({"enter", "leave", "catch", "phi", "set", "get", "undef", "call"})


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
    """Functions on a call-graph cycle. A call of one is never inlined (the callee always
    calls the next function of its cycle, so it is never a leaf): such calls stay, and can
    vouch for the depth of the calls around them."""
    reach = call_graph_reach(program)
    return {name for name in reach if name in reach[name]}


def deep_functions(program: Program) -> set[str]:
    """Functions on a call-graph cycle, or called (transitively) from one: only these can
    run at an unbounded call depth."""
    reach = call_graph_reach(program)
    deep = {name for name in reach if name in reach[name]}
    for name in list(deep):
        deep |= reach[name]
    return deep


def all_reads_defined(fn: Function) -> bool:
    """Is every variable read by ``fn`` assigned on every path that reaches the read?"""
    cfg = build_cfg(fn)
    every = {p for p, _ in fn.params} | {i.dest for i in fn.instrs() if i.dest}
    defined_in: dict[str, set[str]] = {name: set(every) for name in cfg.blocks}
    defined_in[cfg.entry] = {p for p, _ in fn.params}
    changed = True
    while changed:  # a must-be-defined problem: intersect over predecessors
        changed = False
        for name, block in cfg.blocks.items():
            if name != cfg.entry:
                preds = [defined_out(cfg.blocks[p].instrs, defined_in[p])
                         for p in block.preds]
                new = set.intersection(*preds) if preds else set(every)
                if new != defined_in[name]:
                    defined_in[name], changed = new, True
    for name in cfg.reachable():
        known = set(defined_in[name])
        for instr in cfg.blocks[name].instrs:
            if any(a not in known for a in instr.args):
                return False
            if instr.dest:
                known.add(instr.dest)
    return True


def defined_out(instrs: list[Instr], defined: set[str]) -> set[str]:
    return defined | {i.dest for i in instrs if i.dest}


def inlinable(fn: Function, sites: int) -> bool:
    """May ``fn`` be copied into its callers (``sites`` calls of it in the program)? Small
    enough -- or called from one place only, where the copy duplicates nothing -- a leaf,
    without handlers, and every read defined on every path."""
    instrs = fn.instrs()
    limit = MAX_SINGLE if sites == 1 else MAX_CALLEE
    return (len(instrs) <= limit and not any(i.op in _NEVER for i in instrs)
            and all_reads_defined(fn))


def _names(fn: Function) -> set[str]:
    taken = {p for p, _ in fn.params}
    for item in fn.body:
        if isinstance(item, Label):
            taken.add(item.name)
        else:
            taken.update(item.args)
            if item.dest:
                taken.add(item.dest)
    return taken


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


def _next_step(body: list, i: int, labels: dict[str, int], safe: set[str],
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


def followed_by_call(body: list, k: int, safe: set[str], labels: dict[str, int],
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


def calls_after_a_call(body: list, staying: set[str]) -> set[int]:
    """Positions of the calls in ``body`` that every path reaches only after a call that
    stays (of a function in ``staying``) in the same frame (a must problem over the
    blocks). That earlier call entered a frame one deeper: the depth limit allowed it, so
    a leaf called at that same depth cannot overflow."""
    blocks: list[list[int]] = [[]]
    label_block: dict[str, int] = {}
    for k, item in enumerate(body):
        if isinstance(item, Label):
            if blocks[-1]:
                blocks.append([])
            label_block[item.name] = len(blocks) - 1
        else:
            blocks[-1].append(k)
            if item.is_terminator():
                blocks.append([])
    succs: list[list[int]] = []
    for b, ks in enumerate(blocks):
        last = body[ks[-1]] if ks else None
        if last is not None and last.op in ("jmp", "br", "enter"):
            succs.append([label_block[lb] for lb in last.labels])
        elif last is not None and last.op in ("ret", "throw"):
            succs.append([])
        else:
            succs.append([b + 1] if b + 1 < len(blocks) else [])
    preds: list[list[int]] = [[] for _ in blocks]
    for b, ss in enumerate(succs):
        for t in ss:
            preds[t].append(b)
    def stays(k: int) -> bool:
        return body[k].op == "call" and bool(body[k].funcs) and body[k].funcs[0] in staying

    has_call = [any(stays(k) for k in ks) for ks in blocks]
    called_in = [b != 0 for b in range(len(blocks))]  # optimistic start, entry: no call yet
    changed = True
    while changed:
        changed = False
        for b in range(1, len(blocks)):
            new = all(called_in[p] or has_call[p] for p in preds[b]) if preds[b] else False
            if new != called_in[b]:
                called_in[b], changed = new, True
    found: set[int] = set()
    for b, ks in enumerate(blocks):
        seen = called_in[b]
        for k in ks:
            if body[k].op == "call" and seen:
                found.add(k)
            seen = seen or stays(k)
    return found


def _copy_body(site: Instr, callee: Function, taken: set[str], tag: str) -> list:
    """The callee's body renamed for one call site, ending at a fresh label."""
    rename: dict[str, str] = {}

    def fresh(name: str) -> str:
        if name not in rename:
            base, n = f"{name}.{tag}", 0
            new = base
            while new in taken:
                n += 1
                new = f"{base}.{n}"
            taken.add(new)
            rename[name] = new
        return rename[name]

    done = fresh(f"{callee.name}.done")
    out: list = []
    for (param, ty), arg in zip(callee.params, site.args, strict=True):
        out.append(Instr("id", fresh(param), ty, [arg], pos=site.pos, line=site.line))
    for item in callee.body:
        if isinstance(item, Label):
            out.append(Label(fresh(item.name)))
            continue
        new = item.copy()
        new.args = [fresh(a) for a in new.args]
        new.dest = fresh(new.dest) if new.dest else None
        new.labels = [fresh(lb) for lb in new.labels]
        if new.op == "ret":
            if site.dest and new.args:
                out.append(Instr("id", site.dest, site.type, [new.args[0]], pos=item.pos,
                                 line=item.line))
            out.append(Instr("jmp", labels=[done], line=item.line))
        else:
            out.append(new)
    out.append(Label(done))
    return out


def inline_into(fn: Function, program: Program, leaves: set[str], deep: set[str],
                staying: set[str], counter: list[int]) -> Function:
    """``fn`` with every call of a function in ``leaves`` that is safe to inline replaced
    by a copy of its body (see the module docstring)."""
    size = len(fn.instrs())
    taken = _names(fn)
    safe = nonzero_constants(fn)
    labels = {item.name: i for i, item in enumerate(fn.body) if isinstance(item, Label)}
    after_call = calls_after_a_call(fn.body, staying) if fn.name in deep else set()
    body: list = []
    for k, item in enumerate(fn.body):
        callee = (program.functions.get(item.funcs[0]) if isinstance(item, Instr)
                  and item.op == "call" and item.funcs else None)
        if (callee is None or callee.name not in leaves or callee.name == fn.name
                or size + len(callee.body) > MAX_CALLER
                or (fn.name in deep and k not in after_call
                    and not followed_by_call(fn.body, k, safe, labels, staying))):
            body.append(item)
            continue
        counter[0] += 1
        size += len(callee.body)
        body.extend(_copy_body(item, callee, taken, f"i{counter[0]}"))
    return Function(fn.name, list(fn.params), fn.ret, body)


def inline_calls(program: Program) -> tuple[Program, int]:
    """Inline small leaf functions into their callers, bottom-up; returns the new program
    and how many calls were replaced."""
    deep = deep_functions(program)
    staying = recursive_functions(program)
    counter = [0]
    for _ in range(MAX_ROUNDS):
        sites: dict[str, int] = {}
        for fn in program.functions.values():
            for i in fn.instrs():
                if i.op == "call" and i.funcs:
                    sites[i.funcs[0]] = sites.get(i.funcs[0], 0) + 1
        leaves = {name for name, fn in program.functions.items()
                  if inlinable(fn, sites.get(name, 0))}
        before = counter[0]
        functions = {name: inline_into(fn, program, leaves, deep, staying, counter)
                     if calls_of(fn) & leaves else fn
                     for name, fn in program.functions.items()}
        program = Program(functions, program.structs)
        if counter[0] == before:
            break
    return program, counter[0]
