"""The generated runtime, run through every backend: hand-written ``tiny_main`` functions
exercise each runtime entry; GNU and keystone must give the same bytes, native and
emulated runs the same stdout, stderr and status (tests/codegen_harness.py)."""

from __future__ import annotations

import pytest
from codegen_harness import EPILOGUE, images, observe, prologue, source

from ssa_course.args import parse_main_args
from ssa_course.codegen import toolchain
from ssa_course.codegen.native import ChildResult, deliver, format_args
from ssa_course.errors import Pos, RuntimeTrap, UsageError
from ssa_course.runtime import INT_MAX, INT_MIN, Output, format_print
from ssa_course.tiny.types import BOOL, INT, ArrayType

PRINT_VALUES = [0, -1, 1, 42, -42, 10, 999, INT_MIN, INT_MAX, INT_MIN + 1,
                *(s * (10 ** k + d) for k in range(1, 19) for d in (-1, 0) for s in (1, -1)),
                1 << 32, -(1 << 32), 1234567890123456789]


def _print_main() -> str:
    body = [prologue()]
    for k, v in enumerate(PRINT_VALUES):
        if k:
            body.append("    call rt_print_space\n")
        body.append(f"    mov rdi, {v}\n    call rt_print_int\n")
    body.append("    call rt_print_newline\n    mov rdi, 1\n    call rt_print_bool\n"
                "    call rt_print_space\n    xor edi, edi\n    call rt_print_bool\n"
                "    call rt_print_newline\n    call rt_print_newline\n")
    return "tiny_main:\n" + "".join(body) + EPILOGUE


def test_print_formats_like_the_interpreters():
    r = observe(source(_print_main()), [])
    assert r.stdout == format_print(PRINT_VALUES) + format_print([True, False]) + "\n"
    assert (r.stderr, r.status) == ("", 0)


def test_output_larger_than_the_buffer_is_kept_in_order():
    main = f"""tiny_main:
{prologue(16)}    mov qword ptr [rbp - 8], 0
.Lloop:
    mov rdi, qword ptr [rbp - 8]
    call rt_print_int
    call rt_print_newline
    add qword ptr [rbp - 8], 1
    cmp qword ptr [rbp - 8], 20000
    jl .Lloop
{EPILOGUE}"""
    r = observe(source(main), [])
    assert r.stdout == "".join(f"{k}\n" for k in range(20000))


def test_trap_keeps_output_and_reports_the_position():
    main = f"""tiny_main:
{prologue()}    mov rdi, 7
    call rt_print_int
    call rt_print_newline
    xor edi, edi
    mov rsi, 4
    mov rdx, 15
    call rt_trap
{EPILOGUE}"""
    r = observe(source(main), [])
    assert (r.stdout, r.stderr, r.status) == ("7\n", "error: division by zero at 4:15\n", 2)
    out = Output()
    with pytest.raises(RuntimeTrap) as e:
        deliver(r, out)
    assert (e.value.message, e.value.pos, out.text()) == ("division by zero", Pos(4, 15), "7\n")


_ARRAY_MAIN = f"""tiny_main:
{prologue(16)}    mov qword ptr [rbp - 8], rdi
    mov rdi, 5
    xor esi, esi
    call rt_new_array
    mov qword ptr [rbp - 16], rax
    mov rdi, qword ptr [rax]
    call rt_print_int
    call rt_print_space
    mov rax, qword ptr [rbp - 16]
    mov rdi, qword ptr [rax + 40]
    call rt_print_int
    call rt_print_newline
    mov rdi, qword ptr [rbp - 8]
    mov rsi, 1
    call rt_new_array
    mov rdi, qword ptr [rax]
    call rt_print_int
    call rt_print_newline
{EPILOGUE}"""


