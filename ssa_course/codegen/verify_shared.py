"""What both targets' machine-IR verifiers share: the checks that read no opcode table,
and the one shape of their messages.

A target hands the checks its :class:`Rules` (its argument and result registers and how
it prints an instruction); :mod:`ssa_course.codegen.x86_64.verify` (x86-64) and
:mod:`ssa_course.codegen.aarch64.verify` add their own operand tables and stack rule.
Every message reads ``verify: <invariant>: @fn block L instruction k (<instruction in
the target's syntax>) (<detail>)``, or ``@fn block L`` where a whole block is at fault
(:class:`~ssa_course.errors.VerifyError` puts the parts together), so the same broken
invariant reads the same on both targets but for the registers and syntax.

Shared invariants:

- **block ends in a jump**: every block ends in ``jmp``/``ret`` (or a call of a runtime
  entry that never returns); a ``jcc`` in the middle of a block only goes to a trap stub or
  a runtime entry that never returns.
- **succs match the block's branches**: ``succs`` lists exactly the labels the block's
  closing branches name (plus the handler an ``rt_enter`` installs).
- **branches name a label**: no branch or call with an empty label.
- **every use defined on every path** (before allocation): every virtual register read
  has been written on every path from the entry.
- **calling convention respected**: a call of a Tiny function or a runtime entry finds
  each argument register it reads written since the previous call on every path, and a
  Tiny function is called with as many argument registers as it has parameters (up to
  the target's count). A call leaves only its value written (in the result register,
  when it returns one: x0 on AArch64 is also the first argument register), and a handler
  starts with only the thrown value (the result register).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ssa_course.codegen.liveness import Liveness
from ssa_course.codegen.minstr import NO_RETURN, RUNTIME_RESULTS
from ssa_course.codegen.mir import Imm, LabelRef, MBlock, Mem, MFunction, MInstr, PReg, Slot, VReg
from ssa_course.codegen.names import call_symbol
from ssa_course.errors import VerifyError
from ssa_course.quads.dataflow import Analysis, solve


@dataclass(frozen=True, slots=True)
class Rules:
    """What the shared checks need to know about a target: the registers that carry a
    call's first arguments (in order), the one a call's value comes back in, and the
    instruction printer of its listings."""

    arg_regs: tuple[str, ...]
    result: str
    text: Callable[[MFunction, MInstr], str]


@dataclass(frozen=True, slots=True)
class Callees:
    """What the calling-convention check knows of the functions a program calls, by call
    symbol: each Tiny function's count of parameters passed in integer registers (a
    float's travels in a float register), and which calls leave a value in the result
    register (Tiny functions that return one, and the runtime's allocators)."""

    arity: dict[str, int] = field(default_factory=dict)
    returning: frozenset[str] = RUNTIME_RESULTS


def program_callees(functions: dict[str, MFunction]) -> Callees:
    """The :class:`Callees` of a program's machine functions."""
    # a float parameter travels in a float register, not an integer argument register
    return Callees({call_symbol(n): len(f.params) - f.float_params
                    for n, f in functions.items()},
                   RUNTIME_RESULTS | {call_symbol(n) for n, f in functions.items()
                                      if f.returns_value})


# -- the one message shape ---------------------------------------------------------------

def where(rules: Rules, fn: MFunction, label: str, k: int | None = None,
          instr: MInstr | None = None) -> str:
    """``@fn block L`` or ``@fn block L instruction k (text)``: the place in a message."""
    if instr is None:
        return f"@{fn.name} block {label}"
    return f"@{fn.name} block {label} instruction {k} ({_text(rules, fn, instr)})"


def _text(rules: Rules, fn: MFunction, instr: MInstr) -> str:
    # The instruction at fault may be too broken for the listing printer (a branch with
    # no label, a missing operand): then its op alone names it.
    try:
        return rules.text(fn, instr)
    except (AssertionError, AttributeError, IndexError, KeyError, TypeError, ValueError):
        return instr.op


def broken(rules: Rules, invariant: str, fn: MFunction, label: str, k: int | None = None,
           instr: MInstr | None = None, detail: str = "") -> VerifyError:
    """The error for ``invariant`` broken at that place (raise it)."""
    return VerifyError(invariant, where(rules, fn, label, k, instr), detail)


# -- operand kinds: the walk both tables are read with -------------------------------------

R, M, I, L = "r", "m", "i", "l"  # operand kinds: register, memory, immediate, label


def operand_kind(o: object) -> str:
    """The letter of an operand in a ``FORMS`` string (both targets' tables use them)."""
    if isinstance(o, VReg | PReg):
        return R
    if isinstance(o, Mem | Slot):
        return M
    if isinstance(o, Imm):
        return I
    return L


def operand_forms(fn: MFunction, forms: dict[str, frozenset[str]],
                  kind: Callable[[object], str] = operand_kind
                  ) -> Iterator[tuple[str, int, MInstr, str, bool]]:
    """Each instruction of ``fn`` as (block label, index, instruction, its operands' kind
    string, whether its target's ``forms`` table lacks that form): the walk both targets'
    operand checks share before their own rules on values and conditions."""
    for b in fn.blocks:
        for k, i in enumerate(b.instrs):
            kinds = "".join(kind(o) for o in i.operands)
            allowed = forms.get(i.op)
            yield b.label, k, i, kinds, allowed is None or kinds not in allowed


def bad_operands(rules: Rules, fn: MFunction, label: str, k: int, i: MInstr,
                 kinds: str) -> VerifyError:
    """The error of an instruction whose operands its target does not take."""
    detail = f"{i.op} with operands {kinds or 'none'}"
    if i.cond:
        detail += f" and condition {i.cond}"
    return broken(rules, "operand kinds legal for the opcode", fn, label, k, i, detail)


# -- blocks ---------------------------------------------------------------------------------

def _target(instr: MInstr) -> str | None:
    o = instr.operands[0] if instr.operands else None
    return o.name if isinstance(o, LabelRef) else None


def _is_stub(label: str, blocks: dict[str, MBlock]) -> bool:
    block = blocks.get(label)
    return block is not None and not block.succs and bool(block.instrs) and \
        block.instrs[-1].op == "call" and _target(block.instrs[-1]) in NO_RETURN


def check_blocks(fn: MFunction, rules: Rules) -> None:
    labels = {b.label for b in fn.blocks}
    blocks = fn.block_map()
    targets = {s for b in fn.blocks for s in b.succs}  # a trap stub is no block's successor
    for b in fn.blocks:
        if not b.instrs:
            raise broken(rules, "block ends in a jump", fn, b.label, detail="empty")
        for k, i in enumerate(b.instrs):
            if any(isinstance(o, LabelRef) and o.name == "" for o in i.operands) or (
                    i.op in ("jmp", "jcc", "call") and _target(i) is None):
                raise broken(rules, "branches name a label", fn, b.label, k, i)
        last = b.instrs[-1]
        ends = last.op in ("jmp", "ret") or (last.op == "call" and _target(last) in NO_RETURN)
        if not ends:
            raise broken(rules, "block ends in a jump", fn, b.label, len(b.instrs) - 1, last)
        # Collect the labels the code can actually go to and compare with `succs`: liveness
        # and allocation trust succs, so a branch missing from it would let a value's
        # register be reused on a path that still reads it.
        named: list[str] = []
        if last.op == "jmp":
            named.append(_target(last) or "")
        for k, i in enumerate(b.instrs[:-1]):
            if i.op in ("jmp", "ret"):
                raise broken(rules, "block ends in a jump", fn, b.label, k, i,
                             "a jump in the middle of the block")
            t = _target(i) or ""
            if i.op == "jcc" and t not in NO_RETURN:
                if k == len(b.instrs) - 2 and last.op == "jmp" and t in b.succs:
                    named.insert(0, t)
                elif not _is_stub(t, blocks) or t in targets:
                    raise broken(rules, "block ends in a jump", fn, b.label, k, i,
                                 "a conditional jump in the middle of the block goes "
                                 "to a block that returns")
            # A try's handler is a successor too: a throw inside the try lands there, so
            # values live into the handler must be live across the try's blocks.
            if i.op == "call" and _target(i) == "rt_enter":
                lea = b.instrs[k - 1] if k else None
                if lea and lea.op == "lea" and isinstance(lea.operands[1], Mem):
                    named.append(lea.operands[1].symbol or "")
        if sorted(named) != sorted(b.succs) or any(s not in labels for s in b.succs):
            raise broken(rules, "succs match the block's branches", fn, b.label,
                         detail=f"branches name {named}, succs are {b.succs}")


# -- definedness ----------------------------------------------------------------------------

def check_defined(fn: MFunction, rules: Rules) -> None:
    """A register read before any write on some path is live at the entry: the one
    liveness of machine code (:class:`~ssa_course.codegen.liveness.Liveness`), then a walk
    from the entry to the first such read to name it."""
    entry = fn.blocks[0].label
    # Live at the entry = read on some path before any write: exactly "used undefined".
    # The lowest numbered one is reported, so the message is the same in every run.
    undefined = [r for r in Liveness(fn).live_in[entry] if isinstance(r, VReg)]
    if undefined:
        _report_undefined(fn, rules, min(undefined, key=lambda r: r.id))


def _report_undefined(fn: MFunction, rules: Rules, v: VReg) -> None:
    """Walk from the entry along paths that have not written ``v`` to its first read."""
    blocks = fn.block_map()
    seen = {fn.blocks[0].label}
    todo = [fn.blocks[0]]
    while todo:
        b = todo.pop()
        for k, i in enumerate(b.instrs):
            if any(r is v for r in i.uses):
                raise broken(rules, "every use defined on every path", fn, b.label, k, i,
                             f"{v} may be undefined here")
            if any(r is v for r in i.defs):
                break
        else:
            for t in b.succs:
                if t not in seen:
                    seen.add(t)
                    todo.append(blocks[t])


# -- the calling convention -----------------------------------------------------------------

def check_calls(fn: MFunction, callees: Callees, rules: Rules) -> None:
    """Each argument register a call reads was written since the last call on every path
    (a forward must-analysis: after allocation the copy into it may sit in another block,
    or have vanished because the value was computed right there)."""
    arg_regs, arity = rules.arg_regs, callees.arity
    blocks = {b.label: b for b in fn.blocks}
    entry = fn.blocks[0].label

    # A path not looked at yet says nothing (optimistic: "everything written", None), so it
    # is left out of the meet. Reading it as "nothing written" would be pessimistic, and
    # in a loop whose latch is laid out before its header (jumps.place_latches) that
    # underestimate goes round the back edge and never recovers. A must-analysis, so the
    # meet is intersection (written on *every* path).
    def meet(*facts: frozenset[str] | None) -> frozenset[str] | None:
        known = [w for w in facts if w is not None]
        return frozenset.intersection(*known) if known else None

    def flow(b: MBlock, written_in: frozenset[str] | None, report: bool
             ) -> frozenset[str] | None:
        """The registers written since the last call after ``b``, from those written on
        entry to it (the entry starts with all argument registers: the caller set them)."""
        if b.handler and b.label != entry:
            # A throw lands here from anywhere in the try with every caller-saved register
            # clobbered but the result register, which holds the thrown value.
            written = {rules.result}
        elif written_in is not None:
            written = set(written_in)
        else:
            return None  # no path from the entry reaches it (yet): nothing to check
        for k, i in enumerate(b.instrs):
            if i.op == "call":
                sym = _target(i) or ""
                want = [r.name for r in i.uses if isinstance(r, PReg) and r.name in arg_regs]
                if report and sym in arity and len(want) != min(arity[sym], len(arg_regs)):
                    raise broken(rules, "calling convention respected", fn, b.label, k, i,
                                 f"{sym} takes {arity[sym]} arguments")
                missing = [r for r in want if r not in written]
                if report and missing:
                    raise broken(rules, "calling convention respected", fn, b.label, k, i,
                                 f"argument register {missing[0]} not set before the call")
                # The call clobbers every caller-saved register, argument registers included:
                # the next call must set its own again. Only its value is written, in the
                # result register: on AArch64 that is x0, the first argument register, so
                # `f(g(x))` passes g's value on to f without a move.
                written = {rules.result} if sym in callees.returning else set()
                continue
            written |= {r.name for r in i.defs if isinstance(r, PReg)}
        return frozenset(written)

    # Solve silently to the fixpoint, then one reporting pass over the settled facts:
    # reporting during iteration could blame a call whose predecessors were not done yet.
    found = solve({b.label: b.succs for b in fn.blocks},
                  Analysis(True, None, meet, lambda label, w: flow(blocks[label], w, False),
                           frozenset(arg_regs)), entry)
    for b in fn.blocks:
        flow(b, found.top[b.label], True)
