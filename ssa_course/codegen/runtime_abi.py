"""The runtime's interface and constants: message codes, sizes, system calls, strings.

Shared by the modules that generate the runtime's assembly (:mod:`runtime_io`,
:mod:`runtime_heap`, :mod:`runtime_entry`, :mod:`runtime_asm`), so a number such as the
size of a handler record is written once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ssa_course.codegen.ptr_abi import PTR_BSS, ptr_data_lines
from ssa_course.errors import UsageError
from ssa_course.floats import FLOAT_TO_INT_TRAP
from ssa_course.runtime import (
    DEFAULT_ALLOCATION_LIMIT,
    DEFAULT_DEPTH_LIMIT,
    DEFAULT_STEP_LIMIT,
    INT_MAX,
    limit_problem,
)

if TYPE_CHECKING:
    from ssa_course.codegen.mir import MProgram
    from ssa_course.quads.ir import Program

# rt_trap's message codes (rdi), in index order; 6 and 7 have no position.
MESSAGES = ("division by zero", "index out of bounds", "negative array length",
            "array too large", "unset element", "out of memory", "step limit exceeded",
            "stack overflow", "undefined variable", FLOAT_TO_INT_TRAP)
CODE = {m: k for k, m in enumerate(MESSAGES)}
MESSAGE_RECORD = 64  # bytes per message: a length byte, then the text
MESSAGE_SHIFT = 6  # log2(MESSAGE_RECORD): rt_trap finds record k at k << 6


def program_messages(program: Program) -> list[str]:
    """Messages one program adds after :data:`MESSAGES` (codes ``len(MESSAGES) + k``):
    ``undefined variable 'x'`` for each variable a ``checkdef`` names (a Bril read that
    may find no value), sorted; a name too long for a record keeps the plain message."""
    names = sorted({i.field for fn in program.functions.values()
                    for i in fn.instrs() if i.op == "checkdef" and i.field is not None})
    messages = [f"undefined variable '{n}'" for n in names]
    return [m for m in messages if len(m.encode()) < MESSAGE_RECORD]

NO_FUEL_LIMIT = 1 << 62  # the fuel of a build without a step limit: never runs out
STACK_BYTES = 1 << 30  # the private stack at least: 100,000 nested calls of big frames fit
MIN_STACK_BYTES = 1 << 24
# The stack is sized for the program (issue 39): the depth limit times its largest call
# level (RuntimeConfig.frame_bytes) plus STACK_RESERVE for the runtime's own calls, at
# most MAX_STACK_BYTES (reserved, MAP_NORESERVE: only what is used costs memory -- but
# qemu-user keeps a descriptor per page of a mapping, so a terabyte would cost gigabytes
# there: 8 GiB is 100,000 calls of ~80 KB, and a few MB of qemu's bookkeeping). Below it
# a guard region no frame can jump over (PROT_NONE): a stack that had to be mapped smaller
# (ulimit -v) ends in a fault, never in the memory mapped below it.
STACK_RESERVE = 1 << 20
MAX_STACK_BYTES = 1 << 33
MIN_GUARD_BYTES = 1 << 16
# Every function checks, once its frame is built, that the stack pointer is still above
# the stack limit (x86-64: rt_stack_limit; AArch64: x18), the guard plus one call level
# plus STACK_SLACK above the mapping's start: so no call reaches the guard, and
# rt_stack_overflow has STACK_SLACK to report with -- a stack mapped smaller than asked
# ends in the interpreters' "stack overflow", only earlier.
STACK_SLACK = 1 << 16
HANDLER_RECORD = 72  # bytes per handler record: handler, rsp, rbp, depth, five callee-saved
# try/catch records, reserved and touched on use: 16 nested trys in every frame at the
# deepest recursion (at least a million records); more is "stack overflow". The frames
# counted are at most HANDLER_DEPTH_CAP (about 1.2 GB reserved, never touched unless used):
# a depth limit of 10^12 must not make a program that never recurses run out of memory.
HANDLERS_PER_FRAME = 16
MIN_HANDLERS = 1 << 20
HANDLER_DEPTH_CAP = 1 << 20
HEAP_CHUNK = 1 << 26  # arrays and structs are bump-allocated from chunks this big
OUT_BUFFER = 65536

SYS_WRITE, SYS_MMAP, SYS_EXIT_GROUP = 1, 9, 231
SYS_MPROTECT = 10
PROT_RW = 3
PROT_NONE = 0
MAP_PRIVATE_ANON_NORESERVE = 0x02 | 0x20 | 0x4000


@dataclass(frozen=True, slots=True)
class RuntimeConfig:
    """What the runtime needs to know about one program and one run.

    ``main_params`` are ``(name, type)`` pairs (``"int"``/``"bool"``; any other type is
    reported as the CLI does); ``step_limit`` None means no fuel limit (a standalone
    executable); ``array_sites`` is the ``(line, col)`` of trap-site id k of ``rt_new_array``.
    """

    main_params: tuple[tuple[str, str], ...] = ()
    step_limit: int | None = DEFAULT_STEP_LIMIT
    depth_limit: int = DEFAULT_DEPTH_LIMIT
    allocation_limit: int = DEFAULT_ALLOCATION_LIMIT
    array_sites: tuple[tuple[int, int], ...] = ()
    extra_messages: tuple[str, ...] = ()  # the program's own (see program_messages)
    frame_bytes: int = 0  # the most stack one call level takes (see level_bytes)

    def __post_init__(self) -> None:
        # Both limits are signed 64-bit words of the runtime's data (rt_fuel, rt_depth): a
        # value the machine cannot encode is the CLI's one-line range error, not an
        # immediate the assembler rejects.
        for what, value in (("step limit", self.step_limit), ("depth limit", self.depth_limit)):
            problem = None if value is None else limit_problem(value)
            if problem is not None:
                raise UsageError(f"the {what} {problem}")
        if not 0 <= self.allocation_limit <= INT_MAX:
            raise UsageError("the allocation limit must be from 0 to 2^63-1")


def level_bytes(mprog: MProgram) -> int:
    """An upper bound, on either target, of the stack one call level takes: the callee's
    stack arguments (pushed by its caller), the return address and frame pointer, the
    callee-saved registers it saves, its slots (spills and arrays in the frame) and 16
    bytes of alignment padding -- the largest over the program's functions."""
    return max((8 * max(0, len(fn.params) - 6) + 16 + 8 * (len(fn.used_callee_saved)
                                                          + fn.slots) + 16
                for fn in mprog.functions.values()), default=0)


