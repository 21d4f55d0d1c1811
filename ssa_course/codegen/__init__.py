"""Lesson 11: from the scheduled graph to x86-64 and AArch64 machine code (``docs/codegen.md``).

Target-neutral here, one concept per module: the machine IR (``mir``), the selection walk
(``isel``, ``select_shared``, ``select_effects``), the quads loop passes, phis as parallel
copies (``phis``), register allocation (``liveness``, ``interference``, ``colouring``,
``spill``, ``regalloc``, ``reloads``), jumps and dead code, the frame walk
(``frame_layout``), the listing (``listing``), the driver (``compile``), images and runners
(``assemble``, ``elf``, ``native``, ``emulator``, ``disasm``). Each CPU is a folder
(``x86_64/``, ``aarch64/``) whose ``machine.py`` implements the one
:class:`~ssa_course.codegen.machine.Machine` protocol; :mod:`.machines` finds one by name.
"""
