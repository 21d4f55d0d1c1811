"""Signed division by a constant without ``idiv``: multiply by a "magic" reciprocal.

For a divisor ``d`` (``|d| >= 2``, not a power of two) there are a 64-bit ``M`` and a
shift ``s`` such that, for every 64-bit ``x``, ``x / d`` truncated is the high half of
``M * x`` (corrected by ``+x`` or ``-x`` when ``M``'s sign differs from ``d``'s), shifted
right by ``s``, plus one when that is negative (Granlund & Montgomery 1994; Warren,
*Hacker's Delight*, 10-1). :func:`quotient` is the same arithmetic on Python ints, which
the tests compare with Tiny's division.
"""

from __future__ import annotations

MASK = (1 << 64) - 1


def magic(d: int) -> tuple[int, int]:
    """``(M, s)`` for divisor ``d``: ``M`` as a signed 64-bit value, ``0 <= s < 64``."""
    two63 = 1 << 63
    ad = abs(d)
    t = two63 + (1 if d < 0 else 0)
    anc = t - 1 - t % ad  # |nc|: the largest value of x with x mod ad == ad - 1
    p = 63
    q1, r1 = divmod(two63, anc)
    q2, r2 = divmod(two63, ad)
    while True:
        p += 1
        q1, r1 = 2 * q1, 2 * r1
        if r1 >= anc:
            q1, r1 = q1 + 1, r1 - anc
        q2, r2 = 2 * q2, 2 * r2
        if r2 >= ad:
            q2, r2 = q2 + 1, r2 - ad
        delta = ad - r2
        if not (q1 < delta or (q1 == delta and r1 == 0)):
            break
    m = (q2 + 1) & MASK
    if m >= two63:
        m -= 1 << 64
    if d < 0:
        m = -m
    return m, p - 64


def _signed(v: int) -> int:
    v &= MASK
    return v - (1 << 64) if v >> 63 else v


def quotient(x: int, d: int) -> int:
    """What the emitted instructions compute for ``x / d`` (64-bit signed)."""
    m, s = magic(d)
    hi = (m * x) >> 64  # imul: the high half of the 128-bit signed product
    if d > 0 and m < 0:
        hi = _signed(hi + x)
    elif d < 0 and m > 0:
        hi = _signed(hi - x)
    q = hi >> s
    negative = x < 0 if d > 0 else q < 0  # the sign bit the code adds
    return _signed(q + negative)
