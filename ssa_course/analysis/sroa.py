"""Scalar replacement of structs that never escape (SROA): their fields become variables.

A pass on ordinary quads (not SSA), one function at a time, repeated to a fixed point.
First every struct variable's unrelated lives get names of their own
(:mod:`ssa_course.analysis.sroa_split`). Then each round runs the escape analysis on the
program's IRCode, groups the struct variables of every function into *webs* (variables
joined by copies; a variable assigned on several paths is one quads name, so SSA's phi
merges are already inside a web) and replaces every web that
:mod:`ssa_course.analysis.sroa_webs` accepts -- its docstring says why one set of field
variables per web is exact (every live member holds the web's current object).
Julia's SROA asks the same two questions: escape analysis says nobody else can see the
object, the uses say nobody else *names* it, so each field is a plain variable of this
frame.

The rewrite of a web ``W`` of struct ``S`` (fresh names ``W.f``, one per field;
:mod:`ssa_course.analysis.sroa_rewrite`, which the clones of :mod:`.sroa_calls` use too):

* ``p = newstruct a b``  ->  ``W.x = id a; W.y = id b`` (the initialisers were evaluated
  before, left to right, by the instructions that made ``a`` and ``b``: order is kept);
* ``t = getf p x``  ->  ``t = id W.x``;  ``setf p x v``  ->  ``W.x = id v``;
* ``q = id p`` (a copy inside the web) disappears; a copy from another web (a *move*,
  ``p`` dead after it) copies the fields: ``W.x = id V.x; W.y = id V.y``;
* ``c = eq p q``  ->  ``c = const true`` when both are members (the same current object),
  ``const false`` when only one is (no name outside the web reaches a web object).

Why outputs and errors stay identical: reading a field never fails in Tiny (every field
is given at ``new``; only array *slots* can be unset), ``newstruct`` cannot fail and
structs do not count against the allocation budget (:class:`ssa_course.runtime.Heap`
counts array elements only), so deleting the allocation deletes no error. A value seen
in a ``catch`` is the field's value when the throw happened, as it was on the heap: the
field variables are ordinary variables and the CFG's exceptional edges carry them.

Nested structs: after a round, a struct stored in a replaced struct's field is held by
that field's variable (``W.p = id p``), so it is now a copy inside a web, and the next
round can replace it too. A round that removes nothing ends the loop.

Calls: a struct passed to a callee that keeps it to itself (reads it, or writes it where
the caller no longer needs it) is passed as its fields to a specialised copy of the
callee (:mod:`ssa_course.analysis.sroa_calls` says why that is exact); the web then has
no other use and goes like the rest.

What stays (``SroaReport`` names each with its reason): a struct stored in an array slot
(the slot is chosen at run time; a frame has no variable per slot), one handed to a
callee that stores, returns or compares it, or writes it while the caller still reads it,
and webs where two objects are alive at once or that share a name with a parameter.

The IRCode is matched to the quads through the allocation's source position: the pass
gives each ``newstruct`` a position object (``at``) of its own for the time of the
analysis (the IRCode carries it through unchanged) and puts the old one back afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ssa_course.analysis.escape import analyze_program
from ssa_course.analysis.sroa_calls import (
    Demand,
    clone_names,
    make_clones,
    promotable,
    promoted_call,
)
from ssa_course.analysis.sroa_rewrite import FieldWeb, replace_webs
from ssa_course.analysis.sroa_split import split_struct_variables
from ssa_course.analysis.sroa_webs import Web, struct_webs
from ssa_course.errors import Pos
from ssa_course.quads.ir import Function, Instr, Program
from ssa_course.quads.names import Names
from ssa_course.ssa.ircode import Expr, IRProgram, SSAValue
from ssa_course.ssa.julia import build_ircode

MAX_ROUNDS = 64  # nesting depth of replaceable structs; each round removes at least one


@dataclass(slots=True)
class SroaReport:
    """What the pass did, per function: allocations (``newstruct`` instructions) removed,
    and every allocation kept with its reason (``"L:C reason"``, in program order)."""

    removed: dict[str, int] = field(default_factory=dict)
    kept: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, list[str]] = field(default_factory=dict)
    rounds: int = 0

    def total(self) -> int:
        return sum(self.removed.values())

    def summary(self, most: int = 4) -> str:
        """One line: the counts, then the first ``most`` kept allocations with reasons."""
        kept = [r for rs in self.reasons.values() for r in rs]
        text = (f"{self.total()} struct allocation(s) removed, {len(kept)} kept, "
                f"{self.rounds} round(s)")
        if kept:
            more = f"; {len(kept) - most} more" if len(kept) > most else ""
            text += f" (kept: {'; '.join(kept[:most])}{more})"
        return text

    def describe(self) -> str:
        """One line per function, then one per kept allocation."""
        lines = [f"sroa: {self.total()} struct allocation(s) removed, "
                 f"{sum(self.kept.values())} kept, {self.rounds} round(s)"]
        for name in self.removed:
            lines.append(f"  {name}: removed {self.removed[name]}, kept {self.kept[name]}")
            lines.extend(f"    kept at {r}" for r in self.reasons.get(name, []))
        return "\n".join(lines)


def _no_escape_allocations(program: Program) -> tuple[set[int], set[int]]:
    """``id()`` of every ``newstruct`` instruction that the escape analysis finds NoEscape,
    and of every one it sees at all (the IRCode drops code that never runs)."""
    # The analysis runs on IRCode, the rewrite on quads: to carry an answer back we need a
    # key that survives build_ircode. A fresh Pos object per allocation is one (the IRCode
    # keeps the very object in `lines`), and its id() cannot collide with another's.
    marks: dict[int, tuple[Instr, Pos | None, Pos | None]] = {}
    for fn in program.functions.values():
        for instr in fn.instrs():
            if instr.op == "newstruct":
                old = instr.pos or instr.at or Pos(0, 0)
                mark = Pos(old.line, old.col)  # a position object of its own
                marks[id(mark)] = (instr, instr.pos, instr.at)
                if instr.pos is not None:  # (the IRCode keeps pos first, else at)
                    instr.pos = mark
                else:
                    instr.at = mark
    # try/finally: the quads are the caller's program; whatever the analysis does, the
    # positions an error message would print must be put back exactly.
    try:
        ir = IRProgram({name: build_ircode(fn) for name, fn in program.functions.items()},
                       program.structs)
        result = analyze_program(ir)
    finally:
        for instr, pos, at in marks.values():
            instr.pos, instr.at = pos, at
    # `seen` separates "escapes" from "never built": IRCode drops unreachable blocks, and a
    # report that called dead code "escapes" would send a learner looking for a leak.
    local: set[int] = set()
    seen: set[int] = set()
    for fe in result.functions.values():
        for pc, s in enumerate(fe.ir.stmts, start=1):
            line_mark = fe.ir.lines[pc - 1]
            if isinstance(s, Expr) and s.head == "newstruct" and id(line_mark) in marks:
                seen.add(id(marks[id(line_mark)][0]))
                if fe[SSAValue(pc)].has_no_escape():
                    local.add(id(marks[id(line_mark)][0]))
    return local, seen


def _rewrite(fn: Function, structs: dict, webs: list[Web], moves: set[int],
             calls: tuple[dict, dict, list[Demand], set[str]]) -> tuple[Function, int]:
    """``fn`` with the members of the accepted ``webs`` turned into field variables."""
    # Field variables must not capture an existing name, or the rewrite would merge two
    # unrelated values; reserving every parameter and destination first rules that out.
    taken = Names([n for n, _ in fn.params] + [i.dest for i in fn.instrs() if i.dest is not None])
    member: dict[str, FieldWeb] = {}
    for w in webs:
        base = min(w.members, key=lambda v: (len(v), v))  # a stable, readable name
        # One set of field variables per web, not per variable: every live member of a web
        # holds the web's current object (sroa_webs checks it), so they all name the same
        # fields.
        replaced = FieldWeb({f: taken.fresh(f"{base}.{f}", start=2)
                             for f, _ in structs[w.struct].fields},
                            dict(structs[w.struct].fields))
        for v in w.members:
            member[v] = replaced
    found, clone_name, demands, known = calls
    body, made, removed = replace_webs(
        fn, member, moves,
        lambda item, fields: promoted_call(item, fields, known, clone_name))
    demands.extend(made)
    return Function(fn.name, list(fn.params), fn.ret, body), removed


def _round(program: Program, report: SroaReport, last: bool,
           clone_name: dict) -> tuple[Program, int]:
    # Each round re-runs the escape analysis on the program the previous round produced:
    # removing an outer struct turns the inner struct's store into a plain copy, which can
    # change its answer from ArgEscape-like "stored in a field" to NoEscape.
    local, seen = _no_escape_allocations(program)
    found = promotable(program)
    demands: list[Demand] = []
    calls = (found, clone_name, demands, set(program.functions))
    functions: dict[str, Function] = {}
    total = 0
    for name, fn in program.functions.items():
        webs, moves = struct_webs(fn, program.structs, local, found, set(program.functions))
        # A web with a reason is refused as a whole: replacing part of a web would leave some
        # name pointing at a heap object whose fields the rest of the web no longer updates.
        new, removed = _rewrite(fn, program.structs, [w for w in webs if w.reason is None],
                                moves, calls)
        functions[name] = new
        report.removed[name] = report.removed.get(name, 0) + removed
        total += removed
        # Reasons are written only when this function has settled (or at the last round):
        # an earlier round's "kept" may still be removed later, and must not be reported.
        if last or not removed:
            reason = {v: w.reason for w in webs for v in w.members}
            report.reasons[name] = [
                f"{_where(i)} {_why(i, local, seen, reason)}"
                for i in new.instrs() if i.op == "newstruct"]
            report.kept[name] = len(report.reasons[name])
    # The clones are built after every caller is rewritten, from the demands the rewrites
    # collected; a clone is then an ordinary function the next round may scalar-replace.
    functions.update(make_clones(program, calls[2], found, calls[1]))
    return Program(functions, program.structs), total


def _why(instr: Instr, local: set[int], seen: set[int], reason: dict) -> str:
    # Most specific first: not built at all, then escapes (the analysis said no), then the
    # web's own refusal (it was local, but the rewrite could not be exact).
    if id(instr) not in seen:
        return "never runs (unreachable code)"
    if id(instr) not in local:
        return "escapes"
    return reason.get(instr.dest) or "escapes"


def _where(instr: Instr) -> str:
    pos = instr.pos or instr.at
    return f"{pos.line}:{pos.col}" if pos is not None else "(entry)"  # a rebuilt argument


def scalar_replace(program: Program) -> tuple[Program, SroaReport]:
    """The program with every replaceable struct allocation gone, and what was removed."""
    report = SroaReport()
    # Nothing to replace: return the program unchanged (not a copy), so a pipeline without
    # structs pays neither the IRCode build nor the escape analysis.
    if not any(i.op == "newstruct" for fn in program.functions.values() for i in fn.instrs()):
        report.removed = {name: 0 for name in program.functions}
        report.kept = dict(report.removed)
        return program, report
    # Splitting first: a variable reused for two unrelated objects would otherwise put both
    # in one web, where two objects are alive at once and the web must be refused.
    program = Program({name: split_struct_variables(fn, program.structs)
                       for name, fn in program.functions.items()}, program.structs)
    before = _reachable(program)
    clone_name = clone_names(program)  # one registry: a clone is made once, then reused
    # Each productive round removes at least one allocation, so the loop ends; MAX_ROUNDS
    # only bounds nesting, and the last round is told so that it writes its reasons.
    for k in range(MAX_ROUNDS):
        report.rounds = k + 1
        program, removed = _round(program, report, k == MAX_ROUNDS - 1, clone_name)
        if not removed:
            break
    after = _reachable(program)
    gone = {name for name in program.functions if name in before and name not in after}
    # every call from main's side now goes to a clone: the original is never run -- unless
    # a function main never calls (kept as written) still calls it
    work = [name for name in program.functions if name not in gone]
    while work:
        for i in program.functions[work.pop()].instrs():
            for f in i.funcs:
                if f in gone:
                    gone.discard(f)
                    work.append(f)
    for name in [n for n in program.functions if n in gone]:
        del program.functions[name]
        del report.removed[name], report.kept[name], report.reasons[name]
    return program, report


def _reachable(program: Program) -> set[str]:
    """The functions ``main`` may call, directly or not (all of them without a main)."""
    if "main" not in program.functions:
        return set(program.functions)
    seen = {"main"}
    work = ["main"]
    while work:
        for i in program.functions[work.pop()].instrs():
            for f in i.funcs:
                if f in program.functions and f not in seen:
                    seen.add(f)
                    work.append(f)
    return seen
