"""ssa_course.memlimit: a cap relative to the size a process already has (the fuzzer's
workers and the grading child; an absolute cap failed in a forked worker of a big
process, e.g. a pytest worker after the emulator tests)."""

from __future__ import annotations

import mmap
import multiprocessing

from ssa_course.memlimit import address_space_now, cap_address_space


def _in_a_big_process(_: object) -> tuple[bool, bool]:
    big = mmap.mmap(-1, 4 << 30)  # 4 GiB of address space, never touched
    cap_address_space(256 << 20)
    small = bytearray(64 << 20)  # within the allowance
    try:
        bytearray(1 << 30)
        huge_refused = False
    except MemoryError:
        huge_refused = True
    big.close()
    return len(small) == 64 << 20, huge_refused


def test_the_cap_is_on_top_of_the_size_at_the_time():
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.map(_in_a_big_process, [None]) == [(True, True)]


def test_the_size_now_grows_with_a_mapping():
    before = address_space_now()
    m = mmap.mmap(-1, 256 << 20)
    assert address_space_now() >= before + (200 << 20)
    m.close()
