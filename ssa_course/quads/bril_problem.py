"""The error the Bril checks raise before a reader locates it in the source."""

from __future__ import annotations

from ssa_course.quads.ir import Instr, Label


class BrilProblem(Exception):
    """A static error in ``function`` (None: the whole program) at ``item`` (None: the
    function itself), optionally about one ``field`` of it (``args``, ``type``, ...)."""

    def __init__(self, message: str, function: str | None = None,
                 item: Instr | Label | None = None, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.function = function
        self.item = item
        self.field = field