@pytest.mark.parametrize(("n", "limit", "stdout", "stderr"), [
    ("3", 400, "5 0\n3\n", ""),
    ("0", 400, "5 0\n0\n", ""),
    ("-1", 400, "5 0\n", "error: negative array length at 7:11\n"),
    ("-9223372036854775808", 400, "5 0\n", "error: negative array length at 7:11\n"),
    ("100000001", 10**9, "5 0\n", "error: array too large at 7:11\n"),
    ("100000000", 10**9, "5 0\n100000000\n", ""),
    ("95", 100, "5 0\n95\n", ""),
    ("96", 100, "5 0\n", "error: out of memory at 7:11\n"),
])
def test_arrays_check_length_and_budget(n, limit, stdout, stderr):
    src = source(_ARRAY_MAIN, (("n", "int"),), array_sites=((2, 3), (7, 11)),
                 allocation_limit=limit)
    r = observe(src, [n])
    assert (r.stdout, r.stderr, r.status) == (stdout, stderr, 2 if stderr else 0)


def test_many_arrays_come_from_fresh_chunks_without_overlap():
    # 100 arrays of a million elements (800 MB of address space, 12 chunks); each one's
    # last element is written, then read back through the next iteration.
    main = f"""tiny_main:
{prologue(32)}    mov qword ptr [rbp - 8], 0
    mov qword ptr [rbp - 16], 0
    mov qword ptr [rbp - 24], 0
.Lloop:
    mov rdi, 1000000
    xor esi, esi
    call rt_new_array
    mov rcx, qword ptr [rbp - 8]
    mov qword ptr [rax + 8000000], rcx
    mov rdx, qword ptr [rax]
    add qword ptr [rbp - 16], rdx
    mov rdx, qword ptr [rbp - 24]
    test rdx, rdx
    jz .Lfirst
    mov rdx, qword ptr [rdx + 8000000]
    add qword ptr [rbp - 16], rdx
.Lfirst:
    mov qword ptr [rbp - 24], rax
    add qword ptr [rbp - 8], 1
    cmp qword ptr [rbp - 8], 100
    jl .Lloop
    mov rdi, qword ptr [rbp - 16]
    call rt_print_int
    call rt_print_newline
{EPILOGUE}"""
    r = observe(source(main), [])
    assert (r.stdout, r.status) == (f"{100 * 1_000_000 + sum(range(99))}\n", 0)


def test_every_block_starts_at_a_16_byte_boundary():
    # Arrays of 1..5 qwords and bytes and structs of 1..3 fields, one after another: the
    # low four bits of every address, or-ed together, stay 0 (as malloc's blocks: rows of a
    # matrix lie as far apart as a C program's, benchmarks/native matmul).
    calls = "".join(
        f"    mov rdi, {n}\n    xor esi, esi\n    call {fn}\n"
        "    or qword ptr [rbp - 8], rax\n"
        for n in range(1, 6) for fn in ("rt_new_array", "rt_new_bytes"))
    calls += "".join(f"    mov rdi, {n}\n    call rt_new_struct\n"
                     "    or qword ptr [rbp - 8], rax\n" for n in (1, 2, 3, 0, 1))
    main = f"""tiny_main:
{prologue(16)}    mov qword ptr [rbp - 8], 0
{calls}    mov rdi, qword ptr [rbp - 8]
    and rdi, 15
    call rt_print_int
    call rt_print_newline
{EPILOGUE}"""
    r = observe(source(main), [])
    assert (r.stdout, r.status) == ("0\n", 0)


def test_structs_are_zeroed_and_distinct():
    main = f"""tiny_main:
{prologue(16)}    xor edi, edi
    call rt_new_struct
    mov qword ptr [rbp - 8], rax
    xor edi, edi
    call rt_new_struct
    cmp rax, qword ptr [rbp - 8]
    setne dil
    movzx edi, dil
    call rt_print_bool
    call rt_print_space
    mov rdi, 3
    call rt_new_struct
    mov rdi, qword ptr [rax + 16]
    call rt_print_int
    call rt_print_newline
{EPILOGUE}"""
    assert observe(source(main), []).stdout == "true 0\n"


