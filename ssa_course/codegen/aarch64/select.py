"""What AArch64 selection keeps per function, beside the neutral walk.

The walk over the scheduled blocks (constants, phis, trap stubs, hoisting wide constants
out of loops) is :class:`ssa_course.codegen.isel.Selector`'s, driven through this CPU's
:class:`~.machine.A64Machine`; AArch64's patterns keep two things of their own per
function, in ``Selector.target_state`` (an :class:`A64State`): the array lengths loaded
once before a call-free loop (:func:`hoisted_length`) and the multiplies a later
``add``/``sub`` of the block fuses into ``madd``/``msub``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ssa_course.codegen.aarch64 import minstr
from ssa_course.codegen.hoist import ENTRY
from ssa_course.codegen.mir import Mem, VReg
from ssa_course.quads.domtree import Dominance
from ssa_course.quads.ir import Instr

if TYPE_CHECKING:
    from ssa_course.codegen.isel import Selector


@dataclass(slots=True)
class A64State:
    """AArch64's per-function selection state (``Selector.target_state``)."""

    # (loop header, array) -> the register holding its length through that loop
    lengths: dict[tuple[str, str], VReg] = field(default_factory=dict)
    # dominance and each value's defining block, computed at the first hoisted length
    definitions: tuple[Dominance[str], dict[str, str]] | None = None
    # the current block's multiplies fused into a madd/msub (product -> its mul)
    madds: dict[str, Instr] = field(default_factory=dict)


def a64_state(sel: Selector) -> A64State:
    state = sel.target_state
    assert isinstance(state, A64State), "an AArch64 pattern on another machine's selector"
    return state


def hoisted_length(sel: Selector, array: str) -> VReg | None:
    """A register holding ``len(array)`` through the current block's loop, loaded once
    before the loop, or None. A length never changes, so when the reference is fixed
    in the loop (defined where the loop's preheader point is dominated: a parameter,
    or a value computed before the loop) its bounds checks need not load it again.
    Only call-free loops (:mod:`ssa_course.codegen.hoist`): there registers are free."""
    header = sel.hoisted.loop_of.get(sel.qlabel)
    if header is None or array in sel.consts or array in sel.guarded:
        return None  # a row loaded before its loop holds 0 where the loop won't run
    state = a64_state(sel)
    key = (header, array)
    n = state.lengths.get(key)
    if n is None:
        if state.definitions is None:
            state.definitions = _index_definitions(sel)
        dom, defined_in = state.definitions
        where = defined_in.get(array)
        point = sel.hoisted.preheader[header]
        if point == ENTRY:
            fixed = where == ENTRY
        else:
            fixed = where is not None and (where == ENTRY or dom.dominates(where, point))
        if not fixed:
            return None
        n = state.lengths[key] = sel.new_vreg("len")
        sel.hoisted_loads.append((header, minstr.ins("ldr", n, Mem(sel.vreg(array),
                                                                    disp=-8))))
    return n


def _index_definitions(sel: Selector) -> tuple[Dominance[str], dict[str, str]]:
    blocks = sel.blocks
    dom = Dominance({b.label: b.succs for b in blocks}, blocks[0].label)
    defined_in = {name: ENTRY for name, _ in sel.fn.params}
    for qb in blocks:
        for i in (*qb.phis, *qb.body):
            if i.dest is not None:
                defined_in[i.dest] = qb.label
    return dom, defined_in
