"""One check shared by the machine-code pass tests: each program, on each argument list,
prints, ends and traps in a machine-code stage exactly as the quads interpreter does."""

from __future__ import annotations

import pytest

from ssa_course import registry
from ssa_course.compilation import compile_source
from ssa_course.stages import run as run_stage

STAGES = [s for s in ("native", "emulated", "emulated-aarch64", "qemu-aarch64")
          if s in registry.names()]


def agrees_with_the_interpreter(source: str, name: str, stage: str,
                                args_lists: list[list[str]]) -> None:
    missing = registry.representation(stage).unavailable()
    if missing:
        pytest.skip(missing)
    comp = compile_source(source, "t.tiny")
    for args in args_lists:
        want = run_stage(comp, args, via="quads")
        got = run_stage(comp, args, via=stage)
        assert (got.stdout, got.status, got.error) == (want.stdout, want.status, want.error), \
            (name, args)
