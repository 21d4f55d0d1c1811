"""Issue #38 (codegen in one folder per CPU): the lesson 11 notebook and its exercise source
import names that moved (x86-64's registers, pattern table, frame and encoder now live in
``ssa_course/codegen/x86_64/``). Idempotent text replacements in code cells, so the branch
can re-apply them after a merge (docs/lessons.md); delete this script once merged.

    .venv/bin/python tools/i38_notebook_edits.py && make exercises
"""

from __future__ import annotations

from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent

# (old, new): each applied where ``old`` is found and ``new`` is not there yet.
REPLACEMENTS = (
    ("from ssa_course.codegen.patterns import table_text\n",
     "from ssa_course.codegen.x86_64.patterns import table_text\n"),
    ("from ssa_course.codegen.mir import ALLOCATABLE\n",
     "from ssa_course.codegen.x86_64.registers import ALLOCATABLE\n"),
    ("from ssa_course.codegen.mir import ARG_REGS, CALLEE_SAVED\n",
     "from ssa_course.codegen.x86_64.registers import ARG_REGS, CALLEE_SAVED\n"),
    ("from ssa_course.codegen.mir import RET_REG\n",
     "from ssa_course.codegen.x86_64.registers import RET_REG\n"),
    ("from ssa_course.codegen.target import X86_64, register_file\n",
     "from ssa_course.codegen.target import register_file\n"
     "from ssa_course.codegen.x86_64.registers import X86_64\n"),
    ("from ssa_course.codegen.frame import DEPTH_REG\n",
     "from ssa_course.codegen.x86_64.frame import DEPTH_REG\n"),
    ("from ssa_course.codegen.x86_table import REGISTERS\n",
     "from ssa_course.codegen.x86_64.table import REGISTERS\n"),
    ("from ssa_course.codegen.x86_encode import fields\n",
     "from ssa_course.codegen.x86_64.encode import fields\n"),
    ("our encoder (ssa_course/codegen/x86_encode.py)",
     "our encoder (ssa_course/codegen/x86_64/encode.py)"),
    ("placed by our own assembler (`ssa_course/codegen/layout.py`)",
     "placed by our own assembler (`ssa_course/codegen/x86_64/layout.py`)"),
    ("from ssa_course.codegen.assemble import DESCRIPTIONS, assemble, current_assembler\n",
     "from ssa_course.codegen.assemble import DESCRIPTIONS, current_assembler\n"
     "from ssa_course.codegen.x86_64.assemble import assemble\n"),
    ("from ssa_course.codegen.assemble import assemble_own\n",
     "from ssa_course.codegen.x86_64.assemble import assemble_own\n"),
    # each CPU's machine (not its compile module) now names the allocator it runs
    ("from ssa_course.codegen.aarch64 import compile as a64_compile\n",
     "from ssa_course.codegen.aarch64 import machine as a64_machine\n"),
    ("assert a64_compile.regalloc.allocate is regalloc.allocate",
     "assert a64_machine.regalloc.allocate is regalloc.allocate"),
)
NOTEBOOKS = ("notebooks/11-codegen.ipynb", "solutions/11-codegen.ipynb")


def apply(path: Path) -> int:
    nb = nbformat.read(path, as_version=4)
    changed = 0
    for cell in nb.cells:
        text = cell.source
        for old, new in REPLACEMENTS:
            if old in text:
                text = text.replace(old, new)
        if text != cell.source:
            cell.source = text
            changed += 1
    if changed:
        nbformat.write(nb, path)
    return changed


def main() -> int:
    for name in NOTEBOOKS:
        print(f"{name}: {apply(ROOT / name)} cells changed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
