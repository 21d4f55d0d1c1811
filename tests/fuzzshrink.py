"""Shrink a Tiny program while a predicate still holds (delta debugging over its structure).

The generator writes one statement per line and puts ``{`` at the end and ``}`` at the start
of lines, so statements, blocks and else/catch arms are line ranges. :func:`shrink` tries,
greedily and repeatedly until nothing more helps: deleting a statement or a whole compound
statement (function definitions included), replacing a compound statement by one of its
arms' bodies, deleting an ``else``/``else if`` arm, and simplifying expressions inside a line
(a parenthesised group or a call becomes ``0``/``1``/``true``/``false`` or one operand,
a ``print`` loses an argument, a literal becomes ``0``/``1``). The predicate decides what is
kept, so it must also reject candidates that no longer compile. Nothing here knows Tiny's
semantics or imports ``ssa_course``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from itertools import pairwise

Lines = list[str]
Predicate = Callable[[str], bool]

_BINARY = re.compile(r"\s(\|\||&&|==|!=|<=|>=|<|>|\+|-|\*|/|%)\s")
_INT = re.compile(r"(?<![\w.])\d+(?!\w)")
_CALLISH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\s*$")
_KEYWORDS = ("if", "while", "for", "catch", "print")
# A name read in an expression: not declared here, not a field, not a call, not a keyword.
_NAME = re.compile(r"(?<![\w.])(?<!var )(?<!fn )[A-Za-z_]\w*(?![\w(.])(?!\s*[:{])")
_RESERVED = {"var", "fn", "if", "else", "while", "for", "break", "continue", "return",
             "print", "struct", "new", "len", "true", "false", "try", "catch", "throw",
             "int", "bool"}


def _text(lines: Lines) -> str:
    return "\n".join(lines) + "\n"


def _closes(line: str) -> bool:
    return line.lstrip().startswith("}")


def _opens(line: str) -> bool:
    return line.rstrip().endswith("{")


def units(lines: Lines) -> list[tuple[int, int, list[int]]]:
    """Statement ranges ``(first, last, arm_headers)``; simple statements have no arms."""
    out: list[tuple[int, int, list[int]]] = []
    stack: list[tuple[int, list[int]]] = []
    for i, line in enumerate(lines):
        if _closes(line):
            if not stack:
                continue
            if _opens(line):  # "} else {", "} catch (e) {": another arm of the same unit
                stack[-1][1].append(i)
                continue
            start, arms = stack.pop()
            out.append((start, i, arms))
        elif _opens(line):
            stack.append((i, [i]))
        elif line.strip():
            out.append((i, i, []))
    return sorted(out, key=lambda u: (u[0], -u[1]))


def _structural(lines: Lines) -> Iterator[Lines]:
    for first, last, arms in units(lines):
        yield lines[:first] + lines[last + 1:]
        if not arms:
            continue
        bounds = arms + [last]
        for a, b in pairwise(bounds):  # keep one arm's body, drop the statement
            body = lines[a + 1:b]
            yield lines[:first] + [_dedent(x) for x in body] + lines[last + 1:]
        for a, b in pairwise(bounds[1:]):  # drop an else/else-if/catch arm
            yield lines[:a] + lines[b:]


def _dedent(line: str) -> str:
    return line[4:] if line.startswith("    ") else line


def _groups(line: str) -> list[tuple[int, int]]:
    """Spans ``(open, close)`` of balanced parentheses in ``line``."""
    spans, stack = [], []
    for i, ch in enumerate(line):
        if ch == "(":
            stack.append(i)
        elif ch == ")" and stack:
            spans.append((stack.pop(), i))
    return spans


def _top_level_split(inner: str) -> list[str]:
    """Operands of a single top-level binary operator in ``inner`` (else ``[]``)."""
    depth, cut = 0, []
    for m in _BINARY.finditer(inner):
        depth = sum(inner[:m.start()].count(c) for c in "([{") - \
            sum(inner[:m.start()].count(c) for c in ")]}")
        if depth == 0:
            cut.append(m)
    if len(cut) != 1:
        return []
    return [inner[:cut[0].start()].strip(), inner[cut[0].end():].strip()]


def _line_edits(line: str) -> Iterator[str]:
    for open_, close in sorted(_groups(line), key=lambda s: s[0] - s[1]):
        before, inner, after = line[:open_], line[open_ + 1:close], line[close + 1:]
        head = _CALLISH.search(before)
        if head and head.group().strip() in _KEYWORDS:
            if head.group().strip() == "print":
                yield from _drop_args(before, inner, after)
            continue  # a statement's own parentheses, not an expression
        start = head.start() if head else open_
        for simpler in ("0", "1", "true", "false"):
            yield line[:start] + simpler + after
        if not head:
            for operand in _top_level_split(inner):
                yield before + operand + after
            yield before + inner + after
    for m in _INT.finditer(line):
        if m.group() not in ("0", "1"):
            for simpler in ("0", "1"):
                yield line[:m.start()] + simpler + line[m.end():]
    for m in _NAME.finditer(line):  # a variable read becomes a constant
        if m.group() not in _RESERVED and not line[m.end():].lstrip().startswith("="):
            for simpler in ("0", "true"):
                yield line[:m.start()] + simpler + line[m.end():]


def _drop_args(before: str, inner: str, after: str) -> Iterator[str]:
    args, depth, cur = [], 0, ""
    for ch in inner:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        args.append(cur.strip())
    for k in range(len(args)):
        yield f"{before}({', '.join(args[:k] + args[k + 1:])}){after}"


def _expressions(lines: Lines) -> Iterator[Lines]:
    for i, line in enumerate(lines):
        for edited in _line_edits(line):
            if edited != line:
                yield lines[:i] + [edited] + lines[i + 1:]


def shrink(source: str, predicate: Predicate, *, seconds: float = 120.0,
           max_tests: int = 5000) -> str:
    """The smallest program found (by greedy passes) for which ``predicate`` holds.

    ``predicate(source)`` must hold on entry. Stops early after ``seconds`` or
    ``max_tests`` predicate calls and returns the best program so far.
    """
    deadline = time.monotonic() + seconds
    lines, tests = source.rstrip("\n").split("\n"), 0
    progress = True
    while progress:
        progress = False
        for candidates in (_structural, _expressions):
            index = 0  # resume near the last success instead of starting over
            while True:
                if time.monotonic() > deadline or tests >= max_tests:
                    return _text(lines)
                found = None
                for k, cand in enumerate(candidates(lines)):
                    if k < index or len(_text(cand)) >= len(_text(lines)):
                        continue
                    tests += 1
                    if predicate(_text(cand)):
                        found = k
                        lines = cand
                        break
                    if time.monotonic() > deadline or tests >= max_tests:
                        return _text(lines)
                if found is None:
                    break
                index, progress = found, True
    return _text(lines)