def _page_up(n: int) -> int:
    return (n + 4095) // 4096 * 4096


def guard_bytes(config: RuntimeConfig) -> int:
    """The guard region below the stack: wider than any one frame, so no frame skips it."""
    return _page_up(max(MIN_GUARD_BYTES, 2 * config.frame_bytes))


def stack_limit_offset(config: RuntimeConfig) -> int:
    """How far above the stack mapping's start the stack limit is (see STACK_SLACK)."""
    return guard_bytes(config) + config.frame_bytes + STACK_SLACK


def stack_bytes(config: RuntimeConfig) -> int:
    """The stack mapping ``_start`` asks for (guard included): room for ``depth_limit + 2``
    call levels of ``frame_bytes`` (the depth check stops the one after the limit, with
    its frame built), one more below the stack limit and the runtime's reserve, at least
    STACK_BYTES, at most MAX_STACK_BYTES; the runtime divides it by four until it maps."""
    wanted = (config.depth_limit + 3) * config.frame_bytes + STACK_RESERVE
    return _page_up(min(MAX_STACK_BYTES, max(STACK_BYTES, wanted)) + guard_bytes(config))


def run_config(mprog: MProgram, main_params: tuple[tuple[str, str], ...], fuel: bool,
               step_limit: int | None, depth_limit: int,
               allocation_limit: int | None) -> RuntimeConfig:
    """The runtime's configuration for one run of a compiled program (both targets):
    without fuel checks compiled in, ``step_limit`` cannot be enforced and is ignored;
    ``allocation_limit`` None keeps the default."""
    return RuntimeConfig(
        main_params=main_params,
        step_limit=step_limit if fuel else None, depth_limit=depth_limit,
        array_sites=tuple(mprog.trap_sites), extra_messages=tuple(mprog.messages),
        frame_bytes=level_bytes(mprog),
        **({"allocation_limit": allocation_limit} if allocation_limit is not None else {}))


def ascii_directive(text: str) -> str:
    """A ``.ascii`` directive for ``text`` (bytes as octal escapes where needed)."""
    out = []
    for b in text.encode("utf-8"):
        ch = chr(b)
        out.append(ch if 32 <= b < 127 and ch not in '"\\' else f"\\{b:03o}")
    return f'.ascii "{"".join(out)}"'


def string_data(label: str, text: str) -> list[str]:
    return [f"{label}:", f"    {ascii_directive(text)}"] if text else [f"{label}:"]


def strlen(text: str) -> int:
    return len(text.encode("utf-8"))


def handler_bytes(config: RuntimeConfig) -> int:
    """Bytes reserved for try/catch records (a multiple of the page size)."""
    records = max(MIN_HANDLERS, min(config.depth_limit, HANDLER_DEPTH_CAP) * HANDLERS_PER_FRAME)
    return (records * HANDLER_RECORD + 4095) // 4096 * 4096


