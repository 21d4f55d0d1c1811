"""The audit hook that watches a graded answer (PEP 578), and the autograding kernel's
rules.

:func:`_install_hook` runs when this module is imported where grading children can be
forked (:func:`can_fork`; not in the browser, where Pyodide has no ``fork`` and no
``signal.setitimer``, and guarded answers are watched in-process): the hook cannot be
removed. In a
process that is not a grading child it does nothing -- unless :func:`protect_course` shut
the instructor's files away (autograding). In a grading child
(:mod:`ssa_course.grading.sandbox`) it is armed: while a guarded answer runs
(:mod:`ssa_course.grading.forbid` enters and leaves with audit events) it judges every
call of the answer (the profile function is ``MethodType(sys.audit, ...)``) and refuses
what would let it cheat, ending the child at once with one line that names what was
tried (written to the result pipe; see docs/grading.md for the list).
"""

from __future__ import annotations

import _signal
import contextlib
import io
import os
import pickle
import signal
import struct
import sys
import types
from typing import Any

OUTPUT_LIMIT = 20_000  # characters of a case's printed output shown
HEADER = struct.Struct("!I")  # the length before each frame on the result pipe
REFUSED_EXIT = 86
CHILD_PID = -1  # set in a grading child (sandbox) before the hook is armed
PROTECTED = False  # set by protect_course(): this is an autograding kernel
KERNEL_GB = 4.0  # what an autograding kernel may grow by (its checks run in-process)


def protect_course() -> str | None:
    """While autograding (the working directory is ``<course>/autograded/<student>/<a>``,
    below a directory holding ``nbgrader_config.py``), make this kernel refuse to read the
    course directory outside the working directory (``source/`` holds the solutions and
    hidden tests, ``gradebook.db`` and ``submitted/`` the other students') and to start
    any program, to start a process (a seccomp filter: one that outlived the kernel could
    tamper with the regrade that follows; Graphviz cannot run either, pictures fall back to
    matplotlib) and to write anywhere but its own
    directory and the temporary one (the package and its ``site-packages`` are the
    regrade's too). Its checks then run in-process (:func:`sandbox.can_isolate` is False):
    the regrade (grading/regrade.py) decides the grades. The course's nbgrader
    configuration runs this when each autograding kernel starts, before the notebook's
    first cell. Returns the course directory, or None (not autograding: nothing
    changes)."""
    here = os.path.abspath(os.getcwd())
    parts = here.split(os.sep)
    for i in range(len(parts) - 1, 0, -1):
        root = os.sep.join(parts[:i]) or os.sep
        if os.path.exists(os.path.join(root, "nbgrader_config.py")):
            if parts[i:i + 1] != ["autograded"]:
                return None
            from ssa_course.grading.forbid import solution_shapes

            solution_shapes()  # read now: the notebook may not read them any more
            package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
            closed = [os.path.join(root, d) + os.sep for d in
                      ("source", "release", "submitted", "autograded", "feedback")]
            closed += [os.path.join(root, "gradebook.db") + os.sep,
                       os.path.join(os.path.dirname(package), "solutions") + os.sep]
            import resource
            import tempfile

            from ssa_course.grading import seccomp

            try:  # no process a notebook starts may outlive its kernel (even one started
                # by C code the audit hook never hears of: _posixsubprocess.fork_exec)
                seccomp.install_no_processes()
            except OSError:  # a container that refuses seccomp: no new process for a user
                # that is not root
                with contextlib.suppress(OSError, ValueError):
                    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
            writable = (here + os.sep, os.path.realpath(tempfile.gettempdir()) + os.sep)
            # never, even inside the temporary directory (a checkout or a course can be
            # there): the package's own directory and the course (but its own directory)
            never = (os.path.dirname(package) + os.sep, root + os.sep)
            sys.audit("ssa_course.sandbox.course", tuple(closed), here + os.sep, writable,
                      never)
            global PROTECTED
            PROTECTED = True
            from ssa_course.memlimit import cap_address_space

            cap_address_space(int(KERNEL_GB * (1 << 30)))  # checks run in this process now
            return root
    return None


_PROGRAMS = frozenset({"dot", "neato", "fdp", "sfdp", "twopi", "circo"})  # Graphviz

