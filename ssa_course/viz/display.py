"""Small display wrappers so text faces look right both in a terminal and in Jupyter."""

from __future__ import annotations

import html


class Text(str):
    """A string that Jupyter shows as preformatted monospace text (and ``print`` as itself)."""

    def _repr_html_(self) -> str:
        return f"<pre style='line-height:1.25'>{html.escape(str(self))}</pre>"

    def __repr__(self) -> str:
        return str(self)
