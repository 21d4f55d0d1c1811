"""Random Bril programs with pointers (for ``tests/test_bril_alias.py``).

One to three allocations of ``n`` slots (``n`` the argument), pointers moved with ``ptradd``
and copied between a few variables (so a pointer's origin is sometimes one site, sometimes
mixed), loads, stores, an occasional ``free`` (use after free, double free), branches and
small loops, ints that loads and sums overwrite. Many runs stop with one of brili's errors
(out of bounds, uninitialized, freed, leaked): the optimized program must stop with the
same one, after the same output.
"""

from __future__ import annotations

import random

INTS = ["n", "one", "zero", "t0", "t1", "t2", "t3", "t4"]
WRITABLE = INTS[3:]


class PointerProgram:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.lines: list[str] = []
        self.ptrs: list[str] = []
        self.labels = 0

    def emit(self, line: str) -> None:
        self.lines.append(line)

    def stmt(self, depth: int) -> None:
        rng, ptrs, e = self.rng, self.ptrs, self.emit
        r = rng.random()
        if r < 0.2:
            e(f"  {rng.choice(WRITABLE)}: int = load {rng.choice(ptrs)};")
        elif r < 0.4:
            e(f"  store {rng.choice(ptrs)} {rng.choice(INTS)};")
        elif r < 0.5:
            offset = rng.choice(["one", "zero", "zero", "zero"])
            e(f"  {rng.choice(['q0', 'q1', 'q2'])}: ptr<int> = ptradd {rng.choice(ptrs)} "
              f"{offset};")
        elif r < 0.55:
            e(f"  p: ptr<int> = id {rng.choice(ptrs)};")
        elif r < 0.6:
            if rng.random() < 0.1:
                e(f"  free {rng.choice(ptrs)};")
        elif r < 0.7:
            e(f"  {rng.choice(WRITABLE)}: int = add {rng.choice(INTS)} {rng.choice(INTS)};")
        elif r < 0.8 and depth < 2:
            self.labels += 1
            k = self.labels
            e(f"  c{k}: bool = lt {rng.choice(INTS)} {rng.choice(INTS)};")
            e(f"  br c{k} .then{k} .else{k};")
            e(f".then{k}:")
            for _ in range(rng.randint(0, 3)):
                self.stmt(depth + 1)
            e(f"  jmp .end{k};")
            e(f".else{k}:")
            for _ in range(rng.randint(0, 3)):
                self.stmt(depth + 1)
            e(f".end{k}:")
        elif depth < 2:
            self.labels += 1
            k = self.labels
            e(f"  j{k}: int = const 0;")
            e(f".head{k}:")
            for _ in range(rng.randint(1, 4)):
                self.stmt(depth + 1)
            e(f"  j{k}: int = add j{k} one;")
            e(f"  c{k}: bool = lt j{k} three;")
            e(f"  br c{k} .head{k} .out{k};")
            e(f".out{k}:")
        else:
            e(f"  print {rng.choice(INTS)};")

    def text(self) -> str:
        rng, e = self.rng, self.emit
        e("@main(n: int) {")
        e("  one: int = const 1;")
        e("  zero: int = const 0;")
        e("  three: int = const 3;")
        sites = rng.randint(1, 3)
        for k in range(sites):
            e(f"  a{k}: ptr<int> = alloc n;")
            if rng.random() < 0.8:
                e(f"  store a{k} n;")
        allocs = [f"a{k}" for k in range(sites)]
        for k in range(5):
            e(f"  t{k}: int = id n;")
        for k in range(3):
            e(f"  q{k}: ptr<int> = id {rng.choice(allocs)};")
        e("  p: ptr<int> = id a0;")
        self.ptrs = allocs + ["q0", "q1", "q2", "p"]
        for _ in range(rng.randint(3, 12)):
            self.stmt(0)
        e("  print t2 t3 t4;")
        for name in allocs:
            if rng.random() < 0.9:
                e(f"  free {name};")
        e("}")
        return "\n".join(self.lines) + "\n"


def pointer_program(seed: int) -> str:
    return PointerProgram(seed).text()
