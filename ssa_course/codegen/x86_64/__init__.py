"""Lesson 11's first target: x86-64 (System V AMD64) machine code for Linux.

One object, :data:`.machine.X86_64_MACHINE`, is what the target-neutral code generator
sees of this CPU (:class:`ssa_course.codegen.machine.Machine`).
"""
