"""Assembly source -> an executable image, by GNU ``as`` + ``ld``, keystone, or our own
encoder (:mod:`ssa_course.codegen.x86_encode`, pure Python, so always there).

All three place the program at the same fixed addresses (text at ``TEXT_ADDR``, data at
``DATA_ADDR``, bss at ``BSS_ADDR``) and give the same bytes; the test suite checks it. The
:class:`Image` keeps those bytes, the symbols and the executable's path, which is
everything the native runner, the emulator and the disassembler need.

Which assembler: the ``backend`` argument, else the one chosen for the current context
(:func:`using_assembler`: ``--assembler`` on the command line, ``assembler=`` in the
library), else "auto" (:func:`ssa_course.codegen.toolchain.choose_assembler`).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from ssa_course.codegen import toolchain
from ssa_course.codegen.elf import Sections, read_elf, write_elf
from ssa_course.codegen.keystone_asm import assemble_keystone
from ssa_course.codegen.layout import AssemblerError, lay_out
from ssa_course.codegen.x86_encode import EncodeError, encode
from ssa_course.output import write_output

TEXT_ADDR = 0x401000
DATA_ADDR = 0x20000000  # far from the text: a program of any size fits below it
BSS_ADDR = 0x30000000
BACKENDS = toolchain.ASSEMBLER_CHOICES  # gnu, keystone, own, auto
# What each assembler is, for listings ("assembled by ...").
DESCRIPTIONS = {"gnu": "GNU as + ld", "keystone": "keystone-engine + the project's layout",
                "own": "the project's own encoder, pure Python"}

__all__ = ["AssemblerError", "Image", "assemble", "backend_differences", "save_executable",
           "TEXT_ADDR", "DATA_ADDR", "BSS_ADDR", "using_assembler", "current_assembler"]

_CHOSEN: ContextVar[str] = ContextVar("assembler", default="auto")


@contextmanager
def using_assembler(name: str | None, target: str = toolchain.TARGET) -> Iterator[None]:
    """Within the block, :func:`assemble` without a ``backend`` uses ``name`` ("gnu",
    "keystone", "own" or "auto"; None leaves the choice as it is). An unknown name raises
    :class:`~ssa_course.errors.UsageError`; a missing one :class:`toolchain.ToolMissing`."""
    if name is None:
        yield
        return
    toolchain.choose_assembler(target, name)  # says now if it cannot be used for target
    token = _CHOSEN.set(name)
    try:
        yield
    finally:
        _CHOSEN.reset(token)


def current_assembler(target: str = toolchain.TARGET) -> str:
    """The assembler that makes ``target``'s bytes now (resolved: never "auto"): the
    choice of the enclosing :func:`using_assembler` block, else the first installed."""
    return toolchain.choose_assembler(target, _CHOSEN.get())


@dataclass(slots=True)
class Image:
    """An assembled and linked program.

    ``symbols`` maps every label that is not ``.L``-local (functions, runtime entries, data)
    to its address; ``sizes`` gives each text symbol's size in bytes (up to the next one).
    ``path`` is the executable file, ``backend`` the assembler that made it.
    """

    text: bytes
    data: bytes
    bss_size: int
    symbols: dict[str, int]
    entry: int
    path: str
    backend: str
    text_addr: int = TEXT_ADDR
    data_addr: int = DATA_ADDR
    bss_addr: int = BSS_ADDR
    sizes: dict[str, int] = field(default_factory=dict)

    def functions(self) -> list[tuple[str, int, int]]:
        """``(name, address, size)`` of every text symbol, in address order."""
        return sorted(((n, self.symbols[n], s) for n, s in self.sizes.items()),
                      key=lambda t: (t[1], t[0]))

    def function_bytes(self, name: str) -> bytes:
        start = self.symbols[name] - self.text_addr
        return self.text[start:start + self.sizes[name]]


_CACHE: dict[tuple[str, str], Image] = {}
_CACHE_SIZE = 256


def source_hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:24]


def assemble(source: str, backend: str | None = None) -> Image:
    """Assemble and link ``source`` (cached by its hash): ``backend`` is ``"gnu"``,
    ``"keystone"``, ``"own"`` or ``"auto"`` (the first installed of those three); None
    means the context's choice (:func:`using_assembler`, "auto" by default).

    A missing backend raises :class:`toolchain.ToolMissing` with a one-line reason; source
    the assembler rejects raises :class:`AssemblerError` (a code generator bug)."""
    if backend is not None and backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    backend = toolchain.choose_assembler(toolchain.TARGET, backend or _CHOSEN.get())
    key = (source_hash(source), backend)
    image = _CACHE.get(key)
    if image is None or not os.path.exists(image.path):
        if backend == "gnu":
            image = _assemble_gnu(source, key[0])
        else:
            image = _assemble_in_process(source, key[0], backend)
        if len(_CACHE) >= _CACHE_SIZE:  # a long notebook session: forget the oldest
            del _CACHE[next(iter(_CACHE))]
        _CACHE[key] = image
    return image


def _image(s: Sections, path: str, backend: str) -> Image:
    text_end = s.text_addr + len(s.text)
    starts = sorted((a, n) for n, a in s.symbols.items() if s.text_addr <= a < text_end)
    sizes = {}
    for k, (addr, name) in enumerate(starts):
        nxt = starts[k + 1][0] if k + 1 < len(starts) else text_end
        sizes[name] = nxt - addr
    return Image(s.text, s.data, s.bss_size, dict(s.symbols), s.entry, path, backend,
                 s.text_addr, s.data_addr, s.bss_addr, sizes)


def _assemble_gnu(source: str, digest: str) -> Image:
    tools = toolchain.gnu_tools()
    assert tools is not None  # checked by the caller
    gas, gld = tools
    base = os.path.join(toolchain.work_dir(), f"gnu-{digest}")
    with open(base + ".s", "w") as f:
        f.write(source)
    steps = [
        [gas, "--64", "-o", base + ".o", base + ".s"],
        [gld, "-m", "elf_x86_64", "-static", "-nostdlib", "-z", "noexecstack", "-e", "_start",
         f"-Ttext={TEXT_ADDR:#x}", f"-Tdata={DATA_ADDR:#x}", f"-Tbss={BSS_ADDR:#x}",
         "-o", base, base + ".o"],
    ]
    for cmd in steps:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            lines = (done.stderr or done.stdout).strip().splitlines()[:8]
            tool = os.path.basename(cmd[0])
            raise AssemblerError(f"{tool} failed on {base}.s:\n" + "\n".join(lines))
    with open(base, "rb") as f:
        return _image(read_elf(f.read()), base, "gnu")


def own_encoder(text: str) -> bytes:
    """Our encoder as the layout wants it: an instruction it cannot encode is an
    :class:`AssemblerError` like keystone's."""
    try:
        return encode(text)
    except EncodeError as e:
        raise AssemblerError(f"cannot assemble '{text}': {e}") from None


