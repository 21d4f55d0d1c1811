"""The program corpora, loaded for the differential and conformance tests.

``tests/programs/NAME.tiny``: header comments ``// ARGS: 5 true`` (arguments, default
none) and ``// EXIT: 2`` (expected status, default 0) and ``// STEPS: 200000`` (a smaller step limit
for the differential run: the step-limit error reads the same at any limit, and 28 stages
counting to the default ten million took two minutes; the default itself is checked by
tests/test_cli.py and tests/test_limits.py); ``NAME.out`` the exact expected
standard output; ``NAME.err`` the exact expected standard error (absent: empty).

``tests/bril/NAME.bril`` (or ``.json``): ``# ARGS:`` and ``# EXIT:`` likewise (JSON files
take them from the ``.bril`` twin's header or an ``NAME.args`` file); ``NAME.out``,
optional ``NAME.err``, and ``NAME.prof`` holding ``total_dyn_inst: N`` when the count
is known.

Expected outputs were written from LANGUAGE.md and Bril's semantics, never by running
our own interpreters.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class CorpusCase:
    name: str
    path: Path
    source: str
    args: list[str]
    exit: int
    stdout: str
    stderr: str
    profile: int | None = None
    steps: int | None = None


def _header(source: str, key: str) -> str | None:
    for line in source.splitlines():
        stripped = line.strip()
        for prefix in (f"// {key}:", f"# {key}:"):
            if stripped.startswith(prefix):
                return stripped[len(prefix):].strip()
    return None


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def _case(path: Path, header_source: str | None = None) -> CorpusCase:
    source = path.read_text()
    header = header_source if header_source is not None else source
    args = (_header(header, "ARGS") or "").split()
    exit_status = int(_header(header, "EXIT") or 0)
    prof_text = _read(path.with_suffix(".prof")).strip()
    profile = int(prof_text.split(":")[1]) if prof_text else None
    steps = _header(header, "STEPS")
    return CorpusCase(path.stem + path.suffix.replace(".tiny", ""), path, source, args,
                      exit_status, _read(path.with_suffix(".out")),
                      _read(path.with_suffix(".err")), profile,
                      int(steps) if steps else None)


def load_corpus() -> list[CorpusCase]:
    """Every Tiny program of ``tests/programs``, sorted by name."""
    return [_case(p) for p in sorted((HERE / "programs").glob("*.tiny"))]


def load_float_corpus() -> list[CorpusCase]:
    """The Tiny programs with floats, ``tests/programs/float`` (issue #36): apart from the
    main corpus, whose every program also runs as machine code (which has no floats yet).
    Their outputs were checked against Bril's reference interpreter (the lowered Bril) or
    Node.js (the same arithmetic in JavaScript)."""
    return [_case(p) for p in sorted((HERE / "programs" / "float").glob("*.tiny"))]


def load_bril_float_corpus() -> list[CorpusCase]:
    """Bril programs of the float extension, ``tests/bril/float``, written for these tests;
    ``.out`` and ``.prof`` come from Bril's reference interpreter (brili -p)."""
    return [_case(p) for p in sorted((HERE / "bril" / "float").glob("*.bril"))]


def load_bril_corpus() -> list[CorpusCase]:
    """Every Bril program (text and JSON) of ``tests/bril``, sorted by name."""
    cases = []
    for p in sorted((HERE / "bril").glob("*")):
        if p.suffix == ".bril":
            cases.append(_case(p))
        elif p.suffix == ".json":
            twin = p.with_suffix(".bril")
            cases.append(_case(p, _read(twin) if twin.exists() else _read(p.with_suffix(".args"))))
    return cases


def load_simple_corpus() -> list[CorpusCase]:
    """Simple's chapter tests translated to Tiny (``tests/simple``): the headers of
    ``tests/programs``, plus ``// SIMPLE: return ...;``, the optimized result Simple's
    test states (:func:`simple_expected`)."""
    return [_case(p) for p in sorted((HERE / "simple").glob("*.tiny"))]


def simple_expected(case: CorpusCase) -> str:
    found = _header(case.source, "SIMPLE")
    assert found, f"{case.path} has no '// SIMPLE:' header"
    return found
