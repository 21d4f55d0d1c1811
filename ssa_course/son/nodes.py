"""Every node kind of the sea of nodes, in one place (lessons 05-06).

The classes live in small modules, one concept each: :mod:`~ssa_course.son.graph` (the
graph and the base node), :mod:`~ssa_course.son.control` (Start, If, Region, Loop, Phi,
Call, Return, Throw, Trap, Stop, projections), :mod:`~ssa_course.son.data` (constants,
arithmetic, comparisons, logic) and :mod:`~ssa_course.son.memory` (allocation, loads,
stores, print). The engine imports each class from its own module; this index lists them
all for tests (``tests/test_son_nodes.py`` checks every kind here) and for a reader looking
for the whole set.
"""

from ssa_course.son.control import (
    Call,
    If,
    Loop,
    Never,
    Parm,
    Phi,
    Proj,
    Region,
    Return,
    Start,
    Stop,
    Throw,
    Trap,
)
from ssa_course.son.data import (
    Add,
    Binary,
    Compare,
    Constant,
    Div,
    Logic,
    Mul,
    Neg,
    Not,
    Operator,
    Rem,
    Sub,
    Undefined,
    const,
    constant_value,
    operator_node,
)
from ssa_course.son.graph import Graph, Node, start_of
from ssa_course.son.memory import (
    InBounds,
    IsSet,
    Len,
    Load,
    LoadField,
    NewArray,
    NewStruct,
    Print,
    Store,
    StoreField,
)

__all__ = [
    "Add", "Binary", "Call", "Compare", "Constant", "Div", "Graph", "If", "InBounds",
    "IsSet", "Len", "Load", "LoadField", "Logic", "Loop", "Mul", "Neg", "Never", "NewArray",
    "NewStruct", "Node", "Not", "Operator", "Parm", "Phi", "Print", "Proj", "Region", "Rem",
    "Return", "Start", "Stop", "Store", "StoreField", "Sub", "Throw", "Trap", "Undefined", "const",
    "constant_value", "operator_node", "start_of",
]
