"""Lesson 11: from the scheduled graph to x86-64 and AArch64 machine code (``docs/codegen.md``).

One concept per module: instruction selection (``isel``, ``select_*``, ``patterns``), phis
as parallel copies (``phis``), register allocation (``liveness``, ``interference``,
``colouring``, ``regalloc``, ``spill``; ``spill_all`` is the baseline), frames (``frame``),
the listing (``emit``), the machine-IR verifier (``verify``), the generated runtime
(``runtime_*``), three assemblers (``assemble`` chooses; GNU ``as``, keystone through
``keystone_asm`` and our own encoder ``x86_table``/``x86_operands``/``x86_encode``, the
last two placed by ``layout`` and written by ``elf``) and three ways to run or read the
bytes (``native``, ``emulate``, ``disasm``). The register file and calling
convention are data (``target``); ``aarch64/`` is the second target.
"""
