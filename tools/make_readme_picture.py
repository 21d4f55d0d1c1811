"""Draw the README's picture: the CFG of ``examples/sum.tiny`` (needs Graphviz)."""

from __future__ import annotations

from pathlib import Path

import ssa_course

ROOT = Path(__file__).resolve().parent.parent

if __name__ == "__main__":
    comp = ssa_course.load_file(str(ROOT / "examples" / "sum.tiny"))
    drawing = ssa_course.show(comp, "cfg")
    out = ROOT / "docs" / "img" / "cfg.svg"
    out.write_text(drawing.svg())
    print(f"wrote {out.relative_to(ROOT)}")
