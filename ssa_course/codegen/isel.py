"""Instruction selection: scheduled SSA quads -> machine IR over virtual registers.

Each quads block becomes one machine block (more when a division needs its ``-1`` path);
each quad is matched by a row of the pattern table (:mod:`ssa_course.codegen.patterns`,
which names what :mod:`ssa_course.codegen.x86_64.select_ops` emits). Every SSA value gets one
:class:`VReg`; constants get none: they are folded into the instructions that use them as
immediates, or put in a fresh register right where they are needed (rematerialised), which
keeps them out of the register allocator's way. Phis become parallel copies on the edges
(:mod:`ssa_course.codegen.phis`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ssa_course.codegen import hoist, select_shared
from ssa_course.codegen.float_abi import float_bits, is_float, receive_params
from ssa_course.codegen.join_loads import reuse_join_loads
from ssa_course.codegen.jumps import duplicate_tests, place_latches, place_taken_arms
from ssa_course.codegen.loop_loads import hoist_loop_loads
from ssa_course.codegen.loop_version import version_loops
from ssa_course.codegen.mir import Imm, LabelRef, MBlock, MFunction, MInstr, PReg, VReg
from ssa_course.codegen.names import block_label
from ssa_course.codegen.patterns import CodegenError
from ssa_course.codegen.phis import EdgeCopies, lower_phis
from ssa_course.codegen.quadcfg import (
    QBlock,
    function_blocks,
    loop_headers,
    use_counts,
    variable_types,
)
from ssa_course.codegen.runtime_abi import CODE, MESSAGES, program_messages
from ssa_course.codegen.select_ptr import lower_chars
from ssa_course.codegen.strength import reduce_strength
from ssa_course.codegen.thread import thread_bools
from ssa_course.quads.ir import UNDEFINED, Function, Instr, Program
from ssa_course.quads.names import Names
from ssa_course.tiny.types import ArrayType, FloatType

if TYPE_CHECKING:
    from ssa_course.codegen.machine import Machine

# A Bril variable read where no assignment reached it: the runtime's "undefined variable"
# (the interpreters also name the variable).
TRAP_UNDEFINED = CODE["undefined variable"]


class Selector:
    """Selection state for one function (see :func:`select_function`).

    Target-neutral: everything a CPU decides -- its argument registers, how an
    instruction's defs and uses are derived, immediates, the fuel check, where parameters
    arrive, the pattern table's emitting half -- is asked of ``machine`` (a
    :class:`ssa_course.codegen.machine.Machine`); what a CPU keeps per function lives in
    ``target_state`` (:meth:`Machine.function_state`)."""

    def __init__(self, machine: Machine, fn: Function, program: Program,
                 sites: list[tuple[int, int]], fuel: bool,
                 stack: dict[int, int] | None = None) -> None:
        if not machine.floats:
            refuse_floats(fn)
        fn = lower_chars(fn)  # chars as their sort keys (codegen/ptr_abi.py)
        self.machine = machine
        self.fn = fn
        # newarr instructions kept in the frame (id -> length), from escape analysis
        self.stack = stack or {}
        self.program = program
        self.sites = sites  # the program's new-array trap sites, shared by every function
        self.messages: list[str] | None = None  # the program's own trap messages, on demand
        self.fuel = fuel
        self.types = variable_types(fn)
        self.vregs: dict[str, VReg] = {}
        self.consts: dict[str, int] = {}
        self.next_id = 0
        self.mfn = MFunction(fn.name, [], returns_value=fn.ret is not None,
                             float_params=sum(is_float(t) for _, t in fn.params))
        self.cold: list[MBlock] = []  # trap stubs and rare paths, laid out last
        self.cur: MBlock = MBlock("")
        self.line: int | None = None
        self.exit_of: dict[str, MBlock] = {}  # quads block -> its last machine block
        self.stubs: dict[tuple[int, int, int], str] = {}
        self.uses: dict[str, int] = {}
        self.defs: dict[str, Instr] = {}  # quads name -> its defining instruction (no phis)
        self.fused: dict[str, Instr] = {}  # compares emitted by the branch that uses them
        self.zero_tested: set[str] = set()  # values only ever compared with 0
        self.undefined: set[str] = set()  # Bril variables no path assigns
        self.maybe_undefined: set[str] = set()  # phis that may hold no value (Bril)
        self.flags: dict[str, VReg] = {}  # such a phi -> its "a value came" register
        self.def_lines: dict[str, int | None] = {}  # quads name -> its source line
        self.copy_lines: dict[int, int | None] = {}  # a phi copy's source -> its line
        self.hoisted = hoist.LoopConstants()  # wide constants loaded before their loops
        # other loads a target places before their loops: (loop header, instruction)
        self.hoisted_loads: list[tuple[str, MInstr]] = []
        self.qlabel = ""  # the quads block being selected
        self.blocks: list[QBlock] = []  # the function's blocks as selected (loop_loads)
        self.guarded: set[str] = set()  # loads before loops: 0 where the loop won't run
        # (quad, the instructions selected for it), when a lesson asks for the table
        self.trace: list[tuple[Instr | None, list[MInstr]]] | None = None
        # labels selection adds, apart from the virtual registers' numbers (quads.names)
        self.labels = Names()
        # what the CPU keeps per function (x86-64: remainders tested by a mask; AArch64:
        # hoisted array lengths, multiplies fused into madd)
        self.target_state: object = machine.function_state()

    # -- values ------------------------------------------------------------------------

    # Virtual registers are unlimited on purpose: selection may name every value it likes,
    # and the allocator alone decides which share a machine register and which spill.
    def new_vreg(self, hint: str = "") -> VReg:
        self.next_id += 1
        return VReg(self.next_id, hint)

    # One VReg per SSA name, made on first mention: a phi may name a value whose block is
    # selected later, and both mentions must be the same register.
    def vreg(self, name: str) -> VReg:
        v = self.vregs.get(name)
        if v is None:
            v = self.vregs[name] = self.new_vreg(name)
        return v

    def dest(self, i: Instr) -> VReg:
        """The register of the value ``i`` defines (its opcode has a destination:
        quads/ir.py's table, checked by the quads verifier before selection)."""
        if i.dest is None:
            raise AssertionError(f"{i.op} has no destination")
        return self.vreg(i.dest)

    def const(self, name: str) -> int | None:
        return self.consts.get(name)

    def val(self, name: str) -> VReg | Imm:
        """An operand for ``name``: an immediate when it is a constant that fits."""
        c = self.consts.get(name)
        if c is None:
            return self.vreg(name)
        # The machine says what fits an immediate field (x86-64: a sign-extended 32-bit
        # one); a wider constant must come from a register.
        if self.machine.immediate(c):
            return Imm(c)
        return self.materialise(c)

    def reg(self, name: str) -> VReg:
        """``name`` in a register (a constant is loaded into a fresh one here)."""
        c = self.consts.get(name)
        return self.vreg(name) if c is None else self.materialise(c)

    def materialise(self, value: int) -> VReg:
        # A fresh register per use, defined right before it: its live range is one
        # instruction long, so it never interferes with much and never needs a spill --
        # cheaper than keeping the constant in one long-lived register (rematerialisation).
        if self.machine.wide(value):  # pattern: wide constant in a loop -> hoisted
            held = self.hoisted.register(self.qlabel, value, self.new_vreg)
            if held is not None:
                return held
        t = self.new_vreg("k")
        self.emit("mov", t, Imm(value))
        return t

    def fuel_check(self, steps: int) -> None:
        self.machine.fuel_check(self, steps)

    def select_quad(self, instr: Instr) -> None:
        """Append the machine instructions for one quad to the current block."""
        # Table-driven: the opcode picks the function that emits its pattern. A missing row
        # is a compile error naming the file to edit, never a silent fallback.
        emit = self.machine.select_table.get(instr.op)
        if emit is None:
            kind, path = self.machine.select_home
            raise CodegenError(f"@{self.fn.name}: no machine pattern for '{instr.op}' "
                               f"({kind} code needs one in {path})")
        emit(self, instr)

    # -- emission ----------------------------------------------------------------------

    # Every instruction is tagged with the source line being selected, so the listing can
    # print Tiny lines beside the machine code and a trap can name where it happened.
    def emit(self, op: str, *operands: Any, cond: str | None = None,
             defs: tuple[Any, ...] = (), uses: tuple[Any, ...] = (),
             comment: str = "") -> None:
        instr = self.machine.make(op, *operands, cond=cond, defs=defs, uses=uses,
                                  line=self.line, comment=comment)
        self.cur.instrs.append(instr)
        if self.trace is not None:
            self.trace[-1][1].append(instr)

    def call(self, symbol: str, nargs: int = 0) -> None:
        # make_call lists every caller-saved register in defs: that one fact is how the
        # allocator learns a call clobbers them (no special case in liveness/interference).
        instr = self.machine.make_call(symbol, nargs, self.line)
        self.cur.instrs.append(instr)
        if self.trace is not None:
            self.trace[-1][1].append(instr)

    def start_block(self, label: str, *, cold: bool = False) -> MBlock:
        block = MBlock(label)
        # Cold blocks (trap stubs, rare paths) are appended after all hot code, so the
        # common path falls through without jumping over code that almost never runs.
        (self.cold if cold else self.mfn.blocks).append(block)
        self.cur = block
        return block

    def end_jump(self, target: str) -> None:
        self.emit("jmp", LabelRef(target))
        self.cur.succs = [target]

    def new_label(self, what: str) -> str:
        """A fresh label for a block selection adds (a trap stub, a division's paths):
        ``.L<fn>.<what><n>``, numbered per ``what`` by the function's label namer (its own
        counter: virtual registers are numbered apart), which holds the quads blocks'
        labels too (:meth:`run`), so a Bril block called ``trap1`` is never met."""
        return self.labels.fresh(f"{block_label(self.fn.name, '')}{what}", bare=False,
                                 sep="")

    def label(self, qlabel: str) -> str:
        return block_label(self.fn.name, qlabel)

    def undefined_code(self, name: str | None) -> int:
        """The trap code of ``undefined variable 'name'`` (the program's own messages
        follow the runtime's; a name too long for a record gets the plain message)."""
        if self.messages is None:
            self.messages = program_messages(self.program)
        message = f"undefined variable '{name}'"
        if message in self.messages:
            return len(MESSAGES) + self.messages.index(message)
        return TRAP_UNDEFINED

    def trap_stub(self, code: int, instr: Instr) -> str:
        """The label of an out-of-line block calling ``rt_trap(code, line, col)``."""
        line, col = (instr.pos.line, instr.pos.col) if instr.pos else (0, 0)
        # One stub per (error, position): several checks of one source expression share it,
        # and the hot path holds just a conditional jump to it.
        key = (code, line, col)
        label = self.stubs.get(key)
        if label is None:
            label = self.stubs[key] = self.new_label("trap")
            keep = self.cur
            stub = self.start_block(label, cold=True)
            for r, v in zip(self.machine.arg_regs, (code, line, col), strict=False):
                self.emit("mov", PReg(r), Imm(v))
            self.call("rt_trap", 3)
            # rt_trap never returns: no successors, so nothing is live out of a stub and the
            # allocator needs no register for the hot path's values there.
            stub.succs = []
            self.cur = keep
        return label

    # -- the function --------------------------------------------------------------------

    def run(self) -> MFunction:
        # Quads-level loop passes first (both targets share them): they only reshape blocks,
        # so selection below never has to know a load was hoisted or a loop copied.
        blocks = function_blocks(self.fn)
        headers = loop_headers(blocks)
        params = [n for n, _ in self.fn.params]
        reuse_join_loads(blocks, params, self.types)
        blocks = hoist_loop_loads(blocks, headers, params, self.types, self.guarded)
        if headers:
            bounded: set[str] = set()
            blocks = version_loops(blocks, params, self.types, self.guarded, bounded)
            reduce_strength(blocks, params, self.types)
            # The copies are loops too: fuel checks need them (the row scans end by
            # themselves: none there).
            headers = loop_headers(blocks) - bounded
        self.blocks = blocks
        for name in ("entry", *(qb.label for qb in blocks)):
            self.labels.reserve(self.label(name))
        self.uses = use_counts(blocks)
        self.defs = {i.dest: i for qb in blocks for i in qb.body if i.dest is not None}
        for qb in blocks:  # constants first: a phi may read one defined further down
            for i in qb.body:
                if i.op == "const" and i.dest is not None and i.value is not None:
                    # a float constant is its IEEE bits (float_abi: floats live in the
                    # integer registers as bits), so it folds and moves as an integer
                    self.consts[i.dest] = (float_bits(float(i.value)) if is_float(i.type)
                                           else int(i.value))
                elif i.op == "id" and i.args[0] in self.consts and i.dest is not None:
                    self.consts[i.dest] = self.consts[i.args[0]]
        # Constants need no register (see the module docstring), except wide ones inside
        # loops: one `mov r, imm64` per iteration is what hoist.plan avoids.
        if any(self.machine.wide(c) for c in self.consts.values()):  # else nothing to hoist
            self.hoisted = hoist.plan(blocks, headers)
        self.zero_tested = select_shared.zero_tested(blocks, self.uses, self.consts)
        # Non-strict Bril may read a phi no path assigned; such a phi carries a flag register
        # (1: a value came, 0: none) that each use tests, to trap as the interpreter does.
        self.maybe_undefined = _maybe_undefined(blocks)
        self.flags = {name: self.new_vreg(f"def.{name}") for name in self.maybe_undefined}
        entry = self.start_block(block_label(self.fn.name, "entry"))
        self.mfn.params = [self.vreg(name) for name, _ in self.fn.params]
        # Fuel at function entry and at every loop header: every endless execution passes
        # one of them infinitely often (a loop or a recursion), so the step limit trips.
        if self.fuel:
            self.fuel_check(max(1, len(blocks[0].body)))
        defined = {n for n, _ in self.fn.params} | {
            i.dest for qb in blocks for i in (*qb.phis, *qb.body) if i.dest is not None}
        for qb in blocks:  # Bril: a variable no path assigns reads as 0 here (an
            for i in (*qb.phis, *qb.body):  # interpreter reports it; see the docs)
                for a in i.args:
                    if a not in defined and a not in self.consts and a != UNDEFINED:
                        defined.add(a)
                        self.undefined.add(a)
                        self.emit("mov", self.vreg(a), Imm(0))
        # Copy each argument out of its ABI register into a vreg at once: the register is
        # clobbered by the first call, and the copy lets the allocator coalesce it away
        # when nothing is in the way. (Float parameters arrive in float registers.)
        receive_params(self)
        self.end_jump(self.label(blocks[0].label))
        entry.succs = [self.label(blocks[0].label)]
        copies: EdgeCopies = {}
        # a phi's copy has the line of the value it copies (docs/lines.md)
        self.def_lines = {i.dest: i.line if i.line is not None else (
            i.pos.line if i.pos is not None else None)
            for qb in blocks for i in (*qb.phis, *qb.body) if i.dest is not None}
        self.copy_lines = {}
        # Phi copies are only collected per quads edge while selecting; they are placed once
        # every block's last machine block (exit_of) is known, since a division's -1 path
        # may have split the block the edge leaves from.
        for qb in blocks:
            self.select_block(qb, qb.label in headers, copies)
        hoist.place(self.hoisted, self.exit_of, entry, self.hoisted_loads)
        self.mfn.blocks.extend(self.cold)
        edges: EdgeCopies = {(self.exit_of[p].label, self.label(s)): c
                             for (p, s), c in copies.items() if p in self.exit_of}
        lower_phis(self.mfn, edges, self.new_vreg,
                   lambda src: self.copy_lines.get(id(src)))
        # Machine-IR clean-ups, in this order: loop inversion copies tests, threading then
        # resolves tests of known bools (including the copies), and the taken arms are laid
        # out last, once the block graph has stopped changing. All run before allocation.
        duplicate_tests(self.mfn)
        thread_bools(self.mfn, self.machine.bool_shapes)
        place_taken_arms(self.mfn)
        place_latches(self.mfn)
        return self.mfn

    def select_block(self, qb: QBlock, header: bool, copies: EdgeCopies) -> None:
        self.machine.start_block(self, qb)
        block = self.start_block(self.label(qb.label))
        # A handler is entered by a throw, from anywhere in its try: no register survives
        # that jump, so the allocator keeps every value live into it in a stack slot.
        block.handler = qb.handler
        self.qlabel = qb.label
        self.line = None
        if header and self.fuel:
            self.fuel_check(max(1, len(qb.phis) + len(qb.body)))
        for phi in qb.phis:
            dest = self.dest(phi)
            flag = self.flags.get(phi.dest) if phi.dest is not None else None
            for arg, pred in zip(phi.args, phi.labels, strict=False):
                # no value on this edge (Bril): 0 keeps every use defined for the allocator
                src = 0 if arg == UNDEFINED else self.consts.get(arg)
                edge = copies.setdefault((pred, qb.label), [])
                operand = Imm(src) if src is not None else self.vreg(arg)
                if isinstance(operand, Imm) or id(operand) not in self.copy_lines:
                    self.copy_lines[id(operand)] = self.def_lines.get(arg)
                edge.append((dest, operand))
                if flag is not None:  # did a value come along this edge?
                    edge.append((flag, Imm(0) if arg == UNDEFINED
                                 else self.flags.get(arg, Imm(1))))
        # A compare whose only use is this block's branch is not selected where it stands:
        # the branch emits `cmp; jcc` itself, so no bool is ever made in a register.
        self.fused = select_shared.fusible_compares(qb, self.uses)
        for instr in qb.body:
            if instr.line is not None:
                self.line = instr.line
            elif instr.pos is not None:
                self.line = instr.pos.line
            if self.undefined.intersection(instr.args):  # what an interpreter reports
                for r, v in zip(self.machine.arg_regs, (TRAP_UNDEFINED, 0, 0),
                                strict=False):
                    self.emit("mov", PReg(r), Imm(v))
                self.call("rt_trap", 3)
            for a in dict.fromkeys(instr.args):  # read where no assignment may have reached
                if a in self.flags:
                    self.emit("cmp", self.flags[a], Imm(0))
                    self.emit("jcc", LabelRef(self.trap_stub(TRAP_UNDEFINED, _NO_POS)),
                              cond=self.machine.cond_eq)
            if self.trace is not None:
                self.trace.append((instr, []))
            self.select_quad(instr)
        self.exit_of[qb.label] = self.cur


_NO_POS = Instr("nop")  # a trap stub without a position ("undefined variable")


def _maybe_undefined(blocks: list[QBlock]) -> set[str]:
    """The phis (non-strict Bril) that may hold no value: one of their arguments is
    undefined on its edge, or is such a phi itself. Each gets a flag the uses test."""
    phis = [(p.dest, p.args) for qb in blocks for p in qb.phis if p.dest is not None]
    found: set[str] = set()
    changed = True
    while changed:  # a fixed point: few phis are involved, and chains are short
        changed = False
        for dest, args in phis:
            if dest not in found and any(a == UNDEFINED or a in found for a in args):
                found.add(dest)
                changed = True
    return found


def _has_float(ty: object) -> bool:
    while isinstance(ty, ArrayType):
        ty = ty.elem
    return isinstance(ty, FloatType)


def uses_float(fn: Function) -> bool:
    """Does ``fn`` take, return, compute or store a float (or an array of them)?"""
    return any(_has_float(t) for _, t in fn.params) or _has_float(fn.ret) or any(
        isinstance(i, Instr) and _has_float(i.type) for i in fn.body)


FLOAT_REFUSAL = "machine code does not support float yet"


def refuse_floats(fn: Function) -> None:
    """A machine without float code (``Machine.floats`` false: AArch64 until issue #36
    reaches it) refuses a function that touches a float in one line, before anything is
    selected."""
    if uses_float(fn):
        raise CodegenError(f"@{fn.name}: {FLOAT_REFUSAL} (run the "
                           "program with an interpreter stage, e.g. --via quads)")


def select_function(machine: Machine, fn: Function, program: Program,
                    sites: list[tuple[int, int]], fuel: bool = True,
                    stack: dict[int, int] | None = None
                    ) -> tuple[MFunction, dict[str, MBlock]]:
    """Machine IR for ``fn`` (phis lowered; not yet allocated) and, for each quads block,
    the machine block its edges leave from. ``stack``: the ``newarr`` instructions (by
    ``id``) to keep in the frame, with their lengths."""
    sel = Selector(machine, fn, program, sites, fuel, stack)
    return sel.run(), sel.exit_of


def select_program_functions(machine: Machine, program: Program, fuel: bool = True,
                             frame_arrays: bool = True
                             ) -> tuple[dict[str, MFunction], list[tuple[int, int]]]:
    """Every function of ``program`` selected; the new-array trap sites they use. Arrays
    that never escape, of a small constant length, live in their function's frame
    (:mod:`ssa_course.analysis.stack_arrays`) unless ``frame_arrays`` is false."""
    from ssa_course.analysis.stack_arrays import stack_arrays

    for fn in program.functions.values():
        if not machine.floats:
            refuse_floats(fn)
    # Escape analysis runs once for the whole program (a summary per callee), not per
    # function: whether an array escapes depends on what the callees do with it.
    stack = stack_arrays(program) if frame_arrays else {}
    # Trap sites are numbered program-wide, so the runtime's table is one list for all.
    sites: list[tuple[int, int]] = []
    out: dict[str, MFunction] = {}
    for name, fn in program.functions.items():
        out[name] = select_function(machine, fn, program, sites, fuel, stack)[0]
    return out, sites



def selection_table(fn: Function, program: Program, target: str | None = None
                    ) -> list[tuple[str, list[str]]]:
    """Each quad of ``fn`` (Bril text) next to the instructions selected for it, over
    virtual registers (what the lesson shows beside the graph), for ``target`` (None:
    the registry's default machine). Phi copies are not listed: they are placed on the
    edges afterwards."""
    from ssa_course.codegen.machines import machine
    from ssa_course.quads.bril_write import format_instr

    target_machine = machine(target)
    sel = Selector(target_machine, fn, program, [], fuel=False)
    sel.trace = [(None, [])]
    sel.run()
    return [(format_instr(q), [target_machine.instr_text(sel.mfn, i) for i in out])
            for q, out in sel.trace if q is not None]