# Fixed strings of the data section; the code writes their lengths in with length_of().
STRINGS = (
    ("rt_str_true", "true"), ("rt_str_false", "false"), ("rt_str_space", " "),
    ("rt_str_newline", "\n"), ("rt_str_error", "error: "), ("rt_str_at", " at "),
    ("rt_str_colon", ":"), ("rt_str_uncaught", "error: uncaught exception "),
    ("rt_str_was", " was given\n"), ("rt_str_were", " were given\n"),
    ("rt_str_argument", "error: argument '"), ("rt_str_quote_nl", "'\n"),
    ("rt_str_not_int", "' must be an int, not '"),
    ("rt_str_range", "' is out of the 64-bit int range: '"),
    ("rt_str_not_bool", "' must be true or false, not '"),
    ("rt_str_lit_true", "true\0"), ("rt_str_lit_false", "false\0"),
    # float arguments (x86-64's rt_parse_float: exact on the forms it reads)
    ("rt_str_lit_infinity", "Infinity\0"),
    ("rt_str_not_float", "' must be a float, not '"),
    ("rt_str_float_inexact", "' is a float compiled code cannot read exactly (at most 2^53 "
     "in its digits, exponent -22..22, or float.hex()): '"),
    ("rt_str_wfail", "error: cannot write standard output\n"),
    ("rt_str_hex", "0123456789abcdef"),
)
_LENGTHS = {label: strlen(text) for label, text in STRINGS}


def length_of(label: str) -> int:
    return _LENGTHS[label]


def bad_type_message(name: str, ty: str) -> str:
    return (f"error: argument '{name}' has type {ty}, which cannot come from the command "
            "line\n")


def count_message(config: RuntimeConfig) -> str:
    """The start of the CLI's wrong-count message (the count given follows it)."""
    params = config.main_params
    wanted = ", ".join(f"{n}: {t}" for n, t in params) or "none"
    return (f"error: main takes {len(params)} argument{'s' * (len(params) != 1)} "
            f"({wanted}), but ")


def data_lines(config: RuntimeConfig) -> list[str]:
    """The runtime's data and bss sections for ``config`` (GNU directives both targets'
    assemblers read: limits, trap sites, parameter names, messages, buffers)."""
    fuel = NO_FUEL_LIMIT if config.step_limit is None else config.step_limit
    out = [".data", ".balign 8",
           "rt_fuel:", f"    .quad {fuel}",
           "rt_depth:", f"    .quad {config.depth_limit}",
           # x86-64's stack limit (0: the OS stack, unchecked); AArch64 keeps it in x18
           "rt_stack_limit:", "    .quad 0",
           "rt_alloc_left:", f"    .quad {config.allocation_limit}",
           "rt_sites:"]
    for line, col in config.array_sites or ((0, 0),):
        out.append(f"    .quad {line}, {col}")
    # Parameter names: (offset, length) into rt_pname_blob (data holds no addresses).
    out.append("rt_pnames:")
    offset = 0
    for name, _ in config.main_params:
        out.append(f"    .quad {offset}, {strlen(name)}")
        offset += strlen(name)
    out += string_data("rt_pname_blob", "".join(n for n, _ in config.main_params))
    out.append("rt_messages:")
    for m in (*MESSAGES, *config.extra_messages):
        raw = m.encode()
        out.append(f"    .byte {len(raw)}")
        out.append(f"    {ascii_directive(m)}")
        out.append(f"    .zero {MESSAGE_RECORD - 1 - len(raw)}")
    for k, (name, ty) in enumerate(config.main_params):
        if ty not in ("int", "bool", "char"):
            out += string_data(f"rt_arg_bad_type{k}", bad_type_message(name, ty))
    count = count_message(config)
    out += string_data("rt_str_count", count)
    out += ["rt_str_count_len:", f"    .quad {strlen(count)}"]
    for label, text in STRINGS:
        out += string_data(label, text)
    out += ptr_data_lines(config.allocation_limit)  # Bril pointers and chars
    out += [".bss", ".balign 8", "rt_outlen:", "    .zero 8", "rt_heap_ptr:", "    .zero 8",
            "rt_heap_end:", "    .zero 8", "rt_hstack_base:", "    .zero 8",
            "rt_hstack_top:", "    .zero 8", "rt_hstack_end:", "    .zero 8",
            "rt_numbuf:", "    .zero 32",
            "rt_args:", f"    .zero {8 * max(1, len(config.main_params))}",
            *PTR_BSS, "rt_outbuf:", f"    .zero {OUT_BUFFER}"]
    return out
