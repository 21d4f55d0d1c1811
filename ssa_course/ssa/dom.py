"""Dominators for lesson 03: the names the lesson and the exercises import.

The algorithms live in :mod:`ssa_course.quads.dom` (Cooper, Harvey & Kennedy, as the lesson
explains them) and :mod:`ssa_course.quads.domtree` (the linear-time version the stages use):
dominance is a property of a control-flow graph, so quads passes (loop depths, Bril checks)
use it too, and the layers point one way (``quads`` never imports ``ssa``).
"""

from __future__ import annotations

from ssa_course.quads.dom import (
    Node,
    dominance_frontiers,
    dominates,
    dominator_tree,
    immediate_dominators,
    iterated_frontier,
    postorder,
    predecessors,
    preorder,
)
from ssa_course.quads.domtree import Dominance, fast_immediate_dominators

__all__ = [
    "Dominance", "Node", "dominance_frontiers", "dominates", "dominator_tree",
    "fast_immediate_dominators", "immediate_dominators", "iterated_frontier", "postorder",
    "predecessors", "preorder",
]
