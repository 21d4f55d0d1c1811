"""The sea of nodes (lessons 05-06): graph nodes, the type lattice, peepholes, GVN.

``sea_of_nodes(source)`` parses a Tiny program straight into graphs (peepholes on, or off
with ``optimize=False``); the result prints, draws, verifies and runs.
"""

from __future__ import annotations


def sea_of_nodes(source, optimize: bool = True, options=None):  # noqa: ANN001, ANN201
    """The graphs of a Tiny program (source text or Compilation), verified."""
    from ssa_course.pipeline import Compilation, compile_source
    from ssa_course.son.build import build_graphs

    comp = source if isinstance(source, Compilation) else compile_source(source)
    program = build_graphs(comp.ast, optimize, options)
    program.verify()
    return program
