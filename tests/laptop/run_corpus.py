"""Run the corpus through ``ssa-course run --via emulated`` (the CLI, in this process) and
print one JSON object: what this machine looks like and every program whose output, status
or error message differs from the expected ones. ``tests/test_laptop.py`` runs it on the
imitated ARM laptop; the argument is the target."""

from __future__ import annotations

import contextlib
import io
import json
import platform
import shutil
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TESTS))

from corpus import load_bril_corpus, load_corpus  # noqa: E402

from ssa_course.cli import main  # noqa: E402
from ssa_course.codegen import toolchain  # noqa: E402


def target_args(target: str) -> list[str]:
    """The CLI options that pick ``target`` ("host": none, so the laptop's own default,
    aarch64, is used)."""
    return [] if target == "host" else ["--target", target]


def run(argv: list[str]) -> tuple[str, str, int]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as e:
            status = int(e.code or 0)
    return out.getvalue(), err.getvalue(), status


def check_corpus(target: str) -> None:
    wrong = []
    cases = [*load_corpus(), *load_bril_corpus()]
    for case in cases:
        argv = ["run", "--via", "emulated", *target_args(target), str(case.path), *case.args]
        stdout, stderr, status = run(argv)
        check_err = bool(case.stderr) or case.path.suffix == ".tiny"
        if stdout != case.stdout or status != case.exit or (check_err and
                                                            stderr != case.stderr):
            wrong.append({"case": case.name, "status": status, "stderr": stderr[-300:],
                          "expected_status": case.exit, "expected_stderr": case.stderr})
    from ssa_course.codegen.assemble import current_assembler

    print(json.dumps({
        "machine": platform.machine(), "as": shutil.which("as"),
        "cross_as": shutil.which("x86_64-linux-gnu-as"),
        "keystone": toolchain.keystone_missing(), "assembler": current_assembler(),
        "cases": len(cases), "wrong": wrong}))


if __name__ == "__main__":
    check_corpus(sys.argv[1] if len(sys.argv) > 1 else "x86-64")
