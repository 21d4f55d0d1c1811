"""A memory cap for a process that is already running: its size now plus an allowance.

An absolute ``RLIMIT_AS`` breaks in a process that is already big: a forked worker of a
long test session (or of a kernel that has emulated code: unicorn reserves its code
cache up front) would fail its first allocation. The grading child and the fuzzer's
workers both cap themselves here, relative to their size at the fork.
"""

from __future__ import annotations

import contextlib
import os


def address_space_now() -> int:
    """This process's virtual size in bytes (1 GiB where /proc cannot tell)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 1 << 30


def cap_address_space(allowance: int) -> int:
    """Limit this process to its size now plus ``allowance`` bytes; returns the limit.

    A hard limit that is already lower stays (``setrlimit`` refuses to raise it)."""
    import resource

    limit = address_space_now() + allowance
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return limit
