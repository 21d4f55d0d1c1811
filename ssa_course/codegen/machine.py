"""The one interface a CPU implements: :class:`Machine`.

Everything in ``ssa_course/codegen/`` outside a CPU's folder is target-neutral: the
machine IR (:mod:`.mir`), the selection walk (:mod:`.isel`), the quads loop passes, phi
lowering, liveness, interference, colouring, spilling and the emission driver
(:mod:`.listing`). What a CPU adds is one object satisfying this protocol, in its folder
(``x86_64/machine.py``, ``aarch64/machine.py``); the neutral code reaches a CPU only
through such an object, and finds one by name only in :mod:`.machines`.

A protocol, not a base class: neither CPU inherits the other's choices, and a new CPU is
checked by mypy against this list alone (docs/codegen.md, "Adding a CPU").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ssa_course.codegen.isel import Selector
    from ssa_course.codegen.mir import MFunction, MInstr, MProgram
    from ssa_course.codegen.quadcfg import QBlock
    from ssa_course.codegen.runtime_abi import RuntimeConfig
    from ssa_course.codegen.select_effects import Effects
    from ssa_course.codegen.target import RegisterFile
    from ssa_course.codegen.thread import Shapes
    from ssa_course.quads.ir import Instr

# One selection function per quads opcode: the pattern table's emitting half.
SelectTable = Mapping[str, "Callable[[Selector, Instr], None]"]


class Machine(Protocol):
    """A CPU as the neutral code generator sees it.

    Selection (read by :class:`ssa_course.codegen.isel.Selector`):

    * ``name`` -- the target's name (``"x86-64"``, ``"aarch64"``);
    * ``floats`` -- does it select float operations (:mod:`ssa_course.codegen.float_abi`;
      False: a function touching a float is refused in one line, ``isel.refuse_floats``);
    * ``arg_regs`` -- the registers carrying a call's first arguments, in order;
    * ``cond_eq`` -- the condition code "equal" (the undefined-variable checks);
    * ``bool_shapes`` -- how a bool is made, tested and negated (jump threading, dead code);
    * ``effects`` -- memory, calls and exceptions (:mod:`ssa_course.codegen.select_effects`);
    * ``select_table`` / ``select_home`` -- opcode -> emitting function, and (kind, file)
      naming where a missing row belongs;
    * :meth:`make` / :meth:`make_call` -- an instruction with its defs and uses;
    * :meth:`immediate` -- may a constant be an immediate operand of the shared patterns;
    * :meth:`wide` -- does a constant take more than an immediate field to load (such
      constants are kept in a register across call-free loops);
    * :meth:`fuel_check` -- the step-limit check at a function entry or loop header;
    * :meth:`param_source` -- where parameter ``k`` arrives;
    * :meth:`function_state` / :meth:`start_block` -- the CPU's own per-function state
      (kept in ``Selector.target_state``) and a hook before each block is selected.

    After selection (read by :func:`ssa_course.codegen.compile.compile_with`):

    * :meth:`register_file` -- the registers the allocator may hand out;
    * :meth:`allocators` / :meth:`allocate` -- the allocators this CPU offers, and one run;
    * :meth:`peephole` -- rewrites after allocation (x86-64's memory operands), or none;
    * :meth:`layout_frame` -- prologue, epilogue and slot addresses, once sizes are final;
    * :meth:`program_text` / :meth:`instr_text` -- the functions' assembly listing, and
      one instruction as it prints there;
    * :meth:`runtime_source` -- the generated runtime in front of that listing;
    * :meth:`assembler_checks` -- each assembler of this CPU ("gnu", "keystone", "own", in
      the order "auto" tries them) and the function saying why it cannot be used here.
    """

    name: str
    floats: bool
    arg_regs: tuple[str, ...]
    cond_eq: str
    bool_shapes: Shapes
    effects: Effects
    select_table: SelectTable
    select_home: tuple[str, str]

    # Operands are Any: a CPU may have operand kinds beyond mir.Operand (AArch64's
    # shifted registers and incoming stack arguments).
    def make(self, op: str, *operands: Any, cond: str | None = None,
             defs: tuple[Any, ...] = (), uses: tuple[Any, ...] = (),
             line: int | None = None, comment: str = "") -> MInstr: ...

    def make_call(self, symbol: str, nargs: int = 0, line: int | None = None) -> MInstr: ...

    def immediate(self, value: int) -> bool: ...

    def wide(self, value: int) -> bool: ...

    def fuel_check(self, sel: Selector, steps: int) -> None: ...

    def param_source(self, k: int) -> Any: ...

    def function_state(self) -> object: ...

    def start_block(self, sel: Selector, qb: QBlock) -> None: ...

    def register_file(self, fuel: bool) -> RegisterFile: ...

    def allocators(self) -> tuple[str, ...]: ...

    def allocate(self, fn: MFunction, allocator: str, fuel: bool) -> object: ...

    def peephole(self, fn: MFunction) -> int: ...

    def layout_frame(self, fn: MFunction) -> None: ...

    def program_text(self, mprog: MProgram, lines: list[str] | None) -> str: ...

    def instr_text(self, fn: MFunction, instr: MInstr) -> str: ...

    def runtime_source(self, program_asm: str, config: RuntimeConfig) -> str: ...

    def assembler_checks(self) -> dict[str, Callable[[], str | None]]: ...
