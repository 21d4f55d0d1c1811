"""What a grading copy of the package leaves out, per assignment (issue #35).

While an assignment is graded, the learner's code runs in a sandbox holding a *grading
copy* of ``ssa_course`` (:mod:`ssa_course.grading.gradingcopy`): the functions listed here
for that assignment are there by name, signature and decorators only -- calling one
raises :class:`WithheldError`, and its code is nowhere in the sandbox. They are the engine
functions that compute what a task of the assignment asks the learner to write: the
references the hidden tests use and the engine's twins that give the answer in one call.
The grader computes the expected answers outside the sandbox, with the full package.

An entry is ``"module:qualname"``, the module that *defines* the function (a method is
``Class.method``). A function that a task's inputs (a callable the grader hands to the
answer) or the grader's plumbing run in the learner's process must not be here: grading
would break. One a setup cell runs at its top level costs that statement (and the names it
binds) in the learner's process. ``tests/test_grading_copy.py`` runs every solution's
setup cells, statement by statement, and its answers in its copy.

Left out on purpose, because the learner's process needs them: exercise 09's
``engine_add``/``engine_narrow`` and what they call (``intervals.add``,
``RangeAnalysis._apply``) -- task 4's ``back()`` (``grading.ranges.LoopBack``), which the
grader hands to the learner's function, runs them there; exercise 04's
``IRCode.insert_node`` and ``compact``, which task 3 *requires*; exercise 08's
``ssa.dom``, which task 3 allows.

Withheld although a setup cell runs them at its top level (the statement then fails in
the learner's process; ``KNOWN_SETUP_CONFLICTS`` in the test): exercise 07's
``Phi.compute``, ``If.compute`` and ``users_to_push`` (``GRAPHS = {... sea(src) ...}``
optimizes), exercise 10's ``EscapeInfo.join``/``escape_only``/``FunctionSolver.solve``
and exercise 11's ``Liveness._solve`` (their ``example`` cells analyse a program).
"""

from __future__ import annotations


class WithheldError(Exception):
    """Raised by a function withheld from a grading copy: it computes what a task of the
    exercise being graded asks the learner to write."""


