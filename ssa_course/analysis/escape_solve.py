"""Escape analysis of one function: transfer functions, then a worklist to a fixed point.

Information flows from uses to definitions (backward): the statements are visited last to
first, each one joining escape facts into the alias classes of its operands or merging
classes; then a worklist of classes whose state grew passes each class's escape on to its
contents until nothing changes. The rules, one per kind of statement:

* ``return v`` -- ``v`` gets ReturnEscape at that statement;
* ``throw v`` -- ``v`` gets ThrownEscape there; every ``the_exception`` that is a
  reference joins the class of every thrown value (flow-insensitively: a value thrown
  anywhere in the frame may be the one caught). Tiny throws only ints, so in Tiny
  programs this rule never fires on a reference; it is kept for the design's sake;
* ``print(...)`` of a reference, and any operation the analysis does not know -- AllEscape;
* φ, φᶜ, ϒ and π -- the statement and its reference operands are one class;
* ``newstruct``/``setf``/``getf`` -- the stored value, the loaded value and the field's
  content class are one class; ``newarr``/``astore``/``aload`` the same with the array's
  one element class;
* a container's escape passes to its contents (what is inside a returned object is
  returned too); contents of argument ``n`` get ArgEscape ``{n}``;
* ``invoke f(...)`` -- by ``f``'s :class:`~ssa_course.analysis.escape_summary.Summary`,
  replayed on the actual arguments' classes (``f`` stored its argument ``y`` into
  ``x.f``: the content class of the actual ``x``'s field ``f`` joins the actual ``y``);
  a function with none -- not in the program -- makes every reference operand and the
  result escape everywhere;
* ``alen``, comparisons, arithmetic, control flow -- nothing.
"""

from __future__ import annotations

from ssa_course.analysis.escape_classes import ELEMENTS, AliasClasses
from ssa_course.analysis.escape_lattice import EscapeInfo
from ssa_course.analysis.escape_summary import RETURN, Summary, apply_summary, extract_summary
from ssa_course.ssa.ircode import (
    Argument,
    Expr,
    IRCode,
    PhiCNode,
    PhiNode,
    PiNode,
    ReturnNode,
    SSAValue,
    UpsilonNode,
)

EVERYWHERE = EscapeInfo(analyzed=True, everywhere=True)
# operations that never let a reference operand escape: they read a length or compare
# identities, and keep no copy of the reference anywhere. Everything not listed (and not
# handled below) is assumed to leak its operands -- the sound default for a new operator.
_HARMLESS = frozenset({"alen", "eq", "ne", "the_exception"})


def is_ref_type(ty: object) -> bool:
    return ty is not None and getattr(ty, "is_ref", lambda: False)()


