"""The runtime's entry points as the MIR simulator (``mir_simulate.py``) serves them: printing
into the run's text, arrays and structs on a heap of qwords, traps with their messages
(``runtime_asm.MESSAGES`` order), and the handler records of ``try``/``throw``.

Each function takes the machine (its registers, heap and result) and the calling block's
successors (``rt_throw`` without a handler record jumps to a ``handler`` successor).
"""

from __future__ import annotations

from typing import Any

from ssa_course.codegen.mir import PReg
from ssa_course.codegen.x86_64.registers import CALLER_SAVED

MESSAGES = ("division by zero", "index out of bounds", "negative array length",
            "array too large", "unset element", "out of memory")
RAX, RDX, RDI, RSI = (PReg(n) for n in ("rax", "rdx", "rdi", "rsi"))


def _print_int(m: Any, succs: list[str]) -> None:
    value = m.read(RDI)
    m.result.output.append(value)
    m.print_text(str(value))


def _new_array(m: Any, succs: list[str], width: int = 8) -> None:
    length, site = m.read(RDI), m.read(RSI)
    line, col = m.trap_sites[site] if 0 <= site < len(m.trap_sites) else (0, 0)
    if length < 0:
        m.stop(f"error: negative array length at {line}:{col}")
    if length > 100_000_000:
        m.stop(f"error: array too large at {line}:{col}")
    address = m.allocate(1 + (length * width + 7) // 8)  # the length, then the elements
    m.heap[address] = length
    m.clobber(CALLER_SAVED)
    m.regs[RAX] = address


def _charge_array(m: Any, succs: list[str]) -> None:
    m.clobber(CALLER_SAVED)  # the simulator keeps no budget (as for rt_new_array)


def _new_struct(m: Any, succs: list[str]) -> None:
    address = m.allocate(m.read(RDI))
    m.clobber(CALLER_SAVED)
    m.regs[RAX] = address


def _trap(m: Any, succs: list[str]) -> None:
    code, line, col = m.read(RDI), m.read(RSI), m.read(PReg("rdx"))
    message = MESSAGES[code] if 0 <= code < len(MESSAGES) else f"trap {code}"
    m.stop(f"error: {message} at {line}:{col}")


def _enter(m: Any, succs: list[str]) -> None:
    m.handlers.append((len(m.frames) - 1, m.labels[m.read(RDI)]))
    m.clobber(CALLER_SAVED)


def _leave(m: Any, succs: list[str]) -> None:
    m.handlers.pop()
    m.clobber(CALLER_SAVED)


RUNTIME = {
    "rt_print_int": _print_int,
    "rt_print_bool": lambda m, s: m.print_text("true" if m.read(RDI) else "false"),
    "rt_print_space": lambda m, s: m.print_text(" "),
    "rt_print_newline": lambda m, s: m.print_text("\n"),
    "rt_new_array": _new_array, "rt_charge_array": _charge_array,
    "rt_new_bytes": lambda m, s: _new_array(m, s, 1),
    "rt_new_struct": _new_struct, "rt_trap": _trap,
    "rt_enter": _enter, "rt_leave": _leave, "rt_throw": lambda m, s: m.throw(s),
}
