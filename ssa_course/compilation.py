"""Loading a program and building its representations on demand.

A :class:`Compilation` starts from a Tiny or Bril text and computes each representation
the first time it is asked for (AST, quads, CFGs, ...), so the CLI, the stages, the
notebooks and the explorer all share one cache and one error story.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ssa_course.errors import UsageError
from ssa_course.quads import ir
from ssa_course.runtime import paused_gc
from ssa_course.srclines import split_lines
from ssa_course.tiny import ast
from ssa_course.tiny.types import Type

KINDS = ("tiny", "bril", "bril-json")


def kind_of(filename: str) -> str:
    """The kind of program a file holds, by its extension (``.tiny``, ``.bril``, ``.json``)."""
    ext = os.path.splitext(filename)[1].lower()
    if ext == ".bril":
        return "bril"
    if ext == ".json":
        return "bril-json"
    return "tiny"


@dataclass(eq=False)
class Compilation:
    """One program and every representation derived from it so far."""

    source: str
    filename: str = "<input>"
    kind: str = "tiny"
    _cache: dict[str, object] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.source, str) and "\r" in self.source:
            # CR LF (Windows) and a lone CR (classic Mac) end lines too: one newline each,
            # so every stage counts lines and columns the same way (issue 19)
            self.source = self.source.replace("\r\n", "\n").replace("\r", "\n")
        if self.kind not in KINDS and self.kind != "quads":
            raise UsageError(f"unknown program kind {self.kind!r} (expected one of {KINDS})")

    # -- the representations -------------------------------------------------

    @property
    def ast(self) -> ast.Program:
        """The checked Tiny AST (Tiny programs only)."""
        if self.kind != "tiny":
            raise UsageError(f"{self.filename} is a Bril program: it has no Tiny AST")
        from ssa_course.tiny import compile_tiny

        return self.cached("ast", lambda: compile_tiny(self.source, self.filename))

    @property
    def quads(self) -> ir.Program:
        """Quads: lowered from the AST, or read from Bril text/JSON.

        A Bril program in SSA form (``phi``, ``set``/``get``/``undef``) is translated out
        of it here (:mod:`ssa_course.quads.bril_ssa`), so every stage that builds its own
        SSA starts from plain quads, and a Bril read that may find no value becomes an
        explicit check first (:mod:`ssa_course.quads.undefined_reads`);
        :attr:`quads_as_written` keeps the original.
        """
        from ssa_course.quads.bril_ssa import out_of_ssa

        if self.kind == "tiny":  # Tiny's scopes: every read has a value
            return self.cached("quads", lambda: out_of_ssa(self.quads_as_written))
        from ssa_course.quads.undefined_reads import lower_undefined_reads

        return self.cached("quads", lambda: out_of_ssa(lower_undefined_reads(
            self.quads_as_written)))

    def bril_text(self) -> str:
        """:attr:`quads` printed as Bril text. A program :func:`from_quads` made (``opt``'s
        result) already has it: its source, printed from the same quads, when nothing had
        to be added to them (no undefined read made explicit, no SSA translated out)."""
        quads = self.quads
        if self.kind == "quads" and quads is self.quads_as_written:
            return self.source
        from ssa_course.quads.bril import to_bril_text

        return to_bril_text(quads)

    @property
    def quads_as_written(self) -> ir.Program:
        """The quads exactly as read (what the ``quads`` stage runs, like Bril's brili)."""
        return self.cached("quads-as-written", self._make_quads)

    def _make_quads(self) -> ir.Program:
        if self.kind == "tiny":
            from ssa_course.quads.lower import lower_program

            return lower_program(self.ast)
        from ssa_course.quads import bril

        # Validated and type-checked here, once: a bad program gets the same message in
        # every stage because no stage sees it.
        if self.kind == "bril":
            return bril.parse_bril_text(self.source, self.filename)
        return bril.parse_bril_json(self.source, self.filename)

    def check(self) -> None:
        """Compile far enough to report every compile error (raises SourceError), and
        say (UsageError) when there is no ``main`` to run: ``check``, ``run``,
        ``compile`` and ``opt`` all refuse such a program the same way."""
        if self.kind == "tiny":
            _ = self.ast  # the Tiny checker itself requires main
            return
        self._main_function()

    def _main_function(self) -> ir.Function:
        fn = self.quads.functions.get("main")
        if fn is None:
            raise UsageError(f"{self.filename}: no function '@main'")
        return fn

    def main_params(self) -> list[tuple[str, Type]]:
        """Names and types of ``main``'s parameters (the command-line arguments)."""
        if self.kind == "tiny":
            main = self.ast.functions["main"]
            return [(p.name, p.ty) for p in main.params]
        return list(self._main_function().params)

    def default_args(self) -> list[str] | None:
        """Arguments written in the program text (``// ARGS:`` or Bril's ``# ARGS:``)."""
        if self.kind == "quads":
            return None
        if self.kind == "bril":
            from ssa_course.quads.bril import bril_args

            return bril_args(self.source)
        for line in split_lines(self.source):
            stripped = line.strip()
            if stripped.startswith("// ARGS:"):
                return stripped[len("// ARGS:"):].split()
        return None

    def cached(self, key: str, build):
        """Memoise ``build()`` under ``key`` (stages use it for their artifacts).

        This is where the cyclic garbage collector is paused while a representation is built
        (see :class:`~ssa_course.runtime.paused_gc`): every representation a stage, a view or
        the explorer asks for is built through here.
        """
        if key not in self._cache:
            with paused_gc():
                self._cache[key] = build()
        return self._cache[key]


def from_quads(program: ir.Program, filename: str = "<input>") -> Compilation:
    """A compilation that starts from quads already built (kind ``"quads"``), e.g. what
    ``ssa-course opt`` made: every representation is then built from them, exactly as
    if their Bril text had been read (quads in SSA form are translated out of it)."""
    from ssa_course.quads.bril import to_bril_text

    comp = Compilation(to_bril_text(program), filename, "quads")
    comp._cache["quads-as-written"] = program
    return comp


def compile_source(source: str, filename: str = "<input>", kind: str | None = None) -> Compilation:
    """Wrap a program text; nothing is compiled until a representation is asked for."""
    return Compilation(source, filename, kind or kind_of(filename))


def load_file(path: str) -> Compilation:
    """Read a program file (``.tiny``, ``.bril`` or ``.json``; ``-`` for standard input)
    into a :class:`Compilation`."""
    from ssa_course.files import read_source

    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if path == "-":  # standard input: Bril if it looks like Bril, else Tiny
        from ssa_course import guess_kind

        text = read_source(path)
        return compile_source(text, "<stdin>", guess_kind(text) or "tiny")
    return compile_source(read_source(path), path)