def assemble_own(source: str, text_addr: int = TEXT_ADDR, data_addr: int = DATA_ADDR,
                 bss_addr: int = BSS_ADDR) -> Sections:
    """Assemble ``source`` with our own encoder (no tool, no package: pure Python)."""
    return lay_out(source, own_encoder, text_addr, data_addr, bss_addr)


def _assemble_in_process(source: str, digest: str, backend: str) -> Image:
    s = (assemble_keystone(source, TEXT_ADDR, DATA_ADDR, BSS_ADDR) if backend == "keystone"
         else assemble_own(source))
    path = os.path.join(toolchain.work_dir(), f"{backend}-{digest}")
    with open(path, "wb") as f:
        f.write(write_elf(s))
    os.chmod(path, 0o700)
    return _image(s, path, backend)


def backend_differences(source: str, first: str = "gnu", second: str = "keystone"
                        ) -> list[str]:
    """What differs between two assemblers' images of ``source``: the names of functions
    whose bytes differ, plus ``"data"``/``"bss"``/``"symbols"``; empty when the two agree.
    Both must be installed (else :class:`toolchain.ToolMissing`)."""
    gnu, ks = assemble(source, first), assemble(source, second)
    diffs = [name for name, _, _ in gnu.functions()
             if gnu.function_bytes(name) != (ks.function_bytes(name) if name in ks.sizes
                                             else None)]
    if gnu.text != ks.text and not diffs:
        diffs.append("text")
    for name, a, b in (("data", gnu.data, ks.data), ("bss", gnu.bss_size, ks.bss_size),
                       ("symbols", gnu.symbols, ks.symbols)):
        if a != b:
            diffs.append(name)
    return diffs


def save_executable(image: Image, path: str, inputs: Sequence[str] = ()) -> None:
    """Write the image's executable to ``path``: ``ssa-course compile -o``. Safely
    (:func:`ssa_course.output.write_output`): never over one of ``inputs``, never half a
    file, the executable bits only on a file it creates (``-o /dev/null`` is written, not
    chmodded). The image's own file lives in the process's private directory, removed at
    exit."""
    with open(image.path, "rb") as f:
        data = f.read()
    write_output(path, data, inputs, executable=True)
