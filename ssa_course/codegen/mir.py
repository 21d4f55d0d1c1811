"""Machine IR: a CPU's instructions over virtual registers, in blocks (both targets).

This is the seam between instruction selection (which writes it, over :class:`VReg`
virtual registers) and register allocation (which reads :attr:`MInstr.defs` /
:attr:`MInstr.uses`, then rewrites every :class:`VReg` to a physical register or a stack
:class:`Slot`). Emission prints it as Intel-syntax assembly.

An instruction is a mnemonic of its CPU with its operands destination first (x86-64's
Intel order; AArch64's order),
plus the registers it writes and reads *including the implicit ones* (``idiv`` reads
``rax``/``rdx`` and writes both; a ``call`` writes every caller-saved register). Liveness
and interference only look at ``defs`` and ``uses``; they never parse mnemonics.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(eq=False, slots=True)
class VReg:
    """A virtual register: one value of the program (``hint`` is the quad's name)."""

    id: int
    hint: str = ""

    def __hash__(self) -> int:
        # Equality is identity, but the hash is the number: sets of vregs then iterate in
        # the same order in every process (an address-based hash made the allocator's
        # simplify order, and so the listing, depend on the allocation history).
        return self.id

    def __str__(self) -> str:
        return f"%{self.id}" if not self.hint else f"%{self.id}.{self.hint}"


@dataclass(frozen=True, slots=True)
class PReg:
    """A physical 64-bit register, by name (``rax``, ``r12``)."""

    name: str

    def __hash__(self) -> int:
        # Not hash(name): string hashes change with PYTHONHASHSEED, and sets that mix
        # physical and virtual registers must iterate in the same order in every process.
        return -1 - int.from_bytes(self.name.encode(), "little")

    def __str__(self) -> str:
        return self.name


Reg = VReg | PReg


@dataclass(frozen=True, slots=True)
class Imm:
    """An immediate operand (it fits in 32 bits signed unless the op is ``mov``)."""

    value: int

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True, slots=True)
class Slot:
    """A stack slot of the current frame: ``qword ptr [rbp - 8*(index+1)]`` once laid out."""

    # An index, not an offset: the frame's final size (and so where rbp-relative slots
    # sit) is known only after allocation has added its spill slots.
    index: int

    def __str__(self) -> str:
        return f"slot{self.index}"


@dataclass(eq=False, slots=True)
class Mem:
    """A memory operand ``[base + index*scale + disp]`` or ``[rip + symbol + disp]``."""

    base: Reg | None = None
    index: Reg | None = None
    scale: int = 1
    disp: int = 0
    symbol: str | None = None

    # The registers an address *reads*: a store `mov [p + 8], v` reads p even though the
    # instruction's destination is memory, so liveness must count base and index as uses.
    def regs(self) -> list[Reg]:
        return [r for r in (self.base, self.index) if r is not None]

    def address(self) -> str:
        """The bracketed address, Intel syntax: ``[rbp - 8]``, ``[rip + rt_fuel]``."""
        parts: list[str] = []
        if self.symbol is not None:
            parts.append(f"rip + {self.symbol}")
        if self.base is not None:
            parts.append(str(self.base))
        if self.index is not None:
            parts.append(f"{self.index}*{self.scale}" if self.scale != 1 else str(self.index))
        text = " + ".join(parts) or "0"
        if self.disp:
            text += f" - {-self.disp}" if self.disp < 0 else f" + {self.disp}"
        return f"[{text}]"

    def __str__(self) -> str:
        return f"qword ptr {self.address()}"


@dataclass(frozen=True, slots=True)
class LabelRef:
    """A code label (a block of this function, a trap stub, a function symbol)."""

    name: str

    def __str__(self) -> str:
        return self.name


Operand = VReg | PReg | Imm | Slot | Mem | LabelRef


@dataclass(eq=False, slots=True)
class MInstr:
    """One machine instruction. ``defs``/``uses`` list every register written/read,
    implicit ones included; ``cond`` is the condition code of ``jcc``/``setcc``/``cmovcc``;
    ``line`` the Tiny source line it came from (the listing's comment)."""

    op: str
    operands: list[Operand] = field(default_factory=list)
    defs: list[Reg] = field(default_factory=list)
    uses: list[Reg] = field(default_factory=list)
    cond: str | None = None
    line: int | None = None
    comment: str = ""

    # Liveness and interference read only defs/uses, never the mnemonic: that is what lets
    # one allocator serve x86-64 and AArch64, whose instructions it never needs to know.

    def is_copy(self) -> bool:
        """A register-to-register ``mov``: the allocator may coalesce its two sides."""
        return self.copy_pair() is not None

    def copy_pair(self) -> tuple[Reg, Reg] | None:
        """(destination, source) of a copy (:meth:`is_copy`), else None."""
        # Only register-to-register: a move from memory or an immediate defines a value
        # but joins no two live ranges, so there is nothing to coalesce.
        if self.op != "mov" or len(self.operands) != 2:
            return None
        a, b = self.operands
        return (a, b) if isinstance(a, VReg | PReg) and isinstance(b, VReg | PReg) else None

    def is_branch(self) -> bool:
        return self.op in ("jmp", "jcc")

    def replace_reg(self, old: Reg, new: Reg) -> None:
        """Rename a register everywhere it occurs (operands, addresses, defs, uses)."""
        # Identity (`is`), not equality: two VRegs are different values even if printed
        # alike, and the allocator rewrites one live range at a time.
        def swap(r: Reg | None) -> Reg | None:
            return new if r is old else r
        for k, o in enumerate(self.operands):
            if o is old:
                self.operands[k] = new
            elif isinstance(o, Mem):
                o.base = swap(o.base)
                o.index = swap(o.index)
        self.defs = [new if r is old else r for r in self.defs]
        self.uses = [new if r is old else r for r in self.uses]


@dataclass(eq=False, slots=True)
class MBlock:
    """A basic block: a label, straight-line instructions ending in a jump/return, and the
    labels of its successors (in the order the block's branches name them)."""

    label: str
    instrs: list[MInstr] = field(default_factory=list)
    succs: list[str] = field(default_factory=list)
    handler: bool = False  # entered by a throw: every value live here lives in a stack slot


@dataclass(eq=False, slots=True)
class MFunction:
    """A function: blocks in layout order (the first is the entry), its parameters as
    virtual registers, and the number of stack slots used so far."""

    name: str
    params: list[VReg]
    blocks: list[MBlock] = field(default_factory=list)
    slots: int = 0
    returns_value: bool = False
    used_callee_saved: list[str] = field(default_factory=list)
    # how many parameters are floats (they arrive in float registers: float_abi)
    float_params: int = 0

    # Slots only ever grow: selection (stack arrays, handler values) and the allocator
    # (spills) both take fresh ones, and frame layout sizes the frame from the final count.
    def new_slot(self) -> Slot:
        self.slots += 1
        return Slot(self.slots - 1)

    def block_map(self) -> dict[str, MBlock]:
        return {b.label: b for b in self.blocks}


@dataclass(eq=False, slots=True)
class MProgram:
    """Every function of a program plus what the runtime needs to know about it."""

    functions: dict[str, MFunction]
    main_params: list[str]  # "int" / "bool", in order
    structs: dict[str, list[str]] = field(default_factory=dict)  # name -> field names
    # (line, col) of each ``newarr``, indexed by the trap-site id given to rt_new_array
    trap_sites: list[tuple[int, int]] = field(default_factory=list)
    # the program's own trap messages after runtime_abi.MESSAGES (runtime_abi.program_messages)
    messages: list[str] = field(default_factory=list)
