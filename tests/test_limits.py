"""Limits and numbers from the command line (issue 19, items 3, 9 and 10): one reader of
decimal text, one accepted range for ``--steps``/``--depth``/``--step-limit`` and the
library's ``steps=``/``depth=``, the same answer in every stage."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ssa_course
from ssa_course import params
from ssa_course.args import parse_limit
from ssa_course.codegen import toolchain
from ssa_course.codegen.aarch64 import toolchain as a64_toolchain
from ssa_course.codegen.runtime_abi import RuntimeConfig, handler_bytes
from ssa_course.errors import ArgumentValueError, UsageError
from ssa_course.runtime import INT_MAX, MAX_LIMIT, Limits, decimal_value

NATIVE = toolchain.native_missing()
EMULATOR = toolchain.emulator_missing() or toolchain.assembler_missing()
SUM = "fn main(n: int) {\n  var s = 0;\n  for (var i = 0; i < n; i = i + 1) { s = s + i; }\n" \
      "  print(s);\n}\n"
VIAS = ["quads", "ast", "son"] + (["native"] if NATIVE is None else []) + \
    (["emulated"] if EMULATOR is None else [])


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ssa_course", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


@pytest.fixture
def prog(tmp_path: Path) -> Path:
    p = tmp_path / "sum.tiny"
    p.write_text(SUM)
    return p


# -- the reader of decimal text ---------------------------------------------------------

@settings(max_examples=300)
@given(st.text(alphabet="0123456789-+ \u0665\uff15x", max_size=30))
def test_decimal_value_is_int_of_ascii_digits(text):
    value = decimal_value(text)
    body = text[1:] if text.startswith("-") else text
    if body and all(c in "0123456789" for c in body):
        exact = int(text)
        if abs(exact) <= INT_MAX + 1:
            assert value == exact
        else:  # beyond 64 bits: some value beyond them, with the same sign
            assert value is not None and abs(value) > INT_MAX + 1 and (value < 0) == (exact < 0)
    else:
        assert value is None


@settings(max_examples=100)
@given(st.integers(0, 6000), st.integers(0, 10**25), st.booleans())
def test_decimal_value_never_converts_thousands_of_digits(zeros, n, negative):
    text = ("-" if negative else "") + "0" * zeros + str(n)
    value = decimal_value(text)  # Python's int() refuses more than 4,300 digits
    assert value is not None
    if n <= INT_MAX + 1:
        assert value == (-n if negative else n)
    else:
        assert abs(value) > INT_MAX + 1


# -- one range for every limit ----------------------------------------------------------

@settings(max_examples=300)
@given(st.one_of(st.integers(-5, 2 ** 70), st.sampled_from([0, 1, MAX_LIMIT, MAX_LIMIT + 1,
                                                            2 ** 64, 10 ** 22])))
def test_the_cli_and_the_library_accept_the_same_limits(n):
    try:
        params.limit("run", "steps", n)
        library = True
    except ArgumentValueError as e:
        library = False
        assert "\n" not in str(e)
    try:
        assert parse_limit("--steps", str(n)) == n
        cli_ok = True
    except UsageError as e:
        cli_ok = False
        assert "\n" not in str(e) and "--steps" in str(e)
    assert library == cli_ok == (1 <= n <= MAX_LIMIT)


@pytest.mark.parametrize("text, needle", [
    (" 5", "whole number"), ("5 ", "whole number"), ("\uff15", "whole number"),
    ("+5", "whole number"), ("-3", "whole number"), ("", "whole number"), ("0", "at least 1"),
    ("000", "at least 1"), ("9223372036854775808", "at most 9223372036854775807"),
    ("1" * 5000, "(5000 characters)"), ("0x10", "whole number"), ("1e3", "whole number"),
])
def test_bad_limits_are_one_line(text, needle):
    with pytest.raises(UsageError) as e:
        parse_limit("--depth", text)
    assert needle in str(e.value) and "\n" not in str(e.value) and len(str(e.value)) < 200


def test_leading_zeros_and_the_largest_limit_are_accepted():
    assert parse_limit("--steps", "0005") == 5
    assert parse_limit("--steps", "0" * 5000 + "7") == 7
    assert parse_limit("--steps", str(MAX_LIMIT)) == MAX_LIMIT


@pytest.mark.parametrize("value", [MAX_LIMIT + 1, 10 ** 20, 10 ** 5000, 0, -1],
                         ids=["max+1", "1e20", "1e5000", "zero", "minus-one"])
def test_the_machine_code_never_sees_an_unencodable_limit(value):
    with pytest.raises(UsageError, match="limit must be"):
        RuntimeConfig(depth_limit=value)
    with pytest.raises(UsageError, match="limit must be"):
        RuntimeConfig(step_limit=value)


def test_a_huge_depth_reserves_a_bounded_handler_stack():
    small = handler_bytes(RuntimeConfig(depth_limit=100_000))
    huge = handler_bytes(RuntimeConfig(depth_limit=MAX_LIMIT))
    assert small < huge <= 2 * 1024 ** 3  # reserved, never touched unless used


@pytest.mark.parametrize("option", ["--steps", "--depth", "--timeout"])
@pytest.mark.parametrize("text", ["12000000000000000000", "18446744073709551616",
                                  "1" * 5000, " 5", "\uff15"])
def test_every_stage_refuses_the_same_limit_text(prog, option, text):
    seen = set()
    for via in VIAS:
        r = cli("run", "--via", via, option, text, str(prog), "5")
        assert r.returncode == 1 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
        seen.add(r.stderr)
    assert len(seen) == 1


@pytest.mark.parametrize("option, value", [("--steps", str(MAX_LIMIT)),
                                           ("--depth", str(MAX_LIMIT)),
                                           ("--depth", "1000000000000"),
                                           ("--timeout", str(MAX_LIMIT)),
                                           ("--steps", "0" * 5000 + "100000")])
def test_every_stage_runs_under_the_largest_limits(prog, option, value):
    for via in VIAS:  # native used to stop at once, say 'out of memory' or exit 70
        r = cli("run", "--via", via, option, value, str(prog), "5")
        assert (r.returncode, r.stdout, r.stderr) == (0, "10\n", ""), (via, r.stderr)


@pytest.mark.skipif(NATIVE is not None, reason=NATIVE or "")
def test_compile_takes_the_same_limits(prog, tmp_path):
    exe = tmp_path / "exe"
    for option in ("--depth", "--step-limit"):
        for bad in (str(10 ** 22), "18446744073709551616", "0", " 5"):
            r = cli("compile", str(prog), "-o", str(exe), option, bad)
            assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
            assert option in r.stderr and not exe.exists()
    r = cli("compile", str(prog), "-o", str(exe), "--step-limit", str(MAX_LIMIT),
            "--depth", str(MAX_LIMIT))
    assert r.returncode == 0, r.stderr
    done = subprocess.run([str(exe), "5"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "10\n", "")


@pytest.mark.parametrize("via", VIAS)
def test_library_limits_are_checked_before_any_stage(via):
    for bad in (10 ** 20, MAX_LIMIT + 1, 0):
        with pytest.raises(ValueError, match="'depth' must be at"):
            ssa_course.run(SUM, 5, via=via, depth=bad)
        with pytest.raises(ValueError, match="'steps' must be at"):
            ssa_course.run(SUM, 5, via=via, steps=bad)
    r = ssa_course.run(SUM, 5, via=via, steps=MAX_LIMIT, depth=MAX_LIMIT)
    assert (r.status, r.stdout) == (0, "10\n")


def test_limits_objects_beyond_the_range_are_one_clean_line():
    from ssa_course.stages import run

    comp = ssa_course.compile(SUM)
    for via in VIAS:  # the same refusal in every stage, not an answer in some
        r = run(comp, ["5"], via=via, limits=Limits(depth=10 ** 20))
        assert (r.status, r.stdout) == (1, "") and "depth limit must be at most" in r.error
        r = run(comp, ["5"], via=via, limits=Limits(steps=0))
        assert (r.status, r.stdout) == (1, "") and "step limit must be at least 1" in r.error


# -- program arguments of thousands of digits --------------------------------------------

@pytest.mark.parametrize("arg, expected", [
    ("0" * 4300 + "5", (0, "10\n", "")),
    ("-" + "0" * 5000 + "1", (0, "0\n", "")),
    ("7" * 5000, (1, "", "out of the 64-bit int range")),
    ("7" * 5000 + "x", (1, "", "must be an int")),
])
def test_thousands_of_digits_as_a_program_argument(prog, arg, expected):
    for via in VIAS:
        r = cli("run", "--via", via, str(prog), arg)
        assert (r.returncode, r.stdout) == expected[:2], (via, r.stderr[:200])
        assert expected[2] in r.stderr and r.stderr.count("\n") == (1 if expected[2] else 0)
    lib = ssa_course.run(SUM, arg)
    assert (lib.status, lib.stdout) == expected[:2] and expected[2] in lib.error


def test_thousands_of_digits_through_the_cell_magic(capsys):
    from ssa_course.magic import tiny_magic

    tiny_magic("--args " + "0" * 5000 + "3", SUM)
    assert capsys.readouterr().out.endswith("3\n")
    tiny_magic("--args " + "9" * 5000, SUM)
    err = capsys.readouterr().err
    assert "out of the 64-bit int range" in err and "Traceback" not in err


# -- literals: Tiny and Bril read digits the same way ------------------------------------

@pytest.mark.parametrize("digits, ok", [("0" * 4999 + "5", True), ("007", True),
                                        ("9223372036854775807", True),
                                        ("9223372036854775808", False), ("9" * 5000, False),
                                        ("0" * 5000 + "9223372036854775808", False)])
def test_tiny_and_bril_literals_agree(digits, ok):
    tiny = ssa_course.run(f"fn main() {{ print({digits}); }}")
    bril = ssa_course.run(f"@main {{\n  x: int = const {digits};\n  print x;\n}}\n")
    for r in (tiny, bril):
        if ok:
            assert (r.status, r.stdout) == (0, f"{int(digits.lstrip('0'))}\n"), r.error
        else:
            assert r.status == 1 and ("too large" in r.error or "out of 64-bit" in r.error)


# -- run --timeout: the machine-code runs' wall-clock limit, a documented flag (issue 39) --

MACHINE_RUNS = (["native"] if NATIVE is None else []) + \
    (["emulated"] if EMULATOR is None else []) + \
    (["qemu-aarch64"] if a64_toolchain.qemu_missing() is None else [])


@pytest.mark.parametrize("via", MACHINE_RUNS)
def test_timeout_bounds_a_machine_code_run(tmp_path, via):
    """``--timeout 1``: an endless loop under a step limit it never reaches stops after
    about a second with one line and status 2 (it was a hidden 60 s before)."""
    spin = tmp_path / "spin.tiny"
    spin.write_text("fn main() { while (true) { } }\n")
    start = time.monotonic()
    r = cli("run", "--via", via, "--steps", str(MAX_LIMIT), "--timeout", "1", str(spin))
    took = time.monotonic() - start
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.endswith(" after 1 s\n"), r.stderr
    assert took < 30


@pytest.mark.parametrize("text, needle", [
    ("0", "--timeout must be at least 1, not 0"), ("1.5", "whole number from 1 to"),
    ("-1", "whole number from 1 to"), ("1" + "0" * 20, "must be at most 9223372036854775807"),
])
def test_bad_timeouts_read_like_bad_steps(prog, text, needle):
    r = cli("run", "--timeout", text, str(prog), "5")
    assert (r.returncode, r.stdout) == (1, "") and r.stderr.count("\n") == 1
    assert needle in r.stderr, r.stderr
    steps = cli("run", "--steps", text, str(prog), "5")
    assert r.stderr.replace("--timeout", "--steps") == steps.stderr


def test_the_library_takes_the_same_timeout():
    with pytest.raises(ArgumentValueError, match=r"run\(\): 'timeout' must be at least 1"):
        ssa_course.run(SUM, 5, timeout=0)
    with pytest.raises(TypeError, match=r"run\(\): 'timeout'"):
        ssa_course.run(SUM, 5, timeout=True)
    assert ssa_course.run(SUM, 5, via="quads", timeout=MAX_LIMIT).stdout == "10\n"
    assert Limits().timeout == 60
