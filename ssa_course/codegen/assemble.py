"""Executable images, for every target: what an assembler makes and everything after it.

Each CPU's ``assemble.py`` turns assembly source into an :class:`Image` by GNU ``as`` +
``ld``, keystone, or the project's own encoder; all three place the program at the same
fixed addresses (text at ``TEXT_ADDR``, data at ``DATA_ADDR``, bss at ``BSS_ADDR``) and
give the same bytes (the test suite checks it). The :class:`Image` keeps those bytes, the
symbols and the executable's path, which is everything the native runner, the emulators
and the disassemblers need. Here: the image, its cache, linking with GNU ``ld``, writing
the ELF file, comparing two images, and which assembler the current context chose
(:func:`using_assembler`: ``--assembler`` on the command line, ``assembler=`` in the
library; else "auto", :func:`ssa_course.codegen.toolchain.choose_assembler`).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from ssa_course.codegen import toolchain
from ssa_course.codegen.asm_data import AssemblerError
from ssa_course.codegen.elf import Sections, write_elf
from ssa_course.output import write_output

# Fixed addresses (a static, non-PIE executable): every assembler must produce the same
# bytes, which is only comparable if rip-relative displacements are computed against the
# same layout. 0x401000 is where GNU ld puts .text by default on x86-64.
TEXT_ADDR = 0x401000
DATA_ADDR = 0x20000000  # far from the text: a program of any size fits below it
BSS_ADDR = 0x30000000
BACKENDS = toolchain.ASSEMBLER_CHOICES  # gnu, keystone, own, auto
# What each assembler is, for listings ("assembled by ...").
DESCRIPTIONS = {"gnu": "GNU as + ld", "keystone": "keystone-engine + the project's layout",
                "own": "the project's own encoder, pure Python"}

__all__ = ["AssemblerError", "Image", "save_executable", "TEXT_ADDR", "DATA_ADDR", "BSS_ADDR",
           "using_assembler", "current_assembler", "chosen_assembler"]

# A ContextVar rather than a global: a notebook cell or a test can choose an assembler for
# a `with` block without leaking the choice into whatever runs next (or in another thread).
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
    # set/reset with a token restores exactly the outer choice, so blocks nest.
    token = _CHOSEN.set(name)
    try:
        yield
    finally:
        _CHOSEN.reset(token)


def chosen_assembler() -> str:
    """The assembler named by the enclosing :func:`using_assembler` block ("auto" outside
    one), not yet resolved for a target."""
    return _CHOSEN.get()


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


# Images are cached by (source hash, backend), a cache per target (:func:`cached`).
_CACHE_SIZE = 256


def source_hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:24]


def cached(cache: dict[tuple[str, str], Image], source: str, backend: str,
           make: Callable[[str], Image]) -> Image:
    """``cache``'s image of ``source`` by ``backend`` (keyed by the source's hash), else
    ``make(hash)``'s, remembered (a target keeps a cache of its own)."""
    key = (source_hash(source), backend)
    image = cache.get(key)
    # The file may have gone (a cleaned temporary directory): the image is only reused
    # while the executable it names can still be run.
    if image is None or not os.path.exists(image.path):
        image = make(key[0])
        if len(cache) >= _CACHE_SIZE:  # a long notebook session: forget the oldest
            del cache[next(iter(cache))]
        cache[key] = image
    return image


def image_of(s: Sections, path: str, backend: str,
             symbols: dict[str, int] | None = None) -> Image:
    """The :class:`Image` of linked sections ``s`` (``symbols``: those to keep, default
    all), each text symbol's size running up to the next one."""
    symbols = dict(s.symbols) if symbols is None else symbols
    # ELF symbols of hand-written assembly carry no sizes, so a function is taken to run up
    # to the next text symbol: enough to compare two assemblers function by function.
    text_end = s.text_addr + len(s.text)
    starts = sorted((a, n) for n, a in symbols.items() if s.text_addr <= a < text_end)
    sizes = {}
    for k, (addr, name) in enumerate(starts):
        nxt = starts[k + 1][0] if k + 1 < len(starts) else text_end
        sizes[name] = nxt - addr
    return Image(s.text, s.data, s.bss_size, symbols, s.entry, path, backend,
                 s.text_addr, s.data_addr, s.bss_addr, sizes)


def link_gnu(source: str, base: str, tools: tuple[str, str], as_flags: Sequence[str],
             ld_flags: Sequence[str]) -> bytes:
    """Assemble ``source`` with GNU ``as`` and link it with ``ld`` at the fixed addresses
    (both targets; ``base``: the files' path without suffix): the executable's bytes. A
    tool's complaint is an :class:`AssemblerError` with its first lines."""
    gas, gld = tools
    with open(base + ".s", "w") as f:
        f.write(source)
    # -static -nostdlib: the program brings its own runtime (no libc, no dynamic loader),
    # so the executable is one self-contained file; -z noexecstack: the stack is data only
    # (newer ld warns when an object does not say so).
    steps = [
        [gas, *as_flags, "-o", base + ".o", base + ".s"],
        [gld, *ld_flags, "-static", "-nostdlib", "-z", "noexecstack", "-e", "_start",
         f"-Ttext={TEXT_ADDR:#x}", f"-Tdata={DATA_ADDR:#x}", f"-Tbss={BSS_ADDR:#x}",
         "-o", base, base + ".o"],
    ]
    for cmd in steps:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            # Generated assembly the tool rejects is our bug: a few lines of the tool's own
            # words are enough to find it, a full dump would bury the first error.
            lines = (done.stderr or done.stdout).strip().splitlines()[:8]
            tool = os.path.basename(cmd[0])
            raise AssemblerError(f"{tool} failed on {base}.s:\n" + "\n".join(lines))
    with open(base, "rb") as f:
        return f.read()


def write_executable(s: Sections, path: str, machine: int | None = None) -> None:
    """Write sections ``s`` as an executable ELF file at ``path`` (``machine``: another
    ``e_machine`` than x86-64's, e.g. AArch64's)."""
    blob = bytearray(write_elf(s))
    if machine is not None:
        blob[18:20] = machine.to_bytes(2, "little")  # e_machine: the writer says x86-64
    with open(path, "wb") as f:
        f.write(bytes(blob))
    os.chmod(path, 0o700)


def image_differences(x: Image, y: Image) -> list[str]:
    """The names of functions whose bytes differ in two images, plus ``"data"``/
    ``"bss"``/``"symbols"`` (``"text"`` when the text differs elsewhere); empty when equal."""
    # Per function first, so a mismatch names where to look; "text" only when the bytes
    # differ outside every function (padding, a stray byte between symbols).
    diffs = [name for name, _, _ in x.functions()
             if x.function_bytes(name) != (y.function_bytes(name) if name in y.sizes
                                           else None)]
    if x.text != y.text and not diffs:
        diffs.append("text")
    for name, a, b in (("data", x.data, y.data), ("bss", x.bss_size, y.bss_size),
                       ("symbols", x.symbols, y.symbols)):
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