# main: try { f1(42) } catch (e) { print(e, saved) }; print(depth); then an uncaught 7.
# f1: try { f2(x) } catch (e) { throw e + 1 }   f2: throw x   (the throw is two calls deep)
_THROW = f"""tiny_main:
{prologue(16)}    mov qword ptr [rbp - 8], 5
    lea rdi, [rip + .Lmain_handler]
    call rt_enter
    mov rdi, 42
    call tiny_f1
    call rt_leave
    mov rdi, 999
    call rt_print_int
    jmp .Lmain_after
.Lmain_handler:
    mov rdi, rax
    call rt_print_int
    call rt_print_space
    mov rdi, qword ptr [rbp - 8]
    call rt_print_int
    call rt_print_newline
.Lmain_after:
    mov rdi, qword ptr [rip + rt_depth]
    call rt_print_int
    call rt_print_newline
    lea rdi, [rip + .Lmain_unused]
    call rt_enter
    call rt_leave
    mov rdi, -7
    call rt_throw
.Lmain_unused:
    mov rdi, 1000
    call rt_print_int
{EPILOGUE}
tiny_f1:
{prologue(16)}    mov qword ptr [rbp - 8], rdi
    lea rdi, [rip + .Lf1_handler]
    call rt_enter
    mov rdi, qword ptr [rbp - 8]
    call tiny_f2
    call rt_leave
{EPILOGUE}.Lf1_handler:
    lea rdi, [rax + 1]
    call rt_throw

tiny_f2:
{prologue()}    call rt_throw
{EPILOGUE}"""


def test_throw_unwinds_two_calls_to_the_handler_then_uncaught():
    r = observe(source(_THROW, depth_limit=100), [])
    assert r.stdout == "43 5\n99\n"
    assert (r.stderr, r.status) == ("error: uncaught exception -7\n", 2)
    with pytest.raises(RuntimeTrap) as e:
        deliver(r, Output())
    assert (e.value.message, e.value.pos) == ("uncaught exception -7", None)


_SPIN = f"""tiny_main:
{prologue(16)}    mov rdi, 1
    call rt_print_int
    call rt_print_newline
    mov qword ptr [rbp - 8], 0
.Lhead:
    sub qword ptr [rip + rt_fuel], 3
    js rt_step_limit
    add qword ptr [rbp - 8], 1
    cmp qword ptr [rbp - 8], 1000000
    jl .Lhead
    mov rdi, qword ptr [rbp - 8]
    call rt_print_int
    call rt_print_newline
{EPILOGUE}"""


def test_fuel_runs_out_in_a_loop():
    r = observe(source(_SPIN, step_limit=1000), [])
    assert (r.stdout, r.stderr, r.status) == ("1\n", "error: step limit exceeded\n", 2)


def test_no_step_limit_means_no_fuel_limit():
    r = observe(source(_SPIN, step_limit=None), [])
    assert (r.stdout, r.status) == ("1\n1000000\n", 0)


_RECURSE = f"""tiny_main:
{prologue()}    call tiny_rec
    mov rdi, rax
    call rt_print_int
    call rt_print_newline
{EPILOGUE}
tiny_rec:
{prologue(256)}    test rdi, rdi
    jz .Lrec_zero
    dec rdi
    call tiny_rec
    inc rax
    jmp .Lrec_done
.Lrec_zero:
    xor eax, eax
.Lrec_done:
{EPILOGUE}"""


@pytest.mark.parametrize(("n", "ok"), [(50_000, True), (99_998, True), (99_999, False),
                                       (100_001, False)])
def test_depth_limit_counts_frames_like_the_interpreters(n, ok):
    # main plus n + 1 frames of rec, 272 bytes each: 27 MB, far past an 8 MB OS stack.
    r = observe(source(_RECURSE, (("n", "int"),)), [str(n)])
    if ok:
        assert (r.stdout, r.stderr, r.status) == (f"{n}\n", "", 0)
    else:
        assert (r.stdout, r.stderr, r.status) == ("", "error: stack overflow\n", 2)


_ECHO_MAIN = f"""tiny_main:
{prologue(16)}    mov qword ptr [rbp - 8], rsi
    call rt_print_int
    call rt_print_space
    mov rdi, qword ptr [rbp - 8]
    call rt_print_bool
    call rt_print_newline
{EPILOGUE}"""


