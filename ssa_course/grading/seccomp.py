"""The seccomp filter of a grading child: the Linux kernel itself refuses new processes
and threads, running programs, signals to other processes, sockets, tracing, other
processes' memory and SysV IPC (``EPERM``). x86-64 and AArch64; elsewhere nothing."""

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


def install() -> None:
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
