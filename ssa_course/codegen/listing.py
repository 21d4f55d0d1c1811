"""Machine IR -> assembler text, the part both targets share: the walk that lays out a
function's blocks as lines.

A jump to the block laid out next is left out (it falls through), and ``jcc T; jmp F``
with ``T`` next becomes the opposite condition to ``F``; a loop's back edge (``F`` laid out
before, ``T`` after) becomes the taken conditional jump back plus one jump out. The
first instruction of each source line is preceded by a comment ``line N: <the line>``.
What differs between the targets is their :class:`Syntax` (:mod:`ssa_course.codegen.x86_64.emit`,
:mod:`ssa_course.codegen.aarch64.emit`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ssa_course.codegen.mir import LabelRef, MFunction, MInstr, MProgram
from ssa_course.codegen.names import MAIN_BODY, block_label, function_symbol


@dataclass(frozen=True, slots=True)
class Syntax:
    """A target's assembler text: ``comment`` starts a comment (``#``, ``//``); ``jump`` is
    the unconditional jump (``jmp``, ``b``); ``negate`` maps each condition a conditional
    jump may be inverted on to its opposite; ``header``: the program's first lines;
    ``main_entry``: what ``main`` does before its body (load the runtime's counters);
    ``far_entries``: runtime entries a conditional jump cannot reach (AArch64 ``b.cond``
    reaches 1 MiB): each function jumps to a stub of its own that jumps there;
    ``lines``: the text of one instruction (one line, or a few where one instruction
    cannot say it)."""

    comment: str
    jump: str
    negate: Mapping[str, str]
    header: tuple[str, ...]
    main_entry: tuple[str, ...]
    far_entries: frozenset[str]
    lines: Callable[[MFunction, MInstr], list[str]]


def _comment(syntax: Syntax, i: MInstr, lines: list[str], last: list[int | None]) -> list[str]:
    if i.line is None or i.line == last[0]:
        return []
    last[0] = i.line
    text = lines[i.line - 1].strip() if 0 < i.line <= len(lines) else ""
    return [f"    {syntax.comment} line {i.line}: {text}"]


def _target(i: MInstr) -> str | None:
    o = i.operands[0] if i.operands else None
    return o.name if isinstance(o, LabelRef) else None


def _negated(syntax: Syntax, i: MInstr, target: str) -> MInstr:
    """``i`` (a conditional jump) on the opposite condition, to ``target``."""
    return MInstr("jcc", [LabelRef(target), *i.operands[1:]], [], list(i.uses),
                  syntax.negate[i.cond or ""])


def function_text(fn: MFunction, syntax: Syntax, lines: list[str] | None = None
                  ) -> list[str]:
    """The assembly lines of one function (after allocation and frame layout)."""
    lines = lines or []
    sym = function_symbol(fn.name)
    out = ["", f"    .globl {sym}", f"{sym}:"]
    if fn.name == "main":  # the runtime's entry: the counters start from the runtime's data
        out += [*(f"    {x}" for x in syntax.main_entry), f"{MAIN_BODY}:"]
    last: list[int | None] = [None]
    before: set[str] = set()  # labels laid out up to here
    far: dict[str, str] = {}  # runtime entry -> this function's stub jumping to it

    def near(i: MInstr) -> MInstr:
        """``i``, or a copy jumping to the function's stub for a far runtime entry."""
        target = _target(i)
        if i.op != "jcc" or target not in syntax.far_entries:
            return i
        stub = far.setdefault(target, f"{block_label(fn.name, '')}far.{target}")
        return MInstr("jcc", [LabelRef(stub), *i.operands[1:]], [], list(i.uses), i.cond,
                      i.line, i.comment)

    for k, block in enumerate(fn.blocks):
        before.add(block.label)
        nxt = fn.blocks[k + 1].label if k + 1 < len(fn.blocks) else None
        out.append(f"{block.label}:" + (f"  {syntax.comment} handler" if block.handler
                                        else ""))
        instrs = block.instrs
        n = len(instrs)
        for j, i in enumerate(instrs):
            if i.op == "jmp" and j == n - 1 and _target(i) == nxt:
                continue  # falls through
            if (i.op == "jcc" and j == n - 2 and instrs[-1].op == "jmp"
                    and i.cond in syntax.negate):
                t, f = _target(i), _target(instrs[-1])
                if t == nxt and f is not None:
                    out.extend(f"    {x}" for x in syntax.lines(fn, _negated(syntax, i, f)))
                    break
                if f != nxt and f in before and t not in before and f is not None:
                    # a loop's back edge: the taken conditional jump, the way out once
                    out.extend(f"    {x}" for x in syntax.lines(fn, _negated(syntax, i, f)))
                    out.append(f"    {syntax.jump} {t}")
                    break
            out.extend(_comment(syntax, i, lines, last))
            body = syntax.lines(fn, near(i))
            if i.comment:
                body[-1] += f"  {syntax.comment} {i.comment}"
            out.extend(f"    {x}" for x in body)
    for entry, stub in far.items():
        out += [f"{stub}:", f"    {syntax.jump} {entry}"]
    return out


def program_text(program: MProgram, syntax: Syntax, lines: list[str] | None = None) -> str:
    """The code of every function, ready to be placed after the runtime's header."""
    out = list(syntax.header)
    for fn in program.functions.values():
        out.extend(function_text(fn, syntax, lines))
    return "\n".join(out) + "\n"
