"""Which arrays may live in their function's stack frame (the native backend's use of
escape analysis).

An array ``a = newarr n`` of the SSA quads the code generator reads may be kept in the
frame instead of the heap when

* the escape analysis finds it NoEscape (nothing outside this call can see it, so it may
  die with the frame);
* ``n`` is a constant between 0 and :data:`MAX_STACK_LENGTH` (the frame's size is fixed,
  and the length checks of ``new`` cannot fail);
* ``a`` is used only as the array of ``aload``/``astore``/``alen`` -- no phi, copy,
  comparison, call or store names it. Then when the ``newarr`` runs again (a loop), no
  value can still refer to the previous array, and the same frame bytes may hold the new
  one;
* the function is not recursive (in no cycle of the call graph), and its arrays in the
  frame stay within :data:`MAX_FRAME_WORDS` qwords: recursion 50,000 deep must fit the
  stack as before, and a function outside every cycle has at most one frame live at a time.

Length checks, the allocation budget and its message are unchanged: the code still
charges the elements to the run's budget (``rt_charge_array``) at the same site.
The IRCode the analysis runs on is built from the same instructions (out of SSA); each
``newarr`` is recognised by a position object of its own for the time of the analysis.
"""

from __future__ import annotations

from ssa_course.analysis.escape import analyze_program
from ssa_course.errors import Pos
from ssa_course.quads.call_depth import recursive_functions
from ssa_course.quads.ir import Function, Instr, Program
from ssa_course.ssa.destruct import program_from_ssa
from ssa_course.ssa.ircode import Expr, IRProgram, SSAValue
from ssa_course.ssa.julia import build_ircode

# Small on purpose: a frame's arrays are paid for on every call (the prologue reserves them)
# even when the array is never touched, and a big one would cost more than a heap bump.
MAX_STACK_LENGTH = 16
MAX_FRAME_WORDS = 64


def _no_escape_arrays(program: Program) -> set[int]:
    """``id()`` of the ``newarr`` instructions the escape analysis finds NoEscape."""
    # The same trick as sroa._no_escape_allocations: a Pos object of its own per newarr is a
    # key that survives the trip out of SSA and into IRCode, where the answer is computed.
    marks: dict[int, tuple[Instr, Pos | None]] = {}
    for fn in program.functions.values():
        for instr in fn.instrs():
            if instr.op == "newarr":
                mark = Pos(instr.pos.line if instr.pos else 0, instr.pos.col if instr.pos else 0)
                marks[id(mark)] = (instr, instr.pos)
                instr.pos = mark
    # The analysis wants plain quads (build_ircode makes its own SSA); the positions are put
    # back whatever happens, since the caller's SSA program is shared with later stages.
    try:
        plain = program_from_ssa(program)
        result = analyze_program(IRProgram(
            {name: build_ircode(fn) for name, fn in plain.functions.items()}, plain.structs))
    finally:
        for instr, pos in marks.values():
            instr.pos = pos
    found: set[int] = set()
    for fe in result.functions.values():
        for pc, s in enumerate(fe.ir.stmts, start=1):
            line_mark = fe.ir.lines[pc - 1]
            if isinstance(s, Expr) and s.head == "newarr" and id(line_mark) in marks \
                    and fe[SSAValue(pc)].has_no_escape():
                found.add(id(marks[id(line_mark)][0]))
    return found


def _constants(fn: Function) -> dict[str, int]:
    # Only a name with exactly one definition, a `const`, is a constant everywhere it is
    # read (SSA quads make that the usual case); bools are ints in Python and are excluded.
    defs: dict[str, list[Instr]] = {}
    for i in fn.instrs():
        if i.dest is not None:
            defs.setdefault(i.dest, []).append(i)
    return {d: ds[0].value for d, ds in defs.items() if len(ds) == 1 and ds[0].op == "const"
            and isinstance(ds[0].value, int) and not isinstance(ds[0].value, bool)}


def stack_arrays(program: Program) -> dict[int, int]:
    """``id()`` of each ``newarr`` of ``program`` (SSA quads) that may live in its frame
    -> its length."""
    local = _no_escape_arrays(program)
    recursive = recursive_functions(program)
    chosen: dict[int, int] = {}
    for name, fn in program.functions.items():
        # A recursive function may have thousands of frames live at once: its arrays stay on
        # the heap, so the stack depth a program can reach is the same as without the pass.
        if name in recursive:
            continue
        consts = _constants(fn)
        defs: dict[str, int] = {}
        for i in fn.instrs():
            if i.dest is not None:
                defs[i.dest] = defs.get(i.dest, 0) + 1
        # Any use other than "the array operand of aload/astore/alen" could keep the array
        # alive past the next run of its newarr (a phi, a copy, a call...), and then one
        # frame slot could not hold both arrays: such arrays are excluded.
        named_elsewhere: set[str] = set()
        for i in fn.instrs():
            for k, a in enumerate(i.args):
                if not (i.op in ("aload", "astore", "alen") and k == 0):
                    named_elsewhere.add(a)
        words = 0
        for i in fn.instrs():
            if i.op != "newarr" or id(i) not in local or defs.get(i.result()) != 1 \
                    or i.dest in named_elsewhere:
                continue
            # A constant length in range means the run-time length check cannot fail, so
            # moving the array changes no error. n + 1 words: the length word, then at most
            # one word per element (a [bool] packs 8 to a word) -- an upper bound.
            n = consts.get(i.args[0])
            if n is None or not 0 <= n <= MAX_STACK_LENGTH or words + n + 1 > MAX_FRAME_WORDS:
                continue
            words += n + 1
            chosen[id(i)] = n
    return chosen