# assignment (the solutions' file stem) -> the functions withheld while it is graded
WITHHELD: dict[str, tuple[str, ...]] = {
    "01-quads": (
        "ssa_course.quads.cfg:find_leaders",  # leaders: the engine's leader rule (hidden ref)
        "ssa_course.quads.cfg:build_cfg",  # leaders, successors: splits into blocks, links them
        "ssa_course.quads.bril_defined:_blocks",  # leaders, successors: blocks and their succs
        "ssa_course.quads.cfg:CFG.reachable",  # unreachable: the blocks reached from the entry
        "ssa_course.quads.cfg:remove_unreachable",  # unreachable: deletes (returns) the others
        "ssa_course.ssa.dom:postorder",  # unreachable: postorder(succs, entry) lists the reached
        "ssa_course.ssa.dom:immediate_dominators",  # unreachable: idom's keys are the reached
        "ssa_course.quads.bril_defined:_may_reach",  # unreachable: blocks reached from some
        "ssa_course.quads.domtree:_dfs",  # unreachable: the reached blocks, numbered
        "ssa_course.quads.domtree:fast_immediate_dominators",  # unreachable: as above
    ),
    "02-peepholes": (
        "ssa_course.quads.fold:fold",  # fold_constant: fold(op, [a, b])
        "ssa_course.opcodes:Opcode.fold",  # fold_constant: get(op).fold((a, b))
        "ssa_course.opcodes:Opcode.apply",  # fold_constant: the same, raising on / 0
        "ssa_course.runtime:wrap",  # fold_constant: 64-bit wrap (the table's + - * use it)
        "ssa_course.runtime:tiny_div",  # fold_constant: the table's div
        "ssa_course.runtime:tiny_rem",  # fold_constant: the table's rem
        "ssa_course.quads.peephole:_lvn_block",  # value_key, count_redundant: LVN of a block
        "ssa_course.quads.peephole:local_value_numbering",  # count_redundant: LVN of a function
        "ssa_course.ssa.dom_cse:dom_cse",  # count_redundant: removes recomputed values
    ),
    "03-ssa": (
        "ssa_course.ssa.dom:dominance_frontiers",  # frontiers: the hidden tests' reference
        "ssa_course.ssa.dom:iterated_frontier",  # phi_blocks: the hidden tests' reference
        "ssa_course.ssa.julia:_phi_blocks",  # phi_blocks: the pruned DF+ of a variable
        "ssa_course.ssa.destruct:sequentialize",  # sequentialize_copies: the engine's own
        "ssa_course.codegen.phis:sequentialise",  # sequentialize_copies: the back end's
    ),
    # 04-julia-ir: uses_of, dead_pure, double_to_add -- no engine function computes them on
    # an IRCode (the hidden tests' references are written in the notebook); double_to_add
    # must call IRCode.insert_node and compact.
    "04-julia-ir": (),
    "05-control-as-data": (
        "ssa_course.son.endless:_successors",  # control_successors: live control successors
        "ssa_course.son.cfg_blocks:_next_control",  # control_successors: of a plain node
        "ssa_course.son.cfg_blocks:_control_projs",  # control_successors: of Start/If/Call
        "ssa_course.son.interp:Plan.__init__",  # control_successors: the interpreter's table
        "ssa_course.son.printer:_select_compose_lines",  # split_phi: a phi's Selects, as text
        "ssa_course.son.draw:select_compose_parts",  # split_phi: the same, drawn
        "ssa_course.son.control:Phi.idealize",  # loop_carried: knows a phi that is a copy
    ),
    "06-types-and-peepholes": (
        "ssa_course.son.data:Mul.compute",  # transfer (mul_type): the type of a * b
        "ssa_course.son.data:Not.compute",  # transfer (not_type): the type of !x
        "ssa_course.son.data:Operator.compute",  # transfer: the table's rows (mul, not) as nodes
        "ssa_course.son.intervals:mul",  # transfer (mul_type): right on 88 of the 100 pairs
        "ssa_course.grading.son:engine_compute",  # transfer: the hidden tests' reference
        "ssa_course.son.data:Add.idealize",  # idealize_add: the engine's rewrites of +
        "ssa_course.son.data:Operator.idealize",  # idealize_add: identities, constant right
        "ssa_course.son.graph:Node.key",  # gvn_key: the engine's value-numbering key
    ),
    "07-optimistic": (
        "ssa_course.son.control:Phi.compute",  # phi_type: the engine's phi transfer
        "ssa_course.grading.son:with_types",  # phi_type: the hidden tests' reference
        "ssa_course.son.control:If.compute",  # if_type: the engine's If transfer
        "ssa_course.son.sccp:users_to_push",  # users_to_push: the hidden tests' reference
    ),
    "08-scheduling": (
        "ssa_course.son.gcm:dominator_lca",  # lca: the exercise's rule, in the scheduler
        "ssa_course.son.cfg_blocks:DomTree.lca",  # lca: the scheduler's own
        "ssa_course.son.gcm:pick_block",  # pick_block: phase 5 of the scheduler
        "ssa_course.son.cfg_blocks:_loop_depths",  # loop_depths: the hidden tests' reference
        "ssa_course.quads.loops:loop_depths",  # loop_depths: the same on a quads CFG
        "ssa_course.quads.loops:natural_loops",  # loop_depths: each loop's blocks
    ),
    "09-ranges": (
        # add_range: engine_add and intervals.add stay (LoopBack, task 4's back(), runs them)
        "ssa_course.grading.ranges:engine_branch",  # branch_ranges: the hidden tests' reference
        "ssa_course.grading.ranges:check_situations",  # check_redundant: the engine's verdicts
        "ssa_course.son.bce:below",  # check_redundant: the engine's "i < len(a)" proof
        "ssa_course.son.bce:decide_check",  # check_redundant: the engine's verdict on a check
        "ssa_course.son.intervals:widen",  # loop_range: the engine's widening
        "ssa_course.son.intervals:narrow",  # loop_range: the engine's narrowing
        "ssa_course.grading.ranges:engine_widen",  # loop_range: the hidden tests' reference
        "ssa_course.grading.ranges:engine_narrowing",  # loop_range: the hidden tests' reference
    ),
    "10-escape": (
        "ssa_course.analysis.escape_lattice:EscapeInfo.join",  # join: the lattice's join
        "ssa_course.analysis.escape_lattice:EscapeInfo.escape_only",  # store: what it passes on
        "ssa_course.grading.escape:expected_glyphs",  # glyphs: the hidden tests' reference
        "ssa_course.analysis.escape_solve:FunctionSolver.solve",  # glyphs: the analysis itself
    ),
    "11-codegen": (
        "ssa_course.codegen.liveness:Liveness._solve",  # liveness: the engine's live sets
        "ssa_course.codegen.interference:build_interference",  # interference: the engine's graph
        "ssa_course.codegen.colouring:Colourer.select",  # select: the engine's select
        "ssa_course.codegen.colouring:choose_register",  # select: its rule for one node
    ),
}


def withheld(assignment: str) -> tuple[str, ...]:
    """The entries withheld while ``assignment`` is graded (an unknown one: none)."""
    return WITHHELD.get(assignment, ())


def message(entry: str, assignment: str) -> str:
    """What a withheld function says when it is called (for a learner)."""
    module, _, qualname = entry.partition(":")
    return (f"ssa_course's own {qualname} ({module}) is not available while exercise "
            f"{assignment} is graded: it computes what a task asks you to write")
