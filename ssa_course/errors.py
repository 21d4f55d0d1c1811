"""Errors a user of ssa_course can meet, each with a message that explains itself.

* :class:`SourceError` -- a compile error located in the program text
  (``file:line:col: error: ...``, the source line, a caret under the spot).
* :class:`RuntimeTrap` -- a Tiny runtime error (``error: division by zero at 4:15``),
  an uncaught exception, or a resource limit (step limit, stack overflow).
* :class:`VerifyError` -- an IR verifier found a broken invariant; it names it.
* :class:`UsageError` -- a command-line mistake (missing file, bad argument).

All of them derive from :class:`SsaCourseError`; the CLI turns each into one clear
message and an exit status (1 for compile/usage errors, 2 for runtime errors).
"""

from __future__ import annotations

from dataclasses import dataclass


class SsaCourseError(Exception):
    """Base class of every error meant for the user, not for a traceback."""

    exit_status = 1

    def render(self) -> str:
        """The text shown to the user (on standard error)."""
        return str(self)


@dataclass(frozen=True, slots=True)
class Pos:
    """A position in a source text: line and column count from 1, ``length`` characters wide."""

    line: int
    col: int
    length: int = 1

    def __str__(self) -> str:
        return f"{self.line}:{self.col}"


_MAX_SHOWN = 120  # characters of a source line shown under a message


class SourceError(SsaCourseError):
    """A compile error at ``pos`` in ``source`` (the whole text), from file ``filename``."""

    exit_status = 1

    def __init__(self, message: str, pos: Pos, source: str = "", filename: str = "<input>"):
        super().__init__(message)
        self.message = message
        self.pos = pos
        self.source = source
        self.filename = filename

    def render(self) -> str:
        head = f"{self.filename}:{self.pos.line}:{self.pos.col}: error: {self.message}"
        lines = self.source.split("\n")
        if not 1 <= self.pos.line <= len(lines):
            return head
        text = lines[self.pos.line - 1].rstrip("\r").expandtabs(1)
        width = max(1, min(self.pos.length, len(text) - self.pos.col + 1))
        col = self.pos.col - 1
        if len(text) > _MAX_SHOWN:  # a huge line: show a window around the spot
            start = max(0, col - _MAX_SHOWN // 2)
            end = start + _MAX_SHOWN
            text = ("..." if start else "") + text[start:end] + ("..." if end < len(text) else "")
            col = col - start + (3 if start else 0)
            width = min(width, _MAX_SHOWN // 2)
        marker = " " * col + "^" + "~" * (width - 1)
        return f"{head}\n{text}\n{marker}"

    def __str__(self) -> str:
        return self.render()


class RuntimeTrap(SsaCourseError):
    """A Tiny runtime error: the program stops with exit status 2.

    ``message`` is one of LANGUAGE.md's runtime messages (``division by zero``,
    ``index out of bounds``, ``negative array length``, ``unset element``,
    ``uncaught exception 7``, ``step limit exceeded``, ``stack overflow``);
    ``pos`` is where it happened, when the executor knows.
    """

    exit_status = 2

    def __init__(self, message: str, pos: Pos | tuple[int, int] | None = None):
        super().__init__(message)
        self.message = message
        if isinstance(pos, tuple):
            pos = Pos(pos[0], pos[1])
        self.pos = pos

    def render(self) -> str:
        if self.pos is None:
            return f"error: {self.message}"
        return f"error: {self.message} at {self.pos.line}:{self.pos.col}"

    def __str__(self) -> str:
        return self.render()


class VerifyError(SsaCourseError):
    """An IR verifier found a broken invariant.

    ``invariant`` is a short name of the rule (``"use dominated by def"``), ``where`` names
    the statement, node or block that breaks it.
    """

    exit_status = 3

    def __init__(self, invariant: str, where: str, detail: str = ""):
        msg = f"verify: {invariant}: {where}"
        if detail:
            msg += f" ({detail})"
        super().__init__(msg)
        self.invariant = invariant
        self.where = where
        self.detail = detail


class UsageError(SsaCourseError):
    """A mistake in how a command or function was called (bad file, flag or argument)."""

    exit_status = 1

    def render(self) -> str:
        return f"error: {self}"


class ArgumentTypeError(UsageError, TypeError):
    """A library function got a value of the wrong type (``run(prog, steps="10")``).

    It is a :class:`TypeError` for Python code and a :class:`UsageError` for the tools,
    and its message names the function and the parameter."""

    def render(self) -> str:
        return f"error: {self}"


class ArgumentValueError(UsageError, ValueError):
    """A library function got a value of the right type but outside what it accepts
    (``run(prog, via="nope")``, ``steps=-1``); the message lists what is accepted."""

    def render(self) -> str:
        return f"error: {self}"
