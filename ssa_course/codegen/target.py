"""A machine's register file and calling convention as data: what the allocator reads.

The register allocator (:mod:`ssa_course.codegen.regalloc`), the interference drawing and
the frame code never name a register themselves: they are handed a :class:`RegisterFile`
(which registers may hold values, which ones a call clobbers, which ones a function must
give back) and work for any machine. Two are defined: :data:`X86_64` (System V AMD64,
from :mod:`ssa_course.codegen.mir`) and ``AARCH64`` (AAPCS64, in
:mod:`ssa_course.codegen.aarch64.registers`); :func:`register_file` finds one by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ssa_course.codegen import mir
from ssa_course.errors import UsageError

TARGETS = ("x86-64", "aarch64")


@dataclass(frozen=True, slots=True)
class RegisterFile:
    """One target's registers and calling convention.

    ``allocatable`` are the registers the allocator may hand out, in the order it prefers
    them; ``arguments`` carry a call's first arguments, ``result`` its value;
    ``caller_saved`` are clobbered by a call, ``callee_saved`` must be preserved by a
    function that writes them; ``reserved`` are never allocated (stack and frame
    pointers, the depth counter, scratch registers the emitter uses), each with why.
    ``fills`` colours each register in the interference drawing.
    """

    # Data, not subclasses: a new machine is one more instance, and every pass that reads
    # these fields is already written for "some register file".
    name: str
    allocatable: tuple[str, ...]
    arguments: tuple[str, ...]
    result: str
    caller_saved: tuple[str, ...]
    callee_saved: tuple[str, ...]
    reserved: tuple[tuple[str, str], ...]
    fills: dict[str, str] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """General-purpose registers the machine has (allocatable + reserved)."""
        # A set: a register may be both (r15 is allocatable in the table yet withheld by
        # compile on x86-64), and must be counted once.
        return len(set(self.allocatable) | {r for r, _ in self.reserved})

    def text(self) -> str:
        """The register file as a few lines (the lesson prints it)."""
        return "\n".join([
            f"{self.name}: {self.total} general-purpose registers, "
            f"{len(self.allocatable)} allocatable",
            f"  arguments:    {', '.join(self.arguments)}; result in {self.result}",
            f"  caller-saved: {', '.join(self.caller_saved)}",
            f"  callee-saved: {', '.join(self.callee_saved)}",
            *(f"  reserved {r}: {why}" for r, why in self.reserved),
        ]) + "\n"


# Fixed colours per register (not derived from a hash) so a drawing is the same in every
# run, and neighbouring registers get clearly different light fills.
_X86_FILLS = {
    "rax": "#ffb3ba", "rcx": "#ffdfba", "rdx": "#ffffba", "rsi": "#baffc9",
    "rdi": "#bae1ff", "r8": "#e0bbff", "r9": "#ffc8e6", "r10": "#c9f2ef",
    "r11": "#f2e1c9", "rbx": "#d4f0a8", "r12": "#a8d4f0", "r13": "#f0a8d4",
    "r14": "#d9d9ff", "r15": "#ffe0a8",
}

X86_64 = RegisterFile(
    name="x86-64",
    allocatable=mir.ALLOCATABLE,  # compile withholds r15: the call depth left lives there
    arguments=mir.ARG_REGS,
    result=mir.RET_REG,
    caller_saved=mir.CALLER_SAVED,
    callee_saved=mir.CALLEE_SAVED,
    # rbp is kept as a frame pointer (frame.py addresses slots from it), so System V's
    # sixteen registers leave fourteen for values.
    reserved=(("rsp", "stack pointer"), ("rbp", "frame pointer")),
    fills=_X86_FILLS,
)


def register_file(target: str) -> RegisterFile:
    """The register file of ``target`` (``"x86-64"`` or ``"aarch64"``)."""
    if target == "x86-64":
        return X86_64
    if target == "aarch64":
        # Imported here: the AArch64 package is only loaded by a session that asks for it.
        from ssa_course.codegen.aarch64.registers import AARCH64

        return AARCH64
    raise UsageError(f"unknown target {target!r} (expected one of {', '.join(TARGETS)})")


# Stages that make machine code, by their x86-64 name; ``--target aarch64`` selects the
# AArch64 one (``<name>-aarch64``). ``qemu`` exists for aarch64 only.
MACHINE_STAGES = ("native", "emulated", "asm", "disasm", "interference", "qemu")


def host_target() -> str:
    """The target of this machine: aarch64 on an ARM machine, x86-64 everywhere else."""
    import platform

    return "aarch64" if platform.machine().lower() in ("aarch64", "arm64") else "x86-64"


def check_target(target: str) -> str:
    if target not in TARGETS:
        raise UsageError(f"unknown target {target!r} (expected one of {', '.join(TARGETS)})")
    return target


def machine_only(option: str, stage: str) -> str:
    """``stage``'s name without its target (``emulated-aarch64`` -> ``emulated``) when it
    makes machine code; else ``option`` (``--target``, ``--assembler``: options only the
    machine-code stages use) is refused in one line, the same words for each."""
    base, _, suffix = stage.partition("-aarch64")
    if base not in MACHINE_STAGES or suffix:
        raise UsageError(f"{option} applies to the machine-code stages "
                         f"({', '.join(MACHINE_STAGES)}), not to '{stage}'")
    return base


def stage_for_target(stage: str, target: str | None) -> str:
    """The representation ``stage`` names for ``target`` (None: leave the name as given).

    ``emulated`` with ``aarch64`` is ``emulated-aarch64``; a name that already says its
    target must agree with ``target``; a stage that makes no machine code takes no target.
    """
    if target is None:
        return stage
    check_target(target)
    # A stage name may already carry its target (`emulated-aarch64`); the flag and the name
    # must then agree, so `--target x86-64` with an AArch64 stage is an error, not a guess.
    base = machine_only("--target", stage)
    named = "aarch64" if stage.endswith("-aarch64") else None
    if named is not None and named != target or named is None and stage == "qemu" \
            and target != "aarch64":
        raise UsageError(f"'{stage}' is not a stage of target {target}")
    if target == "aarch64":
        return f"{base}-aarch64"
    return base
