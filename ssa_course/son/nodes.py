"""Every node kind of the sea of nodes, in one place (lessons 05-06).

The classes live in small modules, one concept each: :mod:`~ssa_course.son.graph` (the
graph and the base node), :mod:`~ssa_course.son.control` (Start, If, Region, Loop, Phi,
Call, Return, Throw, Trap, Stop, projections), :mod:`~ssa_course.son.data` (constants,
arithmetic, comparisons, logic) and :mod:`~ssa_course.son.memory` (allocation, loads,
stores, print). The engine imports each class from its own module; this index lists them
all for tests (``tests/test_son_nodes.py`` checks every kind here) and for a reader looking
for the whole set.
"""

# How to read a node (Simple's conventions): input 0 is its control -- the node that
# must run before it, or None for a node that floats and may be scheduled anywhere its
# inputs allow; the other inputs are its operands, values or memory states. A node with
# several results (Start, If, Call) is a tuple read through Proj nodes. Each kind below
# gives ``compute`` (its type from its inputs' types: constant folding and SCCP),
# ``idealize`` (a local rewrite to a simpler node, or None) and ``evaluate`` (what the
# graph interpreter does).

# -- control: where execution goes (son/control.py) ----------------------------------
from ssa_course.son.control import (
    # A call: control, memory, the arguments in; projections 0 control, 1 memory, 2 the
    # result (inside a try also 3 the exceptional control and 4 the thrown int).
    Call,
    # A two-way branch: control and a bool in; projection 0 is the true path, 1 the false.
    # A constant predicate makes one side dead; a test a dominating If already made
    # becomes that If's answer.
    If,
    # A Region whose input 1 enters the loop and input 2 is the back edge.
    Loop,
    # The exit of a loop that never exits: never taken, it keeps the loop (and what it
    # prints) reachable from Stop.
    Never,
    # A function parameter: a projection of Start.
    Parm,
    # A value that depends on the path taken: input 0 its Region, input i the value when
    # control came in on the Region's path i. Phi(x, x) -> x (every path gives x).
    Phi,
    # Element ``index`` of a multi-valued node (Start, If, Call): a control, a memory
    # state or a value.
    Proj,
    # A merge of control paths: input 0 unused, inputs 1.. the incoming paths. A dead
    # path leaves the Region and all its phis together; one path left and no phis: the
    # Region is that path.
    Region,
    # Leaves the function: control, memory, the result (None for a void function).
    Return,
    # The function's entry, a tuple: control, memory, then one value per argument.
    Start,
    # The function's exits: every Return, Throw, Trap and Never is an input, so what is
    # reachable backwards from Stop is the whole live graph.
    Stop,
    # An exception that leaves the function: control, memory, the thrown int.
    Throw,
    # A runtime error (``division by zero at 3:9``): the program ends here; its memory
    # input keeps what was printed before it, its values say what the check was about.
    Trap,
)

# -- data: values computed from values, floating unless pinned (son/data.py) ---------
from ssa_course.son.data import (
    # ``a + b``, wrapping at 64 bits. x + 0 -> x, x + x -> x * 2, constants gathered on
    # the right and summed along a chain (``((x + 1) + 2) -> x + 3``).
    Add,
    # The base of the two-operand nodes: input 0 control (None unless pinned), inputs 1
    # and 2 the operands; folds two constants exactly as the program would.
    Binary,
    # ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=`` -> bool: constants moved right by the
    # mirrored operator (3 < x -> x > 3); ``b == true`` -> b, ``b == false`` -> !b.
    Compare,
    # A constant; its only input is Start, so it is reachable from the graph's root. Its
    # type *is* its value (an int range [v, v], a constant bool).
    Constant,
    # ``a / b``: pinned below its divisor's zero test (moved above it, it could trap);
    # x / 1 -> x.
    Div,
    # Bril's ``and``/``or`` on two bools, both evaluated (Tiny's && and || are control):
    # x and true -> x, x or false -> x, x op x -> x.
    Logic,
    # ``a * b``, wrapping: x * 1 -> x, constants on the right; 0 * anything is 0 even
    # when the other factor is unknown.
    Mul,
    # Unary minus: -(-x) -> x (true under wrapping too: -(-MIN) is MIN).
    Neg,
    # Boolean not: !!x -> x.
    Not,
    # Any opcode-table row without a class of its own: its type folded by the table, its
    # rewrites the row's identities (x op e -> x, x op x -> c), constants moved right.
    Operator,
    # ``a % b``: pinned below its zero test like Div.
    Rem,
    # ``a - b``, wrapping: x - x -> 0, x - 0 -> x.
    Sub,
    # A Bril variable on a path that never assigned it: a Phi may carry it, any other
    # use is a runtime error.
    Undefined,
    # Helpers: a Constant node for a Python value; the value of a constant type; a node
    # for an opcode-table row (what the parser builds for every operator).
    const,
    constant_value,
    operator_node,
)

# -- the graph and the base node (son/graph.py) ---------------------------------------
from ssa_course.son.graph import Graph, Node, start_of

# -- memory: arrays and structs, one memory state threaded through effects -------------
from ssa_course.son.memory import (
    # ``0 <= i < n`` -> bool: the bounds test an If guards each access with (lesson 09
    # proves many of them true).
    InBounds,
    # True when a slot read from an array of references holds an object (not unset).
    IsSet,
    # ``new T[n]``'s effect: control, memory, the new array -> memory (it may be ``out of
    # memory``, so it stays, in order, even when nothing reads the array).
    KeepNew,
    # ``len(a)``: len(new T[n]) -> n.
    Len,
    # ``a[i]`` after its bounds test: control, memory, array, index. Becomes the value
    # the last store to that slot wrote, or a fresh array's zero, when the memory chain
    # shows which (son/alias.py).
    Load,
    # ``p.f``: control, memory, struct; the same forwarding from stores as Load.
    LoadField,
    # ``new T[n]`` after its length test: control, length, memory -> a fresh zeroed array.
    NewArray,
    # ``new S { ... }``: control, then the field values in declaration order.
    NewStruct,
    # ``print(...)``: control, memory, the values -> the next memory state, so output
    # keeps its order.
    Print,
    # ``a[i] = v`` after its bounds test: control, memory, array, index, value -> the
    # next memory state (an effect: never merged, never folded).
    Store,
    # ``p.f = v``: control, memory, struct, value -> the next memory state.
    StoreField,
)

# The whole set, for ``from ssa_course.son.nodes import *`` and the test that checks
# every kind is listed here.
__all__ = [
    "Add", "Binary", "Call", "Compare", "Constant", "Div", "Graph", "If", "InBounds",
    "IsSet", "KeepNew", "Len", "Load", "LoadField", "Logic", "Loop", "Mul", "Neg", "Never",
    "NewArray", "NewStruct", "Node", "Not", "Operator", "Parm", "Phi", "Print", "Proj",
    "Region", "Rem", "Return", "Start", "Stop", "Store", "StoreField", "Sub", "Throw", "Trap",
    "Undefined", "const", "constant_value", "operator_node", "start_of",
]