@pytest.mark.parametrize("argv", [
    ["5", "true"], ["-9223372036854775808", "false"], ["9223372036854775807", "true"],
    ["0000000000000000000000000000012", "true"], ["-0", "false"],
    ["9223372036854775808", "true"], ["-9223372036854775809", "true"],
    ["99999999999999999999", "true"], ["00000000000000000000001", "maybe"],
    ["x", "true"], ["", "true"], ["-", "true"], ["+1", "true"], ["1 ", "true"],
    ["--5", "true"], ["1", "True"], ["1", "truex"], ["1", "fals"], ["1", ""],
    ["5\n", "true"], ["\uff11", "true"], ["1", "true\n"], ["1", "caf\u00e9"],
    [], ["1"], ["1", "true", "3"],
    # issue 19: more digits than Python's int() converts; leading zeros count for nothing,
    # 20 or more significant digits are out of range unless the form is wrong anyway
    ["0" * 5000 + "5", "true"], ["-" + "0" * 5000 + "9223372036854775808", "false"],
    ["9" * 5000, "true"], ["9" * 30 + "x", "true"], ["1" * 20, "true"],
])
def test_command_line_like_the_cli(argv):
    params = [("n", INT), ("b", BOOL)]
    r = observe(source(_ECHO_MAIN, (("n", "int"), ("b", "bool"))), argv)
    try:
        values = parse_main_args(params, argv)
    except UsageError as e:
        assert (r.stdout, r.stderr, r.status) == ("", f"error: {e}\n", 1)
    else:
        assert (r.stdout, r.stderr, r.status) == (format_print(values), "", 0)


def test_parameter_of_a_type_the_command_line_cannot_give():
    params = [("n", INT), ("a", ArrayType(INT))]
    with pytest.raises(UsageError) as e:
        parse_main_args(params, ["1", "2"])
    r = observe(source(_ECHO_MAIN, (("n", "int"), ("a", str(ArrayType(INT))))), ["1", "2"])
    assert (r.stdout, r.stderr, r.status) == ("", f"error: {e.value}\n", 1)
    with pytest.raises(UsageError) as e:
        parse_main_args(params, [])
    r = observe(source(_ECHO_MAIN, (("n", "int"), ("a", str(ArrayType(INT))))), [])
    assert (r.stdout, r.stderr, r.status) == ("", f"error: {e.value}\n", 1)


def test_seven_parameters_pass_the_seventh_on_the_stack():
    main = """tiny_main:
    push rbp
    mov rbp, rsp
    push r9
    push r8
    push rcx
    push rdx
    push rsi
    push rdi
"""
    for k, off in enumerate([-48, -40, -32, -24, -16, -8, 16]):
        if k:
            main += "    call rt_print_space\n"
        sign = "-" if off < 0 else "+"
        main += f"    mov rdi, qword ptr [rbp {sign} {abs(off)}]\n    call rt_print_int\n"
    main += "    call rt_print_newline\n    leave\n    ret\n"
    params = tuple((f"p{k}", "int") for k in range(7))
    r = observe(source(main, params), [str(10 * k - 3) for k in range(7)])
    assert r.stdout == format_print([10 * k - 3 for k in range(7)])


_CRASHES = [
    ("    xor eax, eax\n    mov rax, qword ptr [rax]\n", "SIGSEGV", 139),
    ("    xor ecx, ecx\n    cqo\n    idiv rcx\n", "SIGFPE", 136),
    ("    ud2\n", "SIGILL", 132),
]


