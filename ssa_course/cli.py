"""``ssa-course``: run, inspect and draw Tiny and Bril programs from the shell.

    ssa-course run prog.tiny 10 true          run (arguments after the file go to main)
    ssa-course run --via ast prog.tiny 10     run through a named stage's executor
    ssa-course run --profile prog.bril 5      also print total_dyn_inst: N on stderr
    ssa-course stages                         list the representations (--via, --as, --emit)
    ssa-course show prog.tiny --as cfg --format svg -o cfg.svg
    ssa-course opt prog.tiny -p parse,sccp,gcm --format html -o steps.html
                                              step through the optimizer, pass by pass
    ssa-course check prog.tiny                report compile errors, run nothing

Exit status: 0 success, 1 compile error or bad usage/arguments (or standard output
failed), 2 runtime error, 130 interrupted (Ctrl-C), 143/129 stopped by SIGTERM/SIGHUP (a
native child is killed with it). Every mistake is reported as one clear
message on standard error, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
from typing import TYPE_CHECKING

from ssa_course.args import parse_limit
from ssa_course.compilation import load_file
from ssa_course.errors import SourceError, SsaCourseError, UsageError
from ssa_course.output import refuse_inputs, write_output
from ssa_course.runtime import (
    DEFAULT_DEPTH_LIMIT,
    DEFAULT_STEP_LIMIT,
    DEFAULT_TIMEOUT,
    Limits,
)
from ssa_course.signals import Terminated, raising_on_termination

if TYPE_CHECKING:
    from ssa_course.compilation import Compilation
    from ssa_course.viz.options import DrawOptions


class _Parser(argparse.ArgumentParser):
    """argparse, but a mistake is one line and exit status 1 (not usage + status 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(1)


_LIMIT_HELP = "a whole number from 1 to 2^63-1; more is an error"


ASSEMBLERS = ("gnu", "keystone", "own")  # toolchain.ASSEMBLERS, without importing codegen


def _add_assembler(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--assembler", choices=ASSEMBLERS, default=None,
                        help="which assembler makes the machine code: GNU as, keystone or "
                        "the project's own (default: the first installed, in that order)")


_TARGET_HELP = ("machine for the machine-code stages: x86-64 or aarch64 (default: this "
                "machine's; --via emulated --target aarch64 is emulated-aarch64)")


def build_parser(listing: bool = True) -> argparse.ArgumentParser:
    """The argument parser; ``listing``: name every representation in the help (only when
    help is asked for: a plain run needs no list)."""
    stage_names = view_names = "see 'ssa-course stages'"
    if listing:
        from ssa_course import registry

        stage_names = view_names = ", ".join(registry.names())
    parser = _Parser(
        prog="ssa-course",
        description="A teaching compiler: Tiny and Bril programs through quads, CFGs, SSA "
        "and the sea of nodes.",
        epilog="Start with: ssa-course run examples/sum.tiny 10   |   "
        "ssa-course show examples/sum.tiny --as cfg --format svg -o cfg.svg",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    run = sub.add_parser("run", help="run a .tiny, .bril or .json (Bril JSON) program",
                         description="Run a program. Everything after FILE is passed to "
                         "main (negative numbers included).")
    run.add_argument("--via", default="quads", metavar="STAGE",
                     help=f"the stage whose executor runs the program ({stage_names}); "
                     "default: quads")
    run.add_argument("--profile", action="store_true",
                     help="print 'total_dyn_inst: N' on stderr: the executed instructions of "
                     "the stage's program (brili's count for --via quads and the quads "
                     "stages; IRCode statements for julia; control and pinned nodes for the "
                     "son stages; see docs/quads.md); machine code (native, emulated, its "
                     "views) says it is not counted")
    run.add_argument("--steps", default=None, metavar="N",
                     help=f"step limit (default {DEFAULT_STEP_LIMIT:,}; {_LIMIT_HELP})")
    run.add_argument("--depth", default=None, metavar="N",
                     help=f"call depth limit (default {DEFAULT_DEPTH_LIMIT:,}; {_LIMIT_HELP})")
    run.add_argument("--timeout", default=None, metavar="SECONDS",
                     help=f"wall-clock limit of a machine-code run (native, qemu, emulated; "
                     f"default {DEFAULT_TIMEOUT} s; {_LIMIT_HELP}); a compiled executable "
                     "has none")
    _add_assembler(run)
    run.add_argument("--target", default=None, metavar="T", help=_TARGET_HELP)
    run.add_argument("file", metavar="FILE")
    # Never parsed by argparse: main() hands everything after FILE to the program verbatim.
    run.add_argument("args", nargs="*", default=[], metavar="ARGS",
                     help="arguments of main (int, bool or float)")

    sub.add_parser("stages", help="list the representations 'run --via', 'show --as' and "
                   "'opt --emit' accept (one list)")

    show = sub.add_parser("show", help="print or draw a representation of a program")
    show.add_argument("file", metavar="FILE")
    show.add_argument("--as", dest="view", default="quads", metavar="REPR",
                      help=f"which representation ({view_names}); default: quads; with "
                      "--format html several, comma-separated (REPR1,REPR2,...)")
    show.add_argument("--format", default=None,
                      choices=("text", "bril", "dot", "svg", "png", "html"),
                      help="text, bril (a quads representation as Bril's own tools run it: "
                      "SSA phis written as set/get/undef; the default for a quads view of a "
                      "Bril program, text for Tiny), dot, svg, png, or "
                      "html: one self-contained page with the source and each "
                      "representation, linked by source line")
    show.add_argument("--target", default=None, metavar="T", help=_TARGET_HELP)
    show.add_argument("-o", "--output", metavar="OUT",
                      help="write to OUT instead of standard output (required for png)")
    show.add_argument("--function", metavar="F", help="draw function F only (default: "
                      "main, or every function when they are small)")
    show.add_argument("--around", metavar="N", help="draw only the nodes near node N "
                      "(a sea-of-nodes id such as 12, or a block name)")
    show.add_argument("--radius", metavar="R",
                      help="with --around: how many edges away (default 2; a whole number "
                      "from 0 to 2^63-1)")
    show.add_argument("--budget", metavar="K",
                      help="draw at most K nodes, saying what was left out (0: no limit; "
                      "default 150; a whole number from 0 to 2^63-1)")
    _add_assembler(show)

    opt = sub.add_parser("opt", help="optimize a program with a pipeline of passes and "
                         "write the result (default: see 'ssa-course passes')")
    opt.add_argument("file", metavar="FILE")
    opt.add_argument("-p", "--passes", default=None, metavar="P1,P2,...",
                     help="the passes to run, in order (see 'ssa-course passes')")
    opt.add_argument("--emit", default=None, metavar="REPR",
                     help=f"the result as which representation ({view_names}); default: "
                     "quads (Bril text, with phis if the pipeline ends in SSA); with "
                     "--format html every step (default: each form's own, the sea of "
                     "nodes as 'son', everything else as quads)")
    opt.add_argument("--format", default="text", choices=("text", "dot", "html"),
                     help="text (default), dot, or html: one self-contained page stepping "
                     "through the pipeline -- the program after each pass, with a diff "
                     "against the pass before, the passes that changed nothing folded "
                     "away, and each SCCP step and peephole rewrite of the graph passes")
    opt.add_argument("-o", "--output", metavar="OUT", help="write to a file instead")
    opt.add_argument("--stats", action="store_true",
                     help="also print what the passes counted, one line per function, on "
                     "stderr (e.g. 'main: bounds checks: 3 before, 0 after')")
    opt.add_argument("--verify-each", action="store_true",
                     help="verify the program after every pass (default: once at the end; "
                     "a failure is then retraced pass by pass to name the pass that broke "
                     "it; with --emit bril the text is also read back; "
                     "SSA_COURSE_VERIFY_EACH=1 does the same)")

    sub.add_parser("passes", help="list the passes 'opt -p' accepts")

    check = sub.add_parser("check", help="compile a program and report errors; run nothing")
    check.add_argument("file", metavar="FILE")

    native = sub.add_parser("compile", help="compile a program to a standalone x86-64 or aarch64 "
                            "executable (lesson 11); it takes main's arguments on its "
                            "command line")
    native.add_argument("file", metavar="FILE")
    native.add_argument("-o", "--output", required=True, metavar="OUT",
                        help="the executable to write")
    native.add_argument("--step-limit", default=None, metavar="N",
                        help="stop after about N steps with 'step limit exceeded' (default: "
                        f"no step limit; {_LIMIT_HELP})")
    native.add_argument("--depth", default=None, metavar="N",
                        help=f"call depth limit (default {DEFAULT_DEPTH_LIMIT:,}; "
                        f"{_LIMIT_HELP})")
    native.add_argument("--allocator", default="color", choices=("color", "spill-all"),
                        help="register allocation: graph colouring (default) or every "
                        "value in a stack slot (x86-64 only)")
    native.add_argument("--target", default=None, metavar="T",
                        help="x86-64 or aarch64 (default: this machine's)")
    _add_assembler(native)
    return parser


def _assembler(ns: argparse.Namespace):
    """The ``--assembler`` choice for the command's duration (a missing one: one line)."""
    from ssa_course.codegen.assemble import using_assembler
    from ssa_course.codegen.target import check_target, host_target

    target = getattr(ns, "target", None)
    return using_assembler(ns.assembler, check_target(target or host_target()))


def _limit(option: str, text: str | None, default: int | None) -> int | None:
    return default if text is None else parse_limit(option, text)


def _limit_or(option: str, text: str | None, default: int) -> int:
    """A limit that always has a value: ``default`` when the option is not given."""
    return default if text is None else parse_limit(option, text)


def _cmd_run(ns: argparse.Namespace) -> int:
    from ssa_course import registry, stages

    limits = Limits(_limit_or("--steps", ns.steps, DEFAULT_STEP_LIMIT),
                    _limit_or("--depth", ns.depth, DEFAULT_DEPTH_LIMIT),
                    timeout=_limit_or("--timeout", ns.timeout, DEFAULT_TIMEOUT))
    via = registry.representation(_targeted(ns.via, ns.target, ns.assembler)).name
    with _assembler(ns):
        comp = load_file(ns.file)
        result = stages.run(comp, list(ns.args), via=via, limits=limits, sink=_write_out)
    _flush_out()
    if result.error:
        sys.stderr.write(result.error + "\n")
    if ns.profile and result.status == 0:
        if registry.representation(ns.via).counts:
            sys.stderr.write(f"total_dyn_inst: {result.steps}\n")
        else:
            sys.stderr.write(f"total_dyn_inst: not counted by --via {ns.via} (machine code "
                             "runs uncounted; use --via quads)\n")
    return result.status


def _cmd_stages() -> int:
    from ssa_course import registry

    reps = registry.representations()
    width = max(len(r.name) for r in reps)
    for r in reps:
        note = "  (Tiny only)" if r.tiny_only else ""
        _write_out(f"{r.name:<{width}}  {r.lesson}  {r.description}{note}" + "\n")
    return 0


def _cmd_show(ns: argparse.Namespace) -> int:
    from ssa_course import views

    if ns.format == "png" and not ns.output:  # say so before drawing anything
        raise UsageError("PNG is binary: give an output file with -o OUT.png")
    if ns.format == "html":
        return _show_html(ns)
    if "," in ns.view:
        from ssa_course.registry import name_list

        name_list(ns.view, "--as")  # an empty name first: the list itself is wrong
        raise UsageError("several representations (--as A,B) need --format html")
    comp, options = _show_input(ns)
    if ns.format is None:  # Bril in, Bril out: a quads view of a Bril program runs in brili
        ns.format = "bril" if comp.kind != "tiny" and _is_quads_view(comp, ns.view) else "text"
    with _assembler(ns):
        if ns.format == "bril":
            data = _bril_text(comp, _targeted(ns.view, ns.target, ns.assembler))
        else:
            data = views.render(comp, _targeted(ns.view, ns.target, ns.assembler), ns.format,
                                options)
    if ns.output is not None:
        write_output(ns.output, data, [ns.file])
        return 0
    if isinstance(data, bytes):
        raise UsageError("PNG is binary: give an output file with -o OUT.png")
    _write_out(data if data.endswith("\n") else data + "\n")
    return 0


def _is_quads_view(comp: Compilation, view: str) -> bool:
    """Is ``view`` a quads representation whose text brili would not run as it is (a phi
    or our ``checkdef``: the SSA views, ``optimized`` with checks)? Those print as Bril's
    own tools run them when the program is Bril; every other view prints as it is."""
    from ssa_course import registry
    from ssa_course.quads.ir import Instr, Program

    rep = registry.representation(view)
    if rep.name in ("cfg", "bril-json"):
        return False
    artifact = registry.build(comp, rep.name)
    return isinstance(artifact, Program) and any(
        isinstance(i, Instr) and i.op in ("phi", "checkdef")
        for fn in artifact.functions.values() for i in fn.body)


def _bril_text(comp: Compilation, view: str) -> str:
    """``show --format bril``: a quads representation as Bril text brili runs (phis as
    Bril's set/get/undef, our checkdef as a branch; quads/bril_setget.py)."""
    from ssa_course import registry
    from ssa_course.quads.bril_setget import set_get_text
    from ssa_course.quads.ir import Program

    rep = registry.representation(view)
    artifact = registry.build(comp, rep.name)
    if not isinstance(artifact, Program):
        raise UsageError(f"--format bril needs a quads representation (quads, cfg, "
                         f"lvn, ssa-pruned, optimized, ...), not '{rep.name}'")
    return set_get_text(artifact)


def _show_input(ns: argparse.Namespace) -> tuple[Compilation, DrawOptions]:
    """``show``'s program and drawing options, the output refused first if it names the input."""
    from ssa_course.viz.options import DrawOptions

    if ns.output is not None:
        refuse_inputs(ns.output, [ns.file])  # before any work, not only before writing
    radius = 2 if ns.radius is None else parse_limit("--radius", ns.radius, 0)
    budget = 150 if ns.budget is None else parse_limit("--budget", ns.budget, 0)
    options = DrawOptions(function=ns.function, around=ns.around, radius=radius,
                          budget=budget or None)
    return load_file(ns.file), options


def _show_html(ns: argparse.Namespace) -> int:
    """``show --as A,B --format html``: the linked page (:mod:`ssa_course.linked_page`)."""
    from ssa_course import registry
    from ssa_course.linked_page import linked_page

    names = [registry.representation(_targeted(n, ns.target, ns.assembler)).name
             for n in registry.name_list(ns.view, "--as")]
    comp, options = _show_input(ns)
    with _assembler(ns):
        page = linked_page(comp, names, options)
    if ns.output is None:
        _write_out(page)
    else:
        write_output(ns.output, page, [ns.file])
    return 0


def _cmd_opt(ns: argparse.Namespace) -> int:
    from ssa_course import passes, registry

    names = passes.DEFAULT_PIPELINE if ns.passes is None else \
        [p.strip() for p in ns.passes.split(",") if p.strip()]
    passes.check_pipeline(names)  # an unknown pass, or one in the wrong place, is
    # reported before anything runs
    if ns.emit is not None:
        registry.representation(ns.emit)  # so is an unknown representation
    if ns.output is not None:
        refuse_inputs(ns.output, [ns.file])  # and an output that would destroy the input
    comp = load_file(ns.file)
    if ns.format == "html":  # the step-through page (ssa_course.steps_page)
        from ssa_course.steps_page import steps_page

        page = steps_page(comp, names, ns.emit)
        if ns.output is None:
            _write_out(page)
        else:
            write_output(ns.output, page, [ns.file])
        return 0
    ns.emit = ns.emit or "quads"
    state = passes.run_pipeline(comp, names, verify_each=ns.verify_each or None)
    text = passes.emit(state, ns.emit, ns.format)
    if ns.stats:
        for line in state.stats_lines():
            sys.stderr.write(line + "\n")
    if ns.output is not None:
        write_output(ns.output, text, [ns.file])
        return 0
    _write_out(text if text.endswith("\n") else text + "\n")
    return 0


def _cmd_passes() -> int:
    from ssa_course import passes

    width = max(len(p.name) for p in passes.all_passes())
    for p in passes.all_passes():
        _write_out(f"{p.name:<{width}}  {p.description}  [{'/'.join(p.needs)} -> {p.makes}]"
                   + "\n")
    _write_out(f"\ndefault pipeline: {','.join(passes.DEFAULT_PIPELINE)}" + "\n")
    return 0


def _targeted(stage: str, target: str | None, assembler: str | None = None) -> str:
    """``stage`` for ``--target`` (none given: the host's, for machine-code stages);
    ``--assembler`` with a stage that makes no machine code is refused as ``--target`` is."""
    from ssa_course.codegen.target import (
        MACHINE_STAGES,
        host_target,
        machine_only,
        stage_for_target,
    )

    if assembler is not None:
        machine_only("--assembler", stage)
    if target is None:
        if stage not in MACHINE_STAGES or host_target() == "x86-64":
            return stage
        target = host_target()
    return stage_for_target(stage, target)


def _cmd_compile(ns: argparse.Namespace) -> int:
    from ssa_course.codegen.target import check_target, host_target

    step_limit = _limit("--step-limit", ns.step_limit, None)
    depth = _limit_or("--depth", ns.depth, DEFAULT_DEPTH_LIMIT)
    refuse_inputs(ns.output, [ns.file])
    if check_target(ns.target or host_target()) == "aarch64":
        return _compile_aarch64(ns, step_limit, depth)
    from ssa_course.codegen.assemble import save_executable
    from ssa_course.codegen.x86_64.assemble import assemble
    from ssa_course.lessons.l11_codegen import compile_machine

    with _assembler(ns):
        comp = load_file(ns.file)
        comp.check()
        compiled = compile_machine(comp, allocator=ns.allocator, fuel=step_limit is not None)
        image = assemble(compiled.source(step_limit, depth))
    save_executable(image, ns.output, [ns.file])
    return 0


def _compile_aarch64(ns: argparse.Namespace, step_limit: int | None, depth: int) -> int:
    from ssa_course.codegen.aarch64.assemble import assemble
    from ssa_course.codegen.assemble import save_executable
    from ssa_course.codegen.patterns import CodegenError
    from ssa_course.lessons.l11_aarch64 import compile_machine_a64

    if ns.allocator != "color":
        raise CodegenError(f"the aarch64 target has the 'color' allocator only, not "
                           f"{ns.allocator!r}")
    with _assembler(ns):
        comp = load_file(ns.file)
        comp.check()
        compiled = compile_machine_a64(comp, fuel=step_limit is not None)
        image = assemble(compiled.source(step_limit, depth))
    save_executable(image, ns.output, [ns.file])
    return 0


def _cmd_check(ns: argparse.Namespace) -> int:
    comp = load_file(ns.file)
    comp.check()
    _write_out(f"{ns.file}: ok" + "\n")
    return 0


class _StdoutError(Exception):
    """Standard output failed (a full disk, a closed pipe): not the program's fault."""

    def __init__(self, error: OSError):
        super().__init__(str(error))
        self.error = error


def _closed() -> _StdoutError:
    # ``ssa-course ... >&-``: Python then has no sys.stdout at all
    return _StdoutError(OSError(errno.EBADF, "it is closed"))


def _write_out(text: str) -> None:
    if sys.stdout is None:
        raise _closed()
    try:
        sys.stdout.write(text)
    except OSError as e:
        raise _StdoutError(e) from None


def _flush_out() -> None:
    if sys.stdout is None:
        return  # nothing was written, so nothing was lost
    try:
        sys.stdout.flush()
    except OSError as e:
        raise _StdoutError(e) from None


_RUN_VALUE_OPTIONS = ("--via", "--steps", "--depth", "--timeout", "--assembler", "--target")


def split_run_argv(argv: list[str]) -> tuple[list[str], list[str]]:
    """Split ``run`` command lines at the file: ``(for argparse, for the program)``.

    Everything after FILE belongs to ``main`` verbatim (``-5``, ``--``, ``--via``): argparse
    alone would read ``--`` or an option-like word after FILE as its own.
    """
    i = 0
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "--":
        i += 1  # global options (only -h/--help) come before the command
    if i >= len(argv) or argv[i] != "run":
        return argv, []
    i += 1
    while i < len(argv):
        word = argv[i]
        if word == "--":  # the next word is FILE, even if it starts with '-'
            return argv[:i + 2], argv[i + 2:]
        if word.startswith("-") and len(word) > 1:
            takes_value = "=" not in word and any(
                o.startswith(word) for o in _RUN_VALUE_OPTIONS) and word.startswith("--")
            i += 2 if takes_value else 1
            continue
        return argv[:i + 1], argv[i + 1:]
    return argv, []


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``ssa-course`` command; returns the exit status."""
    if sys.stderr is None:  # ``2>&-``: messages have nowhere to go, but must not crash
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    try:
        with raising_on_termination():  # SIGTERM/SIGHUP: unwind, so children die too
            status = _main(sys.argv[1:] if argv is None else list(argv))
            _flush_out()
        return status
    except Terminated as e:
        _silence_stdout()
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write("terminated\n")
        return 128 + e.signum
    except _StdoutError as e:
        _silence_stdout()
        if isinstance(e.error, BrokenPipeError) or e.error.errno == errno.EPIPE:
            return 0  # the reader (``| head``) has seen enough: not an error
        sys.stderr.write(f"error: cannot write standard output: "
                         f"{e.error.strerror or e.error}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130


def _silence_stdout() -> None:
    """Point standard output at /dev/null so Python's exit-time flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real file behind standard output
        pass


def _main(argv: list[str]) -> int:
    parser = build_parser(listing=any(a in ("-h", "--help") for a in argv))
    argv, program_args = split_run_argv(argv)
    ns = parser.parse_args(argv)
    if ns.command == "run":
        ns.args = list(ns.args) + program_args
    try:
        if ns.command == "run":
            return _cmd_run(ns)
        if ns.command == "stages":
            return _cmd_stages()
        if ns.command == "show":
            return _cmd_show(ns)
        if ns.command == "check":
            return _cmd_check(ns)
        if ns.command == "compile":
            return _cmd_compile(ns)
        if ns.command == "opt":
            return _cmd_opt(ns)
        if ns.command == "passes":
            return _cmd_passes()
        parser.print_help()
        return 1
    except SourceError as e:
        sys.stderr.write(e.render() + "\n")
        return 1
    except SsaCourseError as e:
        sys.stderr.write(e.render() + "\n")
        return e.exit_status
    except (_StdoutError, KeyboardInterrupt):
        raise
    except RecursionError:  # a pathological program shape, not a bug we can name
        sys.stderr.write("error: the program is nested too deeply for this tool\n")
        return 1
    except MemoryError:
        sys.stderr.write("error: out of memory\n")
        return 1
    except Exception as e:  # a bug in ssa_course, not the user's mistake: say so plainly
        if os.environ.get("SSA_COURSE_DEBUG"):
            raise
        sys.stderr.write(f"internal error (a bug in ssa_course, please report it): "
                         f"{type(e).__name__}: {e} -- set SSA_COURSE_DEBUG=1 for details\n")
        return 70


if __name__ == "__main__":
    sys.exit(main())
