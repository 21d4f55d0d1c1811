"""What x86-64 selection keeps per function, beside the neutral walk.

The walk over the scheduled blocks is :class:`ssa_course.codegen.isel.Selector`'s, driven
through this CPU's :class:`~.machine.X86Machine`; x86-64's patterns keep one thing of their
own per function, in ``Selector.target_state`` (an :class:`X86State`): the remainders by a
power of two that only their block's branch tests against zero (``test x, 2^k - 1``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ssa_course.codegen.mir import Reg

if TYPE_CHECKING:
    from ssa_course.codegen.isel import Selector


@dataclass(slots=True)
class X86State:
    """What x86-64 selection keeps per function (``Selector.target_state``)."""

    # `x % 2^k` tested for 0 by its block's branch alone -> (x, 2^k - 1)
    masked: dict[str, tuple[Reg, int]] = field(default_factory=dict)


def x86_state(sel: Selector) -> X86State:
    state = sel.target_state
    assert isinstance(state, X86State), "an x86-64 pattern on another machine's selector"
    return state