@pytest.mark.parametrize(("body", "signame", "status"), _CRASHES)
def test_a_crash_is_one_line_and_the_caller_lives(body, signame, status):
    main = f"tiny_main:\n{prologue()}    mov rdi, 5\n    call rt_print_int\n{body}{EPILOGUE}"
    imgs = images(source(main))
    if toolchain.native_missing() is None:
        from ssa_course.codegen.native import run_native

        r = run_native(imgs[0], [])
        assert (r.stdout, r.stderr, r.status) == (
            "", f"error: native code crashed ({signame})\n", status)
        with pytest.raises(RuntimeTrap) as e:
            deliver(r, Output())
        assert e.value.message == f"native code crashed ({signame})"
    if toolchain.emulator_missing() is None:
        from ssa_course.codegen.x86_64.emulate import run_emulated

        r = run_emulated(imgs[0], [])
        assert r.status == status and r.stdout == ""
        assert r.stderr.startswith(f"error: emulated code crashed ({signame}")
        assert r.stderr.count("\n") == 1


_FOREVER = "tiny_main:\n.Lforever:\n    jmp .Lforever\n"


def test_an_endless_run_without_fuel_ends_at_the_time_limit():
    imgs = images(source(_FOREVER, step_limit=None))
    if toolchain.native_missing() is None:
        from ssa_course.codegen.native import run_native

        r = run_native(imgs[0], [], timeout_s=0.5)
        assert (r.stderr, r.status) == ("error: native run timed out after 0.5 s\n", 124)
    if toolchain.emulator_missing() is None:
        from ssa_course.codegen.x86_64.emulate import run_emulated

        r = run_emulated(imgs[0], [], timeout_s=0.5)
        assert (r.stderr, r.status) == ("error: emulated run stopped after 0.5 s\n", 124)
        r = run_emulated(imgs[0], [], max_instructions=1000)
        assert (r.stderr, r.status) == ("error: emulated run stopped after 1000 "
                                        "instructions\n", 124)


# ---------------------------------------------------------------- without a toolchain


def test_deliver_maps_results_like_the_interpreters():
    out = Output()
    assert deliver(ChildResult("1 2\n", "", 0), out) == 0 and out.text() == "1 2\n"
    with pytest.raises(RuntimeTrap) as e:
        deliver(ChildResult("", "error: index out of bounds at 12:3\n", 2), Output())
    assert (e.value.message, e.value.pos) == ("index out of bounds", Pos(12, 3))
    with pytest.raises(RuntimeTrap) as e:
        deliver(ChildResult("", "error: step limit exceeded\n", 2), Output())
    assert (e.value.message, e.value.pos) == ("step limit exceeded", None)
    with pytest.raises(UsageError) as u:
        deliver(ChildResult("", "error: main takes 0 arguments (none), but 1 was given\n",
                            1), Output())
    assert str(u.value) == "main takes 0 arguments (none), but 1 was given"
    assert format_args([3, -4, True, False]) == ["3", "-4", "true", "false"]


def test_missing_tools_are_one_line_reasons(monkeypatch):
    import platform
    import shutil

    from ssa_course.codegen.x86_64.assemble import assemble

    monkeypatch.setattr(shutil, "which", lambda _name: None)
    reason = toolchain.gnu_missing()
    assert reason == ("no GNU assembler ('as'): install binutils (apt-get install binutils)")
    with pytest.raises(toolchain.ToolMissing) as e:
        assemble(source(_FOREVER) + "# unique\n", "gnu")
    assert str(e.value) == reason
    monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    assert "native runs need x86-64 Linux" in (toolchain.native_missing() or "")
    assert "\n" not in (toolchain.native_missing() or "")


def test_config_for_limits_and_the_executor_interface():
    from ssa_course.codegen.x86_64.runtime import NO_FUEL_LIMIT, config_for
    from ssa_course.runtime import Limits

    c = config_for([("n", "int")], Limits(steps=50, depth=7, cells=9), [(1, 2)])
    assert (c.step_limit, c.depth_limit, c.allocation_limit, c.array_sites) == (50, 7, 9,
                                                                                ((1, 2),))
    assert config_for([], fuel=False).step_limit is None
    src = source(_SPIN, step_limit=None)
    assert f".quad {NO_FUEL_LIMIT}" in src
    img = images(source(_ECHO_MAIN, (("n", "int"), ("b", "bool"))))[0]
    runners = []
    if toolchain.native_missing() is None:
        from ssa_course.codegen.native import run_values_native
        runners.append(run_values_native)
    if toolchain.emulator_missing() is None:
        from ssa_course.codegen.x86_64.emulate import run_values_emulated
        runners.append(run_values_emulated)
    for run in runners:
        out = Output()
        assert run(img, [-3, True], out) == 0 and out.text() == "-3 true\n"
    img = images(source(_THROW, depth_limit=100))[0]
    for run in runners:
        out = Output()
        with pytest.raises(RuntimeTrap, match="uncaught exception -7"):
            run(img, [], out)
        assert out.text() == "43 5\n99\n"


