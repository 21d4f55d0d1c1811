"""x86-64's registers and calling convention (System V AMD64) as data.

Sixteen general-purpose 64-bit registers. System V: arguments in rdi, rsi, rdx, rcx, r8,
r9 (more on the stack), the result in rax, rbx, rbp, r12-r15 callee-saved. This back end
keeps rsp and rbp (stack and frame pointers) and r15 (the call depth left) for itself.
"""

from __future__ import annotations

from ssa_course.codegen.target import RegisterFile

# System V AMD64: argument registers in order, the return register, who saves what.
# (System V AMD64 psABI, section 3.2.3 "Parameter Passing" and figure 3.4.) Integers and
# pointers are all this language has, so the class INTEGER rules are the whole story here.
ARG_REGS = ("rdi", "rsi", "rdx", "rcx", "r8", "r9")
RET_REG = "rax"
# A call may destroy these: a value live across a call must not sit in one of them (the
# call's `defs` list them all, so interference keeps such values out without a special case).
CALLER_SAVED = ("rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11")
# A callee must give these back unchanged: using one costs a save and a restore in the
# prologue/epilogue, but the value then survives every call for free.
CALLEE_SAVED = ("rbx", "r12", "r13", "r14", "r15")  # rbp is the frame pointer, rsp the stack
# Registers the allocator may hand out, in the order it prefers them. Caller-saved first:
# a value that lives across no call is best in a register no prologue has to save.
ALLOCATABLE = ("rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11",
               "rbx", "r12", "r13", "r14", "r15")

# 8-bit and 32-bit names, for setcc/movzx and short immediates. `setcc` writes only a byte
# register, so a boolean is made with setcc into the low byte then movzx to clear the rest.
LOW8 = {"rax": "al", "rbx": "bl", "rcx": "cl", "rdx": "dl", "rsi": "sil", "rdi": "dil",
        "rbp": "bpl", "rsp": "spl", **{f"r{i}": f"r{i}b" for i in range(8, 16)}}
LOW32 = {"rax": "eax", "rbx": "ebx", "rcx": "ecx", "rdx": "edx", "rsi": "esi", "rdi": "edi",
         "rbp": "ebp", "rsp": "esp", **{f"r{i}": f"r{i}d" for i in range(8, 16)}}

# Condition codes of signed comparisons and their negations. NEGATE makes a `not` feeding a
# branch free (the branch tests the opposite condition); SWAP is the code for the operands
# exchanged (a < b is b > a), used to move a constant right: cmp takes an immediate only there.
NEGATE = {"e": "ne", "ne": "e", "l": "ge", "ge": "l", "g": "le", "le": "g"}
SWAP = {"e": "e", "ne": "ne", "l": "g", "g": "l", "le": "ge", "ge": "le"}


# Fixed colours per register (not derived from a hash) so a drawing is the same in every
# run, and neighbouring registers get clearly different light fills.
_X86_FILLS = {
    "rax": "#ffb3ba", "rcx": "#ffdfba", "rdx": "#ffffba", "rsi": "#baffc9",
    "rdi": "#bae1ff", "r8": "#e0bbff", "r9": "#ffc8e6", "r10": "#c9f2ef",
    "r11": "#f2e1c9", "rbx": "#d4f0a8", "r12": "#a8d4f0", "r13": "#f0a8d4",
    "r14": "#d9d9ff", "r15": "#ffe0a8",
}

X86_64 = RegisterFile(
    name="x86-64",
    allocatable=ALLOCATABLE,  # compile withholds r15: the call depth left lives there
    arguments=ARG_REGS,
    result=RET_REG,
    caller_saved=CALLER_SAVED,
    callee_saved=CALLEE_SAVED,
    # rbp is kept as a frame pointer (frame.py addresses slots from it), so System V's
    # sixteen registers leave fourteen for values.
    reserved=(("rsp", "stack pointer"), ("rbp", "frame pointer")),
    fills=_X86_FILLS,
)
