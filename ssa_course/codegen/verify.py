"""The machine IR verifier: each broken invariant is named, with the function, block and
instruction that breaks it (:class:`~ssa_course.errors.VerifyError`).

Invariants, and when they hold:

- **block ends in a jump**: every block ends in ``jmp``/``ret`` (or a call of a runtime
  entry that never returns); a ``jcc`` in the middle of a block only goes to a trap stub or
  a runtime entry that never returns; ``succs`` lists exactly the labels the block's
  closing branches name (plus the handler an ``rt_enter`` installs).
- **operand kinds** legal for each opcode: no memory-to-memory operation, an immediate
  fits 32 bits sign-extended except in ``mov reg, imm``; shifts take an 8-bit count.
- **use defined on every path** (before allocation): every virtual register read has
  been written on every path from the entry.
- **calling convention**: a call of a Tiny function or a runtime entry finds each
  argument register it reads written since the previous call of its block.
- **stack aligned at calls** (after frame layout): rsp is a multiple of 16 at each call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ssa_course.codegen.emit import instr_text
from ssa_course.codegen.frame import frame_size
from ssa_course.codegen.liveness import Liveness
from ssa_course.codegen.minstr import NO_RETURN, fits32
from ssa_course.codegen.mir import (
    ARG_REGS,
    Imm,
    LabelRef,
    MBlock,
    Mem,
    MFunction,
    MInstr,
    MProgram,
    PReg,
    Slot,
    VReg,
)
from ssa_course.errors import VerifyError

# The conditions selection may emit: signed (l/g), unsigned (b/a: the bounds checks) and
# sign (s/ns: fuel and depth counters going negative).
CONDS = frozenset({"e", "ne", "l", "le", "g", "ge", "b", "be", "a", "ae", "s", "ns"})
R, M, I, L = "r", "m", "i", "l"  # operand kinds: register, memory, immediate, label
# op -> allowed kind strings, one character per operand ("i" is a 32-bit immediate)
# Missing on purpose: "mm" anywhere (x86 has no memory-to-memory ALU form) and "ir" or
# "im" (an immediate is never a destination) -- what a careless spill rewrite could make.
FORMS: dict[str, frozenset[str]] = {
    "mov": frozenset({"rr", "rm", "ri", "mr", "mi"}),
    "lea": frozenset({"rm"}),
    "movzx": frozenset({"rr", "rm"}), "movb": frozenset({"mr", "mi"}),
    "cmp": frozenset({"rr", "rm", "ri", "mr", "mi"}),
    "test": frozenset({"rr", "ri", "mr", "mi"}),
    "imul": frozenset({"rr", "rm"}),
    "imul3": frozenset({"rri", "rmi"}),
    "shl": frozenset({"ri", "mi"}), "sar": frozenset({"ri", "mi"}),
    "shr": frozenset({"ri", "mi"}),
    "neg": frozenset({"r", "m"}), "not": frozenset({"r", "m"}),
    "setcc": frozenset({"r", "m"}), "idiv": frozenset({"r", "m"}),
    "imul1": frozenset({"r", "m"}),
    "push": frozenset({"r", "m", "i"}), "pop": frozenset({"r", "m"}),
    "xchg": frozenset({"rr", "rm"}), "cqo": frozenset({""}), "ret": frozenset({""}),
    "call": frozenset({"l"}), "jmp": frozenset({"l"}), "jcc": frozenset({"l"}),
    **{op: frozenset({"rr", "rm", "ri", "mr", "mi"}) for op in ("add", "sub", "and", "or",
                                                                 "xor")},
}


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


def _where(fn: MFunction, label: str, k: int | None, instr: MInstr | None) -> str:
    if instr is None:
        return f"@{fn.name} block {label}"
    return f"@{fn.name} block {label} instruction {k} ({instr_text(fn, instr)})"


def _target(instr: MInstr) -> str | None:
    o = instr.operands[0] if instr.operands else None
    return o.name if isinstance(o, LabelRef) else None


def check_operands(fn: MFunction) -> None:
    for label, k, i, kinds, bad in operand_forms(fn, FORMS):
        # Only `mov r, imm64` holds a 64-bit immediate; anywhere else a wide constant
        # would be silently truncated by the assembler (or rejected).
        for o in i.operands:
            if isinstance(o, Imm) and not fits32(o.value) and not (
                    i.op == "mov" and kinds == "ri"):
                bad = True
            if isinstance(o, Imm) and i.op in ("shl", "sar", "shr") and \
                    not 0 <= o.value < 64:
                bad = True
        if i.op in ("jcc", "setcc") and i.cond not in CONDS:
            bad = True
        if bad:
            raise VerifyError("operand kinds legal for the opcode", _where(fn, label, k, i),
                              f"{i.op} with operands {kinds or 'none'}")


def _is_stub(fn: MFunction, label: str, blocks: dict[str, MBlock]) -> bool:
    block = blocks.get(label)
    return block is not None and not block.succs and bool(block.instrs) and \
        block.instrs[-1].op == "call" and _target(block.instrs[-1]) in NO_RETURN


def check_blocks(fn: MFunction) -> None:
    labels = {b.label for b in fn.blocks}
    blocks = fn.block_map()
    targets = {s for b in fn.blocks for s in b.succs}  # a trap stub is no block's successor
    for b in fn.blocks:
        if not b.instrs:
            raise VerifyError("block ends in a jump", _where(fn, b.label, None, None), "empty")
        last = b.instrs[-1]
        ends = last.op in ("jmp", "ret") or (last.op == "call" and _target(last) in NO_RETURN)
        if not ends:
            raise VerifyError("block ends in a jump", _where(fn, b.label, len(b.instrs) - 1,
                                                              last))
        # Collect the labels the code can actually go to and compare with `succs`: liveness
        # and allocation trust succs, so a branch missing from it would let a value's
        # register be reused on a path that still reads it.
        named: list[str] = []
        if last.op == "jmp":
            named.append(_target(last) or "")
        for k, i in enumerate(b.instrs[:-1]):
            if i.op in ("jmp", "ret"):
                raise VerifyError("block ends in a jump", _where(fn, b.label, k, i),
                                  "a jump in the middle of the block")
            t = _target(i) or ""
            if i.op == "jcc" and t not in NO_RETURN:
                if k == len(b.instrs) - 2 and last.op == "jmp" and t in b.succs:
                    named.insert(0, t)
                elif not _is_stub(fn, t, blocks) or t in targets:
                    raise VerifyError("block ends in a jump", _where(fn, b.label, k, i),
                                      "a conditional jump in the middle of the block goes "
                                      "to a block that returns")
            # A try's handler is a successor too: a throw inside the try lands there, so
            # values live into the handler must be live across the try's blocks.
            if i.op == "call" and _target(i) == "rt_enter":
                lea = b.instrs[k - 1] if k else None
                if lea and lea.op == "lea" and isinstance(lea.operands[1], Mem):
                    named.append(lea.operands[1].symbol or "")
        if sorted(named) != sorted(b.succs) or any(s not in labels for s in b.succs):
            raise VerifyError("succs match the block's branches", _where(fn, b.label, None,
                                                                         None),
                              f"branches name {named}, succs are {b.succs}")


def check_defined(fn: MFunction) -> None:
    """A register read before any write on some path is live at the entry: the one
    liveness of machine code (:class:`~ssa_course.codegen.liveness.Liveness`), then a walk
    from the entry to the first such read to name it."""
    entry = fn.blocks[0].label
    # Live at the entry = read on some path before any write: exactly "used undefined".
    # The lowest numbered one is reported, so the message is the same in every run.
    undefined = [r for r in Liveness(fn).live_in[entry] if isinstance(r, VReg)]
    if undefined:
        _report_undefined(fn, min(undefined, key=lambda r: r.id))


def _report_undefined(fn: MFunction, v: VReg) -> None:
    """Walk from the entry along paths that have not written ``v`` to its first read."""
    blocks = fn.block_map()
    seen = {fn.blocks[0].label}
    todo = [fn.blocks[0]]
    while todo:
        b = todo.pop()
        for k, i in enumerate(b.instrs):
            if any(r is v for r in i.uses):
                raise VerifyError("every use defined on every path", _where(fn, b.label, k, i),
                                  f"{v} may be undefined here")
            if any(r is v for r in i.defs):
                break
        else:
            for t in b.succs:
                if t not in seen:
                    seen.add(t)
                    todo.append(blocks[t])


def check_calls(fn: MFunction, arity: dict[str, int]) -> None:
    """Each argument register a call reads was written since the last call on every path
    (a forward must-analysis: after allocation the copy into it may sit in another block,
    or have vanished because the value was computed right there)."""
    preds: dict[str, list[str]] = {b.label: [] for b in fn.blocks}
    for b in fn.blocks:
        for t in b.succs:
            preds[t].append(b.label)
    out: dict[str, frozenset[str] | None] = {b.label: None for b in fn.blocks}

    def flow(n: int, report: bool) -> frozenset[str] | None:
        b = fn.blocks[n]
        # A path not looked at yet says nothing (optimistic: "everything written"), so it
        # is left out of the meet. Reading it as "nothing written" would be pessimistic,
        # and in a loop whose latch is laid out before its header (jumps.place_latches)
        # that underestimate goes round the back edge and never recovers.
        known = [w for p in preds[b.label] if (w := out[p]) is not None]
        # A must-analysis, so the meet is intersection (written on *every* path). The
        # entry starts with all argument registers written: the caller set them.
        if n == 0:
            written = set(ARG_REGS).intersection(*known)
        elif known:
            written = set(frozenset.intersection(*known))
        else:
            return None  # no path from the entry reaches it (yet): nothing to check
        for k, i in enumerate(b.instrs):
            if i.op == "call":
                sym = _target(i) or ""
                want = [r.name for r in i.uses if isinstance(r, PReg) and r.name in ARG_REGS]
                if report and sym in arity and len(want) != min(arity[sym], len(ARG_REGS)):
                    raise VerifyError("calling convention respected", _where(fn, b.label, k, i),
                                      f"{sym} takes {arity[sym]} arguments")
                missing = [r for r in want if r not in written]
                if report and missing:
                    raise VerifyError("calling convention respected", _where(fn, b.label, k, i),
                                      f"argument register {missing[0]} not set before the call")
                # The call clobbers every caller-saved register, argument registers included:
                # the next call must set its own again.
                written = set()
                continue
            written |= {r.name for r in i.defs if isinstance(r, PReg)}
        return frozenset(written)

    # Iterate silently to the fixpoint, then one reporting pass over the settled facts:
    # reporting during iteration could blame a call whose predecessors were not done yet.
    changed = True
    while changed:
        changed = False
        for n, b in enumerate(fn.blocks):
            new = flow(n, False)
            if out[b.label] != new:
                out[b.label] = new
                changed = True
    for n in range(len(fn.blocks)):
        flow(n, True)


def check_alignment(fn: MFunction) -> None:
    """rsp % 16 == 0 at every call (after :func:`ssa_course.codegen.frame.layout`)."""
    # Track how far rsp is below the caller's rsp: 8 on entry (the return address), then
    # `body` once the prologue ran (return address, rbp, saves, slots). The caller's rsp
    # was 16-aligned at its call (System V), so ours is aligned exactly when depth % 16 == 0.
    body = 16 + 8 * len(fn.used_callee_saved) + frame_size(fn)
    for n, b in enumerate(fn.blocks):
        depth = 8 if n == 0 else body  # bytes below the caller's rsp
        for k, i in enumerate(b.instrs):
            first = i.operands[0] if i.operands else None
            if i.op == "push":
                depth += 8
            elif i.op == "pop":
                depth -= 8
            elif i.op in ("sub", "add") and first == PReg("rsp"):
                size = i.operands[1].value if isinstance(i.operands[1], Imm) else 0
                depth += size if i.op == "sub" else -size
            elif i.op in ("mov", "lea") and first == PReg("rsp"):
                m = i.operands[1]
                depth = 16 - (m.disp if isinstance(m, Mem) else 0)
            elif i.op == "call" and depth % 16:
                raise VerifyError("stack 16-byte aligned at calls", _where(fn, b.label, k, i),
                                  f"rsp is {depth % 16} bytes off")


def verify_function(fn: MFunction, *, allocated: bool = False, laid_out: bool = False,
                    arity: dict[str, int] | None = None) -> None:
    """Check ``fn``; ``allocated``/``laid_out`` say how far the back end has got."""
    # Definedness is checked on virtual registers only: after allocation one physical
    # register holds many values, and "written on every path" no longer means one value.
    check_blocks(fn)
    check_operands(fn)
    if not allocated:
        check_defined(fn)
    check_calls(fn, arity or {})
    if laid_out:
        check_alignment(fn)


def verify_program(program: MProgram, *, allocated: bool = False,
                   laid_out: bool = False) -> None:
    from ssa_course.codegen.names import call_symbol

    arity = {call_symbol(n): len(f.params) for n, f in program.functions.items()}
    for fn in program.functions.values():
        verify_function(fn, allocated=allocated, laid_out=laid_out, arity=arity)
