"""How much a printed result costs: operations, phis and loads (issue 22's measure).

Simple's tests state the optimized graph as the returned expression
(``return ((arg*2)+Phi(Region20,2,3));``): every operation is one parenthesized
``(a op b)`` or ``(-a)``, every phi a ``Phi(``, every load a ``.field`` or ``[i]``
read. Ours is the ``son-opt`` text; :func:`our_shape` walks the data inputs of what
``main`` prints (through phis, not through control or memory) and counts the same
three things, each node once (an allocation is not an operation: Simple prints it
``new S``; a load is one load and nothing under it: Simple prints ``.field`` or ``.[]``,
without the base or the index).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LINE = re.compile(r"^\s*%(\d+) = (\S+)(.*?)\s*: (.+)$")
_REF = re.compile(r"%(\d+)|\b_\b")
_LEAF = {"Parm", "Proj", "Start"}
_LOAD = {"Load", "LoadField"}


@dataclass(frozen=True)
class Shape:
    ops: int
    phis: int
    loads: int

    def not_worse_than(self, other: Shape) -> bool:
        return self.ops <= other.ops and self.phis <= other.phis and self.loads <= other.loads

    def __str__(self) -> str:
        return f"{self.ops} ops, {self.phis} phis, {self.loads} loads"


def simple_shape(expr: str) -> Shape:
    """The cost of one of Simple's printed results (the ``return ...;`` text)."""
    body = expr.strip().removeprefix("return").strip().rstrip(";")
    phis = body.count("Phi(")
    loads = len(re.findall(r"\.[A-Za-z_]\w*|\[", body))
    return Shape(body.count("(") - phis, phis, loads)


def our_shape(text: str) -> Shape:
    """The cost of the values ``main``'s Print nodes print, in a ``son-opt`` listing."""
    nodes: dict[int, tuple[str, list[int | None], str]] = {}
    graph = text.split("graph main(", 1)[1].split("\ngraph ", 1)[0]
    for line in graph.splitlines():
        m = _LINE.match(line)
        if m:
            refs = [int(r.group(1)) if r.group(1) else None for r in _REF.finditer(m.group(3))]
            ty = m.group(4).split(";")[0].strip()  # (without a "; name" note)
            nodes[int(m.group(1))] = (m.group(2), refs, ty)
    ops = phis = loads = 0
    seen: set[int] = set()
    work = [v for label, refs, _t in nodes.values() if label == "Print"
            for v in refs[2:] if v is not None]
    while work:
        n = work.pop()
        if n in seen or n not in nodes:
            continue
        seen.add(n)
        label, refs, t = nodes[n]
        if label == "Proj" and refs and nodes.get(refs[0], ("",))[0] == "Call":
            ops += 1  # a call's result: one operation (Simple inlines what it can)
            continue
        if t in ("ctrl", "mem") or t.startswith("[") or label in _LEAF \
                or label == "new" or refs == [0]:
            # control, memory, parameters, constants, allocations (Simple prints an
            # allocation ``new S``, with no parenthesis: not an operation)
            continue
        if label == "Phi":
            phis += 1
            work.extend(r for r in refs[1:] if r is not None)
            continue
        if label in _LOAD:
            # Simple prints a load as ``.name`` (``.[]`` for an element): its base and
            # index are not in the printed result (LoadNode._print1), so not counted here
            loads += 1
            continue
        ops += 1
        work.extend(r for r in refs[1:] if r is not None)
    return Shape(ops, phis, loads)
