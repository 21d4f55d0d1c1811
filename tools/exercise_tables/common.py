"""Helpers shared by the exercise table builders (see build.py)."""
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]

def load(name):
    return nbformat.read(ROOT / 'solutions' / name, as_version=4)

def save(nb, name):
    nbformat.write(nb, ROOT / 'solutions' / name)

def cell(nb, gid):
    return next(c for c in nb.cells if c.metadata.get('nbgrader', {}).get('grade_id') == gid)

def setsrc(nb, gid, src):
    cell(nb, gid).source = src.strip('\n')

def run(ns, src):
    exec(compile(src, '<build>', 'exec'), ns)

def table(name, items, key=repr, val=repr):
    lines = [f"{name} = {{"]
    for k, v in items:
        lines.append(f"    {key(k)}: {val(v)},")
    lines.append("}")
    return "\n".join(lines)

def listing(name, items, fmt=repr):
    lines = [f"{name} = ["]
    for it in items:
        lines.append(f"    {fmt(it)},")
    lines.append("]")
    return "\n".join(lines)

def sset(s):
    return "{" + ", ".join(repr(x) for x in sorted(s)) + "}" if s else "set()"
