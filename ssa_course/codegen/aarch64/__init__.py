"""Lesson 11's second target: AArch64 (ARMv8-A, 64-bit) machine code for Linux.

The same machine IR, phi lowering and register allocator as x86-64 (the allocator reads
this target's register file, :mod:`.registers`); what differs lives here: instruction
selection (:mod:`.select`, :mod:`.select_ops`, the pattern table :mod:`.patterns`), the
frame (:mod:`.frame`), the listing (:mod:`.emit`), immediates (:mod:`.immediates`), the
generated runtime for Linux system calls (:mod:`.runtime`, :mod:`.runtime_entry`), three
assemblers (:mod:`.encode` -- our own, fixed 32-bit words --, GNU ``aarch64-linux-gnu-as``
and keystone, in :mod:`.assemble`) and the executors (:mod:`.emulate` under unicorn,
``qemu-aarch64`` or natively on an aarch64 Linux machine, :mod:`.run`). See
``docs/codegen.md``, "AArch64".
"""
