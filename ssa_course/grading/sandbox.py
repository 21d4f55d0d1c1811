"""Run graded calls in a child process the grader starts, where the answer can neither
cheat nor harm the kernel.

:func:`stream` forks the kernel (or whatever process grades): the child inherits the
learner's functions and the cases, runs ``fn(case)`` for each case in turn and sends each
result back through a pipe; the *parent* computes the expected answers (after the child
has its copy of memory, so they are never in it) and compares. In the child:

* every file descriptor but the result pipe is closed; standard output is captured and
  shown by the parent;
* memory is limited (``RLIMIT_AS``: the child's size at the fork plus :data:`MEMORY_GB`),
  CPU time too (``RLIMIT_CPU``), and the parent kills a case that runs past its time;
* on Linux x86-64 and AArch64 a seccomp filter makes the kernel refuse new processes and
  threads (``clone``, ``fork``, ``execve``), signals to other processes and sockets;
* a PEP 578 audit hook -- installed when this module is imported, so it cannot be
  removed, and inactive outside a child -- refuses, while a guarded answer runs
  (:mod:`ssa_course.grading.forbid`), what would let it cheat: starting programs, opening
  files, frames and code objects (``sys._getframe``, ``tb_frame``, ``__code__``),
  ``code.__new__`` / ``function.__new__``, ``exec``/``compile``, new imports,
  ``sys.setprofile``/``settrace``, ``gc.get_objects``, ``ctypes``, changing classes.
  A refusal ends the child at once with one line naming what was tried (an answer cannot
  catch it); the parent reports it as that case's failure.

Where ``os.fork`` is missing or unsafe (Windows, macOS) :func:`can_isolate` is False and
the callers run in-process, as before (the instructor's Linux machine is where grading
counts).
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import select
import signal
import struct
import sys
import time
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

MEMORY_GB = 2.0  # per graded cell, on top of what the kernel already uses
OUTPUT_LIMIT = 20_000  # characters of a case's printed output shown
FRAME_LIMIT = 64 << 20  # bytes of one answer
_HEADER = struct.Struct("!I")
_REFUSED_EXIT = 86


@dataclass(slots=True)
class Outcome:
    """What one case gave: ``kind`` is ``value`` (``value`` holds the answer), ``raised``
    (``category`` is ``mismatch``, ``notimpl`` or ``crash``; ``text`` says what),
    ``refused``, ``timeout``, ``memory`` or ``died`` (``text`` says what)."""

    kind: str
    value: object = None
    text: str = ""
    category: str = ""
    output: str = ""


class Crashed(Exception):  # noqa: N818 - a message, not an error of the grader
    """A guarded answer failed; ``category`` and ``text`` say how (only data: nothing of
    the learner's code is left in it)."""

    def __init__(self, category: str, text: str) -> None:
        super().__init__(text)
        self.category, self.text = category, text


def can_isolate() -> bool:
    """Can graded calls run in a child process here (Linux with ``os.fork``)?"""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def in_child() -> bool:
    """Is this process a grading child (started by :func:`stream`)?"""
    return os.getpid() == _CHILD_PID


_CHILD_PID = -1


# ------------------------------------------------------------------ the parent side


def stream(fn: Callable[[Any], Any], cases: Iterable[Any], *, seconds: float | None,
           memory_gb: float = MEMORY_GB) -> Iterator[Outcome]:
    """``fn(case)`` for each case, run in one child process; yields an :class:`Outcome`
    per case, in order. The child stops after the first case that does not give a value;
    closing the generator early kills it."""
    cases = list(cases)
    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        _child(fn, cases, write_end, memory_gb, seconds)
    os.close(write_end)
    reader = _Frames(read_end)
    done = False
    try:
        for _ in cases:
            frame = reader.next(seconds)
            if frame is None:  # no frame in time, or the child ended without one
                yield _ended(pid, reader, seconds, memory_gb)
                done = True
                return
            outcome = _outcome(frame)
            if outcome.output:
                sys.stdout.write(outcome.output)
            yield outcome
            if outcome.kind != "value":
                return
    finally:
        if not done:
            _kill(pid)
        os.close(read_end)


def call(fn: Callable[..., Any], args: tuple = (), *, seconds: float | None = 10.0,
         memory_gb: float = MEMORY_GB) -> Outcome:
    """``fn(*args)`` in a child process: its :class:`Outcome`."""
    return next(stream(lambda a: fn(*a), [args], seconds=seconds, memory_gb=memory_gb))


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    _wait(pid)


def _wait(pid: int) -> int:
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except ChildProcessError:
            return 0
        except InterruptedError:
            continue


def _ended(pid: int, reader: _Frames, seconds: float | None, memory_gb: float) -> Outcome:
    """The child sent nothing more: why (time, memory, a signal, an exit)."""
    if reader.timed_out:
        _kill(pid)
        return Outcome("timeout", text=f"did not finish in {seconds:g} s")
    if reader.too_big:
        _kill(pid)
        return Outcome("died", text=f"your answer is larger than {FRAME_LIMIT >> 20} MB")
    status = _wait(pid)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            return Outcome("timeout", text=f"did not finish in {seconds:g} s")
        name = signal.Signals(sig).name if sig in signal.Signals.__members__.values() else sig
        return Outcome("died", text=f"your code crashed the process it ran in ({name})")
    code = os.WEXITSTATUS(status)
    return Outcome("died", text=f"your code ended the process it ran in (exit status {code}) "
                                "instead of returning")


class _Frames:
    """Length-prefixed frames from the child's pipe."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()
        self.timed_out = False
        self.too_big = False
        self.eof = False

    def next(self, seconds: float | None) -> bytes | None:
        deadline = None if seconds is None else time.monotonic() + seconds + 0.5
        while True:
            if len(self.buffer) >= _HEADER.size:
                (size,) = _HEADER.unpack_from(self.buffer)
                if size > FRAME_LIMIT:
                    self.too_big = True
                    return None
                if len(self.buffer) >= _HEADER.size + size:
                    frame = bytes(self.buffer[_HEADER.size:_HEADER.size + size])
                    del self.buffer[:_HEADER.size + size]
                    return frame
            if self.eof:
                return None
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                self.timed_out = True
                return None
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                self.eof = True
            self.buffer += chunk


class _NoClasses(pickle.Unpickler):
    """Unpickles plain builtin data only: no class, no function is ever looked up."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"{module}.{name} is not data")


_BUILTIN_TYPES = {"list", "dict", "set", "frozenset", "tuple", "int", "float", "str",
                  "bytes", "bool", "complex", "NoneType"}


class _CourseValues(pickle.Unpickler):
    """Unpickles plain data and values of the course's own classes (lattice types,
    enums, dataclasses): nothing of the learner's crosses into the grader."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in _BUILTIN_TYPES:
            return getattr(__builtins__ if isinstance(__builtins__, dict) else
                           vars(__builtins__), "get", lambda n: None)(name) \
                if isinstance(__builtins__, dict) else getattr(__builtins__, name)
        if module == "collections" and name in ("defaultdict", "OrderedDict"):
            import collections
            return getattr(collections, name)
        if module == "copyreg" and name == "_reconstructor":
            import copyreg
            return copyreg._reconstructor
        if module == "ssa_course" or module.startswith("ssa_course."):
            found: object = sys.modules.get(module)
            for part in name.split("."):
                found = getattr(found, part, None)
            if isinstance(found, type) and found.__module__ == module:
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not one of the values an answer "
                                     "can hold")


def _outcome(frame: bytes) -> Outcome:
    try:
        message = _NoClasses(io.BytesIO(frame)).load()
        kind, payload, text, category, output = message
        if kind == "value":
            value = _CourseValues(io.BytesIO(payload)).load()
            return Outcome("value", value=value, output=str(output))
        return Outcome(str(kind), text=str(text), category=str(category), output=str(output))
    except Exception as e:  # noqa: BLE001 - whatever came through the pipe is not trusted
        return Outcome("died", text=f"your answer could not be read back ({e})")


# ------------------------------------------------------------------ the child side


def _child(fn: Callable[[Any], Any], cases: list, fd: int, memory_gb: float,
           seconds: float | None) -> None:
    global _CHILD_PID
    try:
        _CHILD_PID = os.getpid()
        out = _isolate(fd, memory_gb, seconds, len(cases))
        sys.audit("ssa_course.sandbox.arm", fd, out)
        for case in cases:
            message = _run_one(fn, case)
            text = out.getvalue()
            out.seek(0)
            out.truncate()
            data = pickle.dumps(message + (text[:OUTPUT_LIMIT],))
            _write(fd, _HEADER.pack(len(data)) + data)
            if message[0] != "value":
                break
    except BaseException as e:  # noqa: BLE001 - the child must never return
        try:
            data = pickle.dumps(("died", b"", f"the grader failed in its child: {e!r}",
                                 "", ""))
            _write(fd, _HEADER.pack(len(data)) + data)
        except BaseException:  # noqa: BLE001
            pass
    finally:
        os._exit(0)


def _run_one(fn: Callable[[Any], Any], case: object) -> tuple:
    from ssa_course.grading.check import Mismatch, _crash_line

    try:
        value = fn(case)
    except Crashed as e:
        if e.category == "memory":
            return ("memory", b"", "", "")
        return ("raised", b"", e.text, e.category)
    except MemoryError:
        return ("memory", b"", "", "", )
    except Mismatch as e:
        return ("raised", b"", str(e), "mismatch")
    except NotImplementedError:
        return ("raised", b"", "", "notimpl")
    except BaseException as e:  # noqa: BLE001 - the learner's code crashed: say what
        return ("raised", b"", _crash_line(e), "crash")
    try:
        payload = pickle.dumps(value, protocol=4)
    except MemoryError:
        return ("memory", b"", "", "")
    except Exception as e:  # noqa: BLE001
        return ("raised", b"", f"your answer cannot be sent back for checking ({e})", "crash")
    return ("value", payload, "", "")


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _isolate(keep: int, memory_gb: float, seconds: float | None, cases: int) -> io.StringIO:
    """Cut the child off: descriptors, signals, limits, the seccomp filter."""
    import resource

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM, signal.SIGXCPU,
                signal.SIGUSR1, signal.SIGUSR2, signal.SIGCHLD, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_REAL, 0)
    os.closerange(3, keep)
    os.closerange(keep + 1, 1 << 16)
    out = io.StringIO()
    sys.stdout = sys.stderr = out
    size = _memory_now()
    limit = size + int(memory_gb * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    if seconds is not None:
        cpu = int(resource.getrusage(resource.RUSAGE_SELF).ru_utime
                  + resource.getrusage(resource.RUSAGE_SELF).ru_stime
                  + seconds * cases + 2)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 2))
    try:
        _seccomp()
    except OSError:  # a container that forbids seccomp: no new processes or threads for a
        # user that is not root (the audit hook refuses the usual ways in any case)
        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    return out


def _memory_now() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 1 << 30


# Linux system call numbers the child may not make: new processes and threads, running
# programs, signals to others, sockets, tracing, other processes' memory, SysV IPC.
_DENIED_SYSCALLS = {
    "x86_64": (0xC000003E, [56, 57, 58, 59, 322, 435, 62, 200, 234, 129, 297, 424, 41, 53,
                            42, 101, 310, 311, 29, 30, 64, 68, 69]),
    "aarch64": (0xC00000B7, [220, 435, 221, 281, 129, 130, 131, 138, 240, 424, 198, 199,
                             203, 117, 270, 271, 194, 196, 190, 186, 189]),
}


def _seccomp() -> None:
    """Install the seccomp filter (Linux x86-64 and AArch64; elsewhere nothing)."""
    import platform

    found = _DENIED_SYSCALLS.get(platform.machine())
    if found is None or not sys.platform.startswith("linux"):
        return
    import ctypes

    arch, denied = found
    ld_w_abs, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    allow, deny = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ERRNO | EPERM
    prog = [(ld_w_abs, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, deny), (ld_w_abs, 0, 0, 0)]
    if arch == 0xC000003E:  # the x32 ABI: syscall numbers with bit 30 set
        prog.append((jge, len(denied) + 1, 0, 0x40000000))
    for i, nr in enumerate(denied):
        prog.append((jeq, len(denied) - i, 0, nr))
    prog += [(ret, 0, 0, allow), (ret, 0, 0, deny)]

    class Filter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte),
                    ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]

    filters = (Filter * len(prog))(*[Filter(*p) for p in prog])
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_no_new_privs, pr_set_seccomp, mode_filter = 38, 22, 2
    if libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    program = Program(len(prog), filters)
    if libc.prctl(pr_set_seccomp, mode_filter, ctypes.byref(program), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


# ------------------------------------------------------------------ the audit hook


def protect_course() -> str | None:
    """While autograding (the working directory is ``<course>/autograded/<student>/<a>``,
    below a directory holding ``nbgrader_config.py``), make this kernel refuse to read the
    course directory outside the working directory (``source/`` holds the solutions and
    hidden tests, ``gradebook.db`` and ``submitted/`` the other students') and to start
    any program but Graphviz. The course's nbgrader configuration runs this when each
    autograding kernel starts, before the notebook's first cell. Returns the course
    directory, or None (not autograding: nothing changes)."""
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
            sys.audit("ssa_course.sandbox.course", tuple(closed), here + os.sep)
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
    pack, output_limit, refused_exit = _HEADER.pack, OUTPUT_LIMIT, _REFUSED_EXIT
    traceback_of = BaseException.__dict__["__traceback__"].__get__
    solution = SOLUTION
    getcwd, programs = _genuine(os.getcwd, "getcwd"), _PROGRAMS
    getframe = _genuine(sys._getframe, "_getframe")
    getrecursionlimit = _genuine(sys.getrecursionlimit, "getrecursionlimit")
    state: dict[str, Any] = {"armed": False, "course": None, "fd": -1, "out": None,
                             "busy": False,
                             "guards": [], "verdicts": {}, "keep": [], "rules": {}}
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
            missing = _sorted(_set(required.values()) - seen)
            if missing:
                refuse(f"your {label} never calls {', '.join(_map(short, missing))}: "
                       "the task asks you to use it")

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
        closed, here = state["course"]
        what = None
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
                event.startswith("ctypes.") and getpid() == _CHILD_PID):
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
            if event == "ssa_course.sandbox.arm" and getpid() == _CHILD_PID:
                state["fd"], state["out"] = args
                state["armed"] = True
            elif event == "ssa_course.sandbox.course" and state["course"] is None:
                state["course"] = (_tuple(_str(c) for c in args[0]), _str(args[1]))
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
            if not state["guards"]:
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


_install_hook()
