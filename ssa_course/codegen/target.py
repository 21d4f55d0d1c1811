"""A machine's register file and calling convention as data: what the allocator reads.

The register allocator (:mod:`ssa_course.codegen.regalloc`), the interference drawing and
the frame code never name a register themselves: they are handed a :class:`RegisterFile`
(which registers may hold values, which ones a call clobbers, which ones a function must
give back) and work for any machine. Each CPU defines its own in its ``registers.py``
(``x86_64.registers.X86_64``: System V AMD64; ``aarch64.registers.AARCH64``: AAPCS64);
:func:`register_file` finds one by name through the registry of machines.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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


def default_register_file() -> RegisterFile:
    """The default machine's register file (:data:`ssa_course.codegen.machines.DEFAULT`):
    what the allocator and its drawings use when no target is named."""
    from ssa_course.codegen.machines import machine

    return machine().register_file(True)


def register_file(target: str) -> RegisterFile:
    """The register file of ``target`` (``"x86-64"`` or ``"aarch64"``), with fuel checks:
    its machine's (:mod:`ssa_course.codegen.machines`, which loads a CPU when asked)."""
    from ssa_course.codegen.machines import machine

    return machine(check_target(target)).register_file(True)


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