class FunctionSolver:
    """The escape state of one function while it is being solved (and once solved)."""

    def __init__(self, ir: IRCode, structs: dict, summaries: dict[str, Summary]):
        self.ir = ir
        self.structs = structs
        self.summaries = summaries
        self.classes = AliasClasses()
        self.stored_into: set[int] = set()  # nodes of classes a reference was stored in
        self.written_by_callee: set[int] = set()  # ... of those, stored in by a callee
        self.thrown_values: list[int] = []
        self.catches: list[int] = []
        self.visits = 0  # worklist items processed (for the lesson's statistics)

    # -- what is analysed --------------------------------------------------------

    # Only references are tracked: an int copied anywhere reveals no object, so leaving
    # them out keeps classes small without losing anything an optimizer could use.
    def is_ref(self, v: object) -> bool:
        if isinstance(v, Argument):
            return is_ref_type(self.ir.argtypes[v.n - 1])
        if isinstance(v, SSAValue) and 1 <= v.id <= len(self.ir.stmts):
            s = self.ir.stmts[v.id - 1]
            # An Upsilon (the value a try hands to its catch's φᶜ) has no type of its own;
            # it is a reference exactly when the value it carries is.
            if isinstance(s, UpsilonNode):
                return self.is_ref(s.val)
            return is_ref_type(self.ir.types[v.id - 1])
        return False

    def n(self, v: object) -> int:
        return self.classes.node(v)

    # -- the solver ----------------------------------------------------------------

    def solve(self) -> FunctionSolver:
        """The three phases (the lesson's trace takes them one step at a time:
        :mod:`~ssa_course.analysis.escape_trace`)."""
        self.mark_params()
        for pc in self.statements():
            self.transfer(pc)
        # Only container -> contents propagation needs a fixpoint: raising a container
        # raises its contents, which may themselves be containers.
        self.propagate()
        return self

    def mark_params(self) -> None:
        """Arguments are known to the caller: a class holding argument k makes whatever is
        stored into it visible to the caller (ArgEscape {k}), see reach()."""
        for k, ty in enumerate(self.ir.argtypes, start=1):
            if is_ref_type(ty):
                self.classes.mark_param(self.n(Argument(k, self.ir.argnames[k - 1])), k)

    def statements(self) -> range:
        """The statements in the order the sweep visits them: backward, uses before
        definitions. One backward sweep suffices for the statements themselves: every name
        of an object shares its class's state, and union is commutative and idempotent, so
        no statement needs a second visit. (Julia's EscapeAnalysis repeats its backward
        sweep until nothing changes: it keeps a state per value, and a fact must travel
        along def-use chains one statement at a time.)"""
        return range(len(self.ir.stmts), 0, -1)

    def propagate(self) -> bool:
        """Pass escape from containers to contents until nothing grows; True if it did."""
        cls = self.classes
        grew = False
        # Terminates: raise_info only queues a class whose info actually grew, and infos
        # only grow in a finite lattice (escape_lattice).
        while cls.changed:
            r = cls.find(cls.changed.pop())
            self.visits += 1
            reach = self.reach(r)
            for c in cls.contents(r):
                grew |= cls.raise_info(c, reach)
        return grew

    def reach(self, node: int) -> EscapeInfo:
        """What a class's escape means for its contents: the same escape, plus ArgEscape
        through every argument in the class."""
        root = self.classes.root(node)
        # escape_only: the container's escape, not its alias (see EscapeInfo.escape_only).
        info = root.info.escape_only()
        # Stored into an argument's object: the caller can load it after we return, which
        # is ArgEscape (Julia's name) -- weaker than AllEscape, since the caller is known.
        if root.params:
            info = info.join(EscapeInfo(True, args=frozenset(root.params)))
        return info

    # -- transfer functions --------------------------------------------------------

    def transfer(self, pc: int) -> None:
        s = self.ir.stmts[pc - 1]
        me = SSAValue(pc)
        cls = self.classes
        refs = [v for v in (s.operands() if hasattr(s, "operands") else [])
                if self.is_ref(v)]
        if isinstance(s, ReturnNode):
            # Keep *which* return: a value returned on only one path could still be stack
            # allocated on the others (Julia keeps the same per-site set).
            for v in refs:
                cls.raise_info(self.n(v), EscapeInfo(True, returns=frozenset({pc})))
        elif isinstance(s, PhiNode | PhiCNode | PiNode | UpsilonNode):
            # These only rename: the result may be any operand's object, so all must share
            # one escape state -- if one of them escapes through the φ, each may have.
            if self.is_ref(me):
                for v in refs:
                    cls.union(self.n(me), self.n(v))
        elif isinstance(s, Expr):
            self.transfer_expr(pc, s, refs)

    def transfer_expr(self, pc: int, s: Expr, refs: list) -> None:
        cls = self.classes
        me = SSAValue(pc)
        head = s.head
        if head == "newstruct":
            struct = self.structs.get(str(self.ir.types[pc - 1]))
            # Without a shape we cannot name the fields the arguments went into, so the
            # only sound answer is the top for everything involved.
            if struct is None or len(struct.fields) != len(s.args):  # shape unknown
                for v in refs + [me]:
                    cls.raise_info(self.n(v), EVERYWHERE)
                return
            # Initialising a field is a store: the initialiser joins the field's class.
            for (f, _), a in zip(struct.fields, s.args, strict=True):
                c = cls.content(self.n(me), f)
                if self.is_ref(a):
                    cls.union(c, self.n(a))
        elif head == "newarr":
            # Create the element class now, so the array's shape is "array" even before any
            # store (a later merge with a struct must then collapse, not guess).
            cls.content(self.n(me), ELEMENTS)
        elif head in ("getf", "aload"):
            slot = s.field if head == "getf" else ELEMENTS
            assert slot is not None  # (shapes: a getf names its field)
            # A load is one name more for whatever may be stored in that slot: unify
            # (Steensgaard), rather than track which store reaches which load.
            c = cls.content(self.n(s.args[0]), slot)
            if self.is_ref(me):
                cls.union(c, self.n(me))
        elif head in ("setf", "astore"):
            obj, val = s.args[0], s.args[-1]
            slot = s.field if head == "setf" else ELEMENTS
            assert slot is not None  # (shapes: a setf names its field)
            c = cls.content(self.n(obj), slot)
            if self.is_ref(val):
                cls.union(c, self.n(val))
                # Remembered for the summary: a store into an argument's object changes what
                # the caller's own alias information says that object holds.
                self.stored_into.add(self.n(obj))
        elif head == "throw":
            for v in refs:
                cls.raise_info(self.n(v), EscapeInfo(True, thrown=frozenset({pc})))
                self.thrown_values.append(self.n(v))
            # Catches seen so far (later statements: the sweep is backward) may receive this
            # value; the_exception below handles catches met after the throw. Together
            # they join every catch with every throw, independent of the visiting order.
            for e in self.catches:
                for t in self.thrown_values:
                    cls.union(e, t)
        elif head == "the_exception":
            if self.is_ref(me):
                self.catches.append(self.n(me))
                for t in self.thrown_values:
                    cls.union(self.n(me), t)
        elif head == "call":
            self.transfer_call(pc, s)
        elif head not in _HARMLESS:  # print, and anything unknown
            # print shows the object to the outside world; an unknown operation might
            # store it anywhere. Both are AllEscape, the top.
            for v in refs:
                cls.raise_info(self.n(v), EVERYWHERE)

    def transfer_call(self, pc: int, s: Expr) -> None:
        cls = self.classes
        summary = self.summaries.get(s.func or "")
        ports: dict[int, object] = {j: a for j, a in enumerate(s.args, start=1)
                                    if self.is_ref(a)}
        if self.is_ref(SSAValue(pc)):
            ports[RETURN] = SSAValue(pc)
        # No summary (a function outside the program): assume the worst for every reference
        # passed and for the result, which may be any object the callee could reach.
        if summary is None:
            for v in ports.values():
                cls.raise_info(self.n(v), EVERYWHERE)
            return
        apply_summary(cls, summary, {j: self.n(v) for j, v in ports.items()},
                      self._written_by_callee, EscapeInfo(True, thrown=frozenset({pc})))

    def _written_by_callee(self, node: int) -> None:
        """A callee stored into ``node``'s objects: written here too, for our callers, and
        the list of what their fields hold is no longer complete."""
        self.stored_into.add(node)
        self.written_by_callee.add(node)

    # -- the summary this function gives its callers ------------------------------

    def summary(self) -> Summary:
        """What this function does to its ports, read from its classes (on a copy: the
        summary folds deep nodes and merges returned values, the solved state stays)."""
        # Ports are what a caller can name: its arguments and the returned value. Every
        # return statement's value enters port 0 (extract_summary then merges them).
        ports: list[tuple[int, int]] = []
        for k, ty in enumerate(self.ir.argtypes, start=1):
            if is_ref_type(ty):
                ports.append((k, self.n(Argument(k, self.ir.argnames[k - 1]))))
        for s in self.ir.stmts:
            if isinstance(s, ReturnNode) and s.val is not None and self.is_ref(s.val):
                ports.append((RETURN, self.n(s.val)))
        return extract_summary(self.classes.copy(), ports, self.stored_into)
