"""Seccomp filters: the Linux kernel itself refuses system calls (``EPERM``).

* :func:`install`, a grading child's: new processes and threads, running programs,
  signals to other processes, sockets, tracing, other processes' memory and SysV IPC;
* :func:`install_no_processes`, an autograding kernel's: new processes (threads are
  allowed: the kernel runs some), running programs, tracing and other processes' memory
  -- so nothing a notebook starts outlives its kernel to meddle with the regrade.

x86-64 and AArch64; elsewhere nothing."""

from __future__ import annotations

import sys

# Linux system call numbers the child may not make: new processes and threads, running
# programs, signals to others, sockets, tracing, other processes' memory, SysV IPC.
_DENIED_SYSCALLS = {
    "x86_64": (0xC000003E, [56, 57, 58, 59, 322, 435, 62, 200, 234, 129, 297, 424, 41, 53,
                            42, 101, 310, 311, 29, 30, 64, 68, 69]),
    "aarch64": (0xC00000B7, [220, 435, 221, 281, 129, 130, 131, 138, 240, 424, 198, 199,
                             203, 117, 270, 271, 194, 196, 190, 186, 189]),
}


# (clone, clone3, then what is refused outright) for the autograding kernel
_NO_PROCESSES = {
    "x86_64": (0xC000003E, 56, 435, [57, 58, 59, 322, 101, 310, 311]),
    "aarch64": (0xC00000B7, 220, 435, [221, 281, 117, 270, 271]),
}
_LD_W_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW, _DENY, _NOSYS = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38  # EPERM, ENOSYS
_CLONE_THREAD = 0x00010000


def install() -> None:
    """Install the grading child's filter (Linux x86-64 and AArch64; elsewhere nothing)."""
    import platform

    found = _DENIED_SYSCALLS.get(platform.machine())
    if found is None or not sys.platform.startswith("linux"):
        return
    arch, denied = found
    prog = [(_LD_W_ABS, 0, 0, 4), (_JEQ, 1, 0, arch), (_RET, 0, 0, _DENY),
            (_LD_W_ABS, 0, 0, 0)]
    if arch == 0xC000003E:  # the x32 ABI: syscall numbers with bit 30 set
        prog.append((_JGE, len(denied) + 1, 0, 0x40000000))
    for i, nr in enumerate(denied):
        prog.append((_JEQ, len(denied) - i, 0, nr))
    prog += [(_RET, 0, 0, _ALLOW), (_RET, 0, 0, _DENY)]
    _load(prog)


def install_no_processes() -> bool:
    """Install the autograding kernel's filter: no new process (``clone`` only with
    ``CLONE_THREAD``; ``clone3`` says ENOSYS, so the C library falls back to ``clone`` for
    threads), no ``fork``, ``vfork``, ``execve``, ``ptrace`` or access to other processes'
    memory. False where there is no filter for this machine."""
    import platform

    found = _NO_PROCESSES.get(platform.machine())
    if found is None or not sys.platform.startswith("linux"):
        return False
    arch, clone, clone3, denied = found
    n = len(denied)
    prog = [(_LD_W_ABS, 0, 0, 4), (_JEQ, 1, 0, arch), (_RET, 0, 0, _DENY),
            (_LD_W_ABS, 0, 0, 0)]
    if arch == 0xC000003E:  # the x32 ABI
        prog.append((_JGE, n + 6, 0, 0x40000000))  # -> deny
    prog.append((_JEQ, 0, 1, clone3))
    prog.append((_RET, 0, 0, _NOSYS))
    prog.append((_JEQ, 0, 2, clone))  # not clone: on to the list
    prog.append((_LD_W_ABS, 0, 0, 16))  # clone's flags (the low half of args[0])
    prog.append((_JSET, n, n + 1, _CLONE_THREAD))  # a thread -> allow, else deny
    for i, nr in enumerate(denied):
        prog.append((_JEQ, n - i, 0, nr))
    prog += [(_RET, 0, 0, _ALLOW), (_RET, 0, 0, _DENY)]
    _load(prog)
    return True


def _load(prog: list[tuple[int, int, int, int]]) -> None:
    import ctypes

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