SOLUTION = "the instructor's notebook "  # how a verdict names a copied solution


def from_a_cell(filename: str) -> bool:
    """Was code of this file name compiled from a notebook cell (IPython, ipykernel, or
    the test suite's runner), rather than read from a file and ``exec``'d?"""
    return (filename.startswith(("<ipython-input-", "<cell"))
            or ("ipykernel_" in filename and filename.endswith(".py"))
            or (filename.startswith("<") and ".ipynb:" in filename))


def _genuine(fn: object, name: str) -> Any:
    """``fn`` if it is the interpreter's own built-in ``name`` (not one a notebook put in
    its place before the grader was imported)."""
    if type(fn) is not types.BuiltinFunctionType or fn.__name__ != name:
        raise ImportError(f"the grader cannot start: {name} was replaced before it was "
                          "imported (restart the kernel)")
    return fn


def _install_hook() -> None:
    """The audit hook: passive until a grading child arms it, then it watches every
    guarded answer. Everything it uses is bound here, once: no frame, module or object
    the learner's code can reach holds its state or the functions it calls."""
    exit_now, write = _genuine(os._exit, "_exit"), _genuine(os.write, "write")
    getpid = _genuine(os.getpid, "getpid")
    dumps, audit = _genuine(pickle.dumps, "dumps"), _genuine(sys.audit, "audit")
    setprofile = _genuine(sys.setprofile, "setprofile")
    getprofile = _genuine(sys.getprofile, "getprofile")
    method, code_type, string_io = types.MethodType, types.CodeType, io.StringIO
    _type, _len, _set, _dict, _sorted, _tuple = type, len, set, dict, sorted, tuple
    _isinstance, _getattr, _id, _str, _map = isinstance, getattr, id, str, map
    _hash = hash
    pack, output_limit, refused_exit = HEADER.pack, OUTPUT_LIMIT, REFUSED_EXIT
    traceback_of = BaseException.__dict__["__traceback__"].__get__
    solution = SOLUTION
    getcwd, programs = _genuine(os.getcwd, "getcwd"), _PROGRAMS
    getframe = _genuine(sys._getframe, "_getframe")
    set_timer = _genuine(signal.setitimer, "setitimer")
    set_handler = _genuine(_signal.signal, "signal")
    default = _signal.SIG_DFL
    timers = (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL, signal.ITIMER_PROF)
    handled = _tuple(int(s) for s in (signal.SIGALRM, signal.SIGVTALRM, signal.SIGPROF,
                                 signal.SIGUSR1, signal.SIGUSR2, signal.SIGCHLD, signal.SIGIO,
                                 signal.SIGHUP, signal.SIGTERM, signal.SIGURG,
                                 signal.SIGWINCH, signal.SIGPIPE))
    getrecursionlimit = _genuine(sys.getrecursionlimit, "getrecursionlimit")
    read, fstat, loads = _genuine(os.read, "read"), _genuine(os.fstat, "fstat"), \
        _genuine(pickle.loads, "loads")
    header_size, unpack = HEADER.size, HEADER.unpack
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
    state: dict[str, Any] = {"armed": False, "course": None, "fd": -1, "out": None,
                             "busy": False,
                             "guards": [], "verdicts": {}, "keep": [], "rules": {},
                             "cells": _set()}
    profile = method(audit, "ssa_course.call")

    def short(name: str) -> str:
        module, _, last = name.rpartition(".")
        parts = name.split(".")
        if _len(parts) >= 2 and parts[-2][:1].isupper():  # keep Class.method together
            module, last = ".".join(parts[:-2]), ".".join(parts[-2:])
        return f"{last} ({module})" if module else last

    def what_of(event: str, args: tuple) -> str | None:
        """What a refused event means, in the learner's words; None: allowed."""
        if event == "import":
            return (f"imported {args[0]} while it was graded (import what you need in a "
                    "cell above)")
        if event == "open":
            if _isinstance(args[0], int):
                return f"opened file descriptor {args[0]} (a pipe to another program?)"
            return f"opened the file {args[0]!r}"
        if event in ("sys._getframe", "sys._current_frames", "sys._current_exceptions"):
            return f"looked at the grader's stack frames ({event})"
        if event == "object.__getattr__":
            return (f"read {_type(args[0]).__name__}.{args[1]} (frames and code objects "
                    "are off limits while grading)")
        if event in ("object.__setattr__", "object.__delattr__"):
            return f"changed {_getattr(args[0], '__name__', '?')}.{args[1]}"
        if event == "code.__new__":
            return "made a new code object (code.replace, types.CodeType)"
        if event == "function.__new__":
            return "made a function out of a code object (types.FunctionType)"
        if event in ("exec", "compile"):
            return "ran or compiled Python source of its own (exec, eval, compile)"
        if event in ("sys.setprofile", "sys.settrace"):
            return f"switched off the grader's call watch ({event})"
        if event == "sys.addaudithook":
            return "added an audit hook (sys.addaudithook)"
        if event.startswith(("subprocess.", "os.system", "os.exec", "os.posix_spawn",
                             "os.spawn", "os.fork", "os.forkpty", "pty.", "os.startfile")):
            return f"started a program or a process ({event})"
        if event in ("os.kill", "os.killpg", "signal.pthread_kill"):
            return f"sent a signal to a process ({event})"
        if event.startswith(("socket.", "urllib.", "http.", "ftplib.", "smtplib.",
                             "poplib.", "imaplib.", "nntplib.", "telnetlib.", "webbrowser.")):
            return f"used the network ({event})"
        if event.startswith(("gc.get_", "ctypes.", "marshal.", "mmap.", "_thread.",
                             "cpython.", "sqlite3.", "resource.", "fcntl.", "os.", "shutil.",
                             "glob.", "tempfile.", "pdb.", "builtins.breakpoint",
                             "builtins.input", "sys.monitoring", "sys._debugmallocstats")):
            return f"used {event}"
        return None

    def refuse(text: str) -> None:
        out = state["out"]
        printed = out.getvalue() if _isinstance(out, string_io) else ""
        data = dumps(("refused", b"", text, "", printed[:output_limit]))
        frame = pack(_len(data)) + data
        while frame:
            frame = frame[write(state["fd"], frame):]
        exit_now(refused_exit)

    def refusal(label: str, name: str, advice: str) -> str:
        if name.startswith(solution):
            where, _, function = name.rpartition(":")
            return f"your {label} runs {function} from {where}, read from its file; {advice}"
        if name.startswith("ssa_course"):
            return f"your {label} calls ssa_course's own {short(name)}; {advice}"
        return f"your {label} calls the library {name}, which does the task for you; {advice}"

    def content(code: Any) -> tuple:
        consts = _tuple(c.co_code if _type(c) is code_type else c for c in code.co_consts)
        return (code.co_code, code.co_names, code.co_varnames, consts, code.co_argcount)

    def verdict(code: Any, rules: tuple) -> str | None:
        codes, files, packages, shapes = rules
        found = codes.get(code)
        if found is not None:
            return found[2] if found[1] else None
        name = code.co_filename
        if name in files:
            forbidden, what = files[name]
            return f"{what}.{code.co_qualname}" if forbidden else None
        for prefix, forbidden, what in packages:
            if name.startswith(prefix):
                if not forbidden:
                    return None
                if not what.startswith("ssa_course"):
                    return what
                module = name[_len(prefix):].removesuffix(".py").replace("/", ".")
                return f"{what}.{module}.{code.co_qualname}".replace(".__init__.", ".")
        if _len(code.co_code) >= 60:  # a copy of the course's code under another name
            found = shapes.get(_hash(content(code)))
            if found is not None and found.startswith(solution) and from_a_cell(name):
                return None  # the instructor's notebook run as itself, or typed in
            return found
        return None

    def on_call(frame: Any) -> None:
        code = frame.f_code
        if code.co_name == "<module>":  # a first import runs module code: not an answer
            return
        for _token, rules, required, seen, label, advice in state["guards"]:
            if code in required:
                seen.add(required[code])
            key = (_id(code), _id(rules))
            found = state["verdicts"].get(key, 0)
            if found == 0:
                found = verdict(code, rules)
                state["verdicts"][key] = found
                state["keep"].append(code)
            if found is not None:
                refuse(refusal(label, found, advice))

    def snapshot(rules: Any) -> tuple:
        """A private copy of a guard's rules: the learner may change the original."""
        key = _id(rules)
        found = state["rules"].get(key)
        if found is None:
            codes, files, packages, shapes = rules.tables()
            found = (_dict(codes), _dict(files), _tuple(packages), _dict(shapes))
            state["rules"][key] = found
            state["keep"].append(rules)
        return found

    def explain(error: BaseException, box: list) -> None:
        """(file, line, function) of each frame of ``error``'s traceback, into ``box``."""
        tb = traceback_of(error, _type(error))
        count = 0
        while tb is not None and count < 200:
            code = tb.tb_frame.f_code
            box.append((code.co_filename, tb.tb_lineno, code.co_name))
            tb = tb.tb_next
            count += 1

    def guard_event(args: tuple) -> None:
        action, token = args[0], args[1]
        guards = state["guards"]
        if action == "enter":
            rules, required, label, advice = args[2:]
            guards.append((token, snapshot(rules), _dict(required), _set(), _str(label),
                           _str(advice)))
            if getprofile() is not profile:
                setprofile(profile)  # our own: the hook is busy, so it is not refused
            return
        if action == "explain":
            explain(args[1], args[2])
            return
        if action == "exit" and guards and guards[-1][0] is token:
            token, rules, required, seen, label, advice = guards.pop()
            if not guards:  # the checker's own code runs unwatched (and fast)
                setprofile(None)
                # no handler or timer of the answer's may fire once it is over
                for timer in timers:
                    set_timer(timer, 0)
                for sig in handled:
                    set_handler(sig, default)
            missing = _sorted(_set(required.values()) - seen)
            if missing:
                refuse(f"your {label} never calls {', '.join(_map(short, missing))}: "
                       "the task asks you to use it")

    def read_exactly(size: int) -> bytes:
        data = b""
        while _len(data) < size:
            chunk = read(0, size - _len(data))
            if not chunk:
                break
            data += chunk
        return data

    def receive(box: list) -> None:
        """The grading process's next request, read from standard input and unpickled
        here, while the hook is busy (so the course's classes it holds are rebuilt
        unwatched): only from the pipe the grading process writes, not from one the
        learner's code put in its place."""
        try:
            found = fstat(0)
            same = (found.st_dev, found.st_ino) == state.get("input")
        except OSError:
            same = False
        if not same:
            refuse("your code replaced the grader's input (standard input): that is not "
                   "allowed while it is graded")
        head = read_exactly(header_size)
        if _len(head) < header_size:
            box.append(None)
            return
        box.append(loads(read_exactly(unpack(head)[0])))

    guards = state["guards"]

    def absolute(path: str) -> str:
        """``path`` made absolute and normalised, by this closure's own means."""
        if not path.startswith("/"):
            path = getcwd() + "/" + path
        out: list[str] = []
        for part in path.split("/"):
            if part in ("", "."):
                continue
            if part == "..":
                if out:
                    out.pop()
                continue
            out.append(part)
        return "/" + "/".join(out) + "/"

    def course_check(event: str, args: tuple) -> None:
        """The autograding kernel's rules (:func:`protect_course`)."""
        closed, here, writable, never = state["course"]
        what = None
        target: Any = None  # a path the event writes
        if event == "open" and ((_isinstance(args[1], _str) and any(
                c in args[1] for c in "wax+")) or (_isinstance(args[2], int)
                                                  and args[2] & write_flags)):
            target = args[0]
        elif event in ("os.rename", "shutil.move", "shutil.copyfile", "shutil.copytree",
                       "os.link", "os.symlink"):
            target = args[1]
        elif event in ("os.remove", "os.rmdir", "os.mkdir", "os.chmod", "os.chown",
                       "os.utime", "os.truncate", "shutil.rmtree", "shutil.copymode",
                       "shutil.copystat", "shutil.chown"):
            target = args[0]
        if _isinstance(target, bytes):
            target = target.decode("utf-8", "replace")
        full_target = absolute(target) if _isinstance(target, _str) else ""
        if full_target and not full_target.startswith(here) and (
                full_target.startswith(never) or not full_target.startswith(writable)):
            raise PermissionError("while autograding, a notebook may not do this: it "
                                  f"wrote outside its own directory ({event} {target})")
        if event in ("os.fork", "os.forkpty"):
            raise PermissionError("while autograding, a notebook may not do this: it "
                                  f"started a process ({event})")
        if event in ("open", "os.listdir", "os.scandir", "shutil.copyfile", "shutil.copytree",
                     "sqlite3.connect", "os.symlink", "os.link"):
            target = args[0]
            if _isinstance(target, bytes):
                target = target.decode("utf-8", "replace")
            if _isinstance(target, _str) and target not in (":memory:", ""):
                full = absolute(target)
                if full.startswith(closed) and not full.startswith(here):
                    what = f"read the instructor's files ({target})"
                elif event in ("os.symlink", "os.link"):
                    what = "made a link (the instructor's files are off limits)"
        elif event == "subprocess.Popen":
            program = args[0] if args[0] is not None else (args[1] or [""])[0]
            name = _str(program).rsplit("/", 1)[-1]
            if name not in programs:
                what = f"started the program {name!r}"
        elif event.startswith(("os.system", "os.exec", "os.posix_spawn", "os.spawn",
                               "pty.spawn", "ctypes.dlopen", "ctypes.dlsym")) and not (
                event.startswith("ctypes.") and getpid() == CHILD_PID):
            what = f"used {event}"
        if what is not None:
            raise PermissionError(f"while autograding, a notebook may not do this: it {what}")

    def deep() -> bool:
        """Is the stack within a few frames of the recursion limit?"""
        frame, depth, limit = getframe(0), 0, getrecursionlimit() - 60
        while frame is not None and depth < limit:
            frame, depth = frame.f_back, depth + 1
        return depth >= limit

    def hook(event: str, args: tuple) -> None:
        if event == "ssa_course.call":  # the hot path: one per call of the watched code
            if args[1] != "call" or not guards or state["busy"]:
                return
            state["busy"] = True
            try:
                on_call(args[0])
            finally:
                state["busy"] = False
            return
        if not state["armed"]:
            if event == "ssa_course.sandbox.arm" and getpid() == CHILD_PID:
                state["fd"], state["out"] = args
                state["armed"] = True
                try:  # the grader's requests come on standard input (grading/learner.py)
                    found = fstat(0)
                    state["input"] = (found.st_dev, found.st_ino)
                except OSError:
                    state["input"] = None
            elif event == "ssa_course.sandbox.cells" and getpid() == CHILD_PID:
                # the learner's statements, compiled by the grader before the hook is
                # armed (grading/learner.py): running them is the grader's own ``exec``
                state["keep"].append(args[0])
                state["cells"].update(_map(_id, args[0]))
            elif event == "ssa_course.sandbox.course" and state["course"] is None:
                state["course"] = (_tuple(_str(c) for c in args[0]), _str(args[1]),
                                   _tuple(_str(c) for c in args[2]),
                                   _tuple(_str(c) for c in args[3]))
            elif state["course"] is not None and not state["busy"]:
                state["busy"] = True
                try:
                    course_check(event, args)
                finally:
                    state["busy"] = False
            return
        if state["busy"]:
            return
        state["busy"] = True
        try:
            if event == "ssa_course.guard":
                guard_event(args)
                return
            if event == "ssa_course.sandbox.receive":
                receive(args[0])
                return
            if not state["guards"]:
                return
            if event == "exec" and _id(args[0]) in state["cells"]:
                return
            if event == "sys.setprofile" and deep():
                # the interpreter drops a profiler that overflowed the stack: an answer
                # that recursed without end, not one that switched the watch off
                refuse(f"your {state['guards'][-1][4]} called itself too deeply "
                       "(RecursionError): a recursion without a base case, or a walk that "
                       "goes round a cycle of the graph without remembering where it has "
                       "been?")
            what = what_of(event, args)
            if what is not None:
                refuse(f"your {state['guards'][-1][4]} {what}: that is not allowed while it "
                       "is graded")
        finally:
            state["busy"] = False

    sys.addaudithook(hook)


def can_fork() -> bool:
    """Can grading children be forked here (Linux with ``os.fork``)?"""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


if can_fork():
    _install_hook()