_CALLEE_SAVED = ("rbx", "r12", "r13", "r14", "r15")


def test_a_throw_restores_callee_saved_registers_as_at_the_try():
    # main holds 11..15 in rbx, r12-r15 across the try; the thrower (a call deeper, which
    # "saved" them in a prologue whose epilogue never runs) overwrites all five.
    sets = "".join(f"    mov {r}, {11 + k}\n" for k, r in enumerate(_CALLEE_SAVED))
    prints = "".join(f"    mov rdi, {r}\n    call rt_print_int\n    call rt_print_space\n"
                     for r in _CALLEE_SAVED)
    clobber = "".join(f"    mov {r}, -1\n" for r in _CALLEE_SAVED)
    main = f"""tiny_main:
{prologue()}    push rbx
    push r12
    push r13
    push r14
    push r15
    sub rsp, 8
{sets}    lea rdi, [rip + .Lcs_handler]
    call rt_enter
    call tiny_thrower
    call rt_leave
.Lcs_handler:
{prints}    call rt_print_newline
    add rsp, 8
    pop r15
    pop r14
    pop r13
    pop r12
    pop rbx
{EPILOGUE}
tiny_thrower:
{prologue()}    push rbx
    push r12
    push r13
    push r14
    push r15
    sub rsp, 8
{clobber}    mov rdi, 3
    call rt_throw
"""
    r = observe(source(main), [])
    assert (r.stdout, r.status) == ("11 12 13 14 15 \n", 0)


def test_cross_binutils_are_found_on_other_machines(monkeypatch):
    import platform
    import shutil

    monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert "binutils-x86-64-linux-gnu" in (toolchain.gnu_missing() or "")
    monkeypatch.setattr(shutil, "which", lambda name: f"/usr/bin/{name}")
    assert toolchain.gnu_tools() == ("/usr/bin/x86_64-linux-gnu-as",
                                     "/usr/bin/x86_64-linux-gnu-ld")
    assert toolchain.gnu_missing() is None


def test_too_many_open_trys_is_a_stack_overflow(monkeypatch):
    from ssa_course.codegen import runtime_abi
    from ssa_course.codegen.x86_64 import runtime as runtime_asm

    monkeypatch.setattr(runtime_abi, "MIN_HANDLERS", 1000)
    main = f"""tiny_main:
{prologue(16)}    mov qword ptr [rbp - 8], 0
.Lagain:
    lea rdi, [rip + .Lagain]
    call rt_enter
    add qword ptr [rbp - 8], 1
    cmp qword ptr [rbp - 8], 5000
    jl .Lagain
    mov rdi, 1
    call rt_print_int
{EPILOGUE}"""
    src = source(main, depth_limit=10)
    assert runtime_asm.handler_bytes(runtime_asm.RuntimeConfig(depth_limit=10)) == 73728
    r = observe(src, [])
    assert (r.stdout, r.stderr, r.status) == ("", "error: stack overflow\n", 2)


def test_a_smaller_stack_when_the_address_space_is_limited():
    # ulimit -v 400 MB: the 1 GiB stack cannot be had, a quarter of it can (and suffices)
    if toolchain.native_missing():
        pytest.skip(toolchain.native_missing())
    import resource
    import subprocess

    img = images(source(_RECURSE, (("n", "int"),)))[0]

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (400 << 20, 400 << 20))

    done = subprocess.run([img.path, "50000"], capture_output=True, text=True,
                          preexec_fn=limit, check=False)
    assert (done.stdout, done.stderr, done.returncode) == ("50000\n", "", 0)
