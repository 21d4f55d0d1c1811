"""Pictures side by side, each with a caption: the input, the expected answer, yours.

:class:`Panels` holds (caption, picture) pairs. Jupyter shows it as one HTML row: each
picture as its own richest form -- SVG (a :class:`~ssa_course.viz.render.Drawing` when
Graphviz works), PNG (the fallback drawing), HTML, or its text in a ``<pre>`` block. A
picture that cannot be rendered shows why, in its place; the others still show.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field


@dataclass(slots=True)
class Panels:
    """Captioned pictures shown in one row (text: one after the other)."""

    items: list[tuple[str, object]] = field(default_factory=list)
    title: str = ""

    def add(self, caption: str, picture: object) -> None:
        self.items.append((caption, picture))

    def _repr_html_(self) -> str:
        cells = "".join(
            "<td style='vertical-align:top;padding:4px 12px;text-align:center'>"
            f"<div style='font-weight:bold;margin-bottom:4px'>{html.escape(caption)}</div>"
            f"{_html_of(picture)}</td>"
            for caption, picture in self.items)
        title = (f"<div style='margin:4px 0'>{html.escape(self.title)}</div>"
                 if self.title else "")
        return f"{title}<table style='border:none'><tr>{cells}</tr></table>"

    def __repr__(self) -> str:
        parts = [self.title] if self.title else []
        for caption, picture in self.items:
            parts.append(f"--- {caption} ---\n{_text_of(picture)}")
        return "\n".join(parts)


def _html_of(picture: object) -> str:
    """The richest HTML for one picture; a failing renderer falls back to the next."""
    for method, wrap in (("_repr_svg_", _svg), ("_repr_png_", _png), ("_repr_html_", str)):
        render = getattr(picture, method, None)
        if render is None:
            continue
        try:
            data = render()
        except Exception as e:  # one broken picture must not hide the others
            return f"<pre>(cannot draw this: {html.escape(str(e)[:300])})</pre>"
        if data:
            return wrap(data)
    return f"<pre style='text-align:left'>{html.escape(_text_of(picture))}</pre>"


def _svg(data: str | bytes) -> str:
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    start = text.find("<svg")  # drop the XML prolog and DOCTYPE Graphviz writes
    return text[start:] if start >= 0 else text


def _png(data: bytes | str) -> str:
    raw = data if isinstance(data, bytes) else data.encode("latin-1")
    return f"<img src='data:image/png;base64,{base64.b64encode(raw).decode('ascii')}'/>"


def _text_of(picture: object) -> str:
    try:
        return str(picture)
    except Exception:
        return f"<{type(picture).__name__} object>"
