"""Redundant reloads: removed only while the register still holds the slot's value."""

from __future__ import annotations

from ssa_course.codegen.mir import MBlock, MFunction, MInstr, PReg, Slot
from ssa_course.codegen.reloads import remove_dead_reloads, remove_redundant_reloads

RAX, RCX = PReg("rax"), PReg("rcx")


def reload(reg: PReg, k: int) -> MInstr:
    return MInstr("mov", [reg, Slot(k)], defs=[reg])


def ops(fn: MFunction) -> list[str]:
    return [f"{i.op} {' '.join(map(str, i.operands))}" for b in fn.blocks for i in b.instrs]


def fn_of(*blocks: MBlock) -> MFunction:
    return MFunction("f", [], list(blocks))


def test_a_second_reload_of_the_same_slot_goes():
    b = MBlock("a", [reload(RAX, 0), MInstr("cmp", [RAX, RCX], uses=[RAX, RCX]),
                     reload(RAX, 0), MInstr("ret")])
    fn = fn_of(b)
    assert remove_redundant_reloads(fn) == 1
    assert ops(fn) == ["mov rax slot0", "cmp rax rcx", "ret "]


def test_a_write_of_the_register_or_the_slot_or_a_call_keeps_the_reload():
    write_reg = [reload(RAX, 0), MInstr("add", [RAX, RCX], defs=[RAX], uses=[RAX, RCX]),
                 reload(RAX, 0)]
    write_slot = [reload(RAX, 0), MInstr("mov", [Slot(0), RCX], uses=[RCX]), reload(RAX, 0)]
    call = [reload(RAX, 0), MInstr("call", defs=[RAX, RCX]), reload(RAX, 0)]
    for body in (write_reg, write_slot, call):
        fn = fn_of(MBlock("a", body + [MInstr("ret")]))
        assert remove_redundant_reloads(fn) == 0


def test_a_store_leaves_its_register_holding_the_slot():
    b = MBlock("a", [MInstr("mov", [Slot(2), RCX], uses=[RCX]), reload(RCX, 2),
                     MInstr("ret")])
    fn = fn_of(b)
    assert remove_redundant_reloads(fn) == 1


def test_what_a_block_knows_flows_only_into_a_block_entered_from_it_alone():
    a = MBlock("a", [reload(RAX, 0), MInstr("jmp")], succs=["b"])
    b = MBlock("b", [reload(RAX, 0), MInstr("jmp")], succs=["c"])
    c = MBlock("c", [reload(RAX, 0), MInstr("jmp")], succs=["c"])  # c is a loop head
    fn = fn_of(a, b, c)
    assert remove_redundant_reloads(fn) == 1  # b's reload goes, c's stays
    assert [len(x.instrs) for x in fn.blocks] == [2, 1, 2]
    h = MBlock("h", [reload(RAX, 0), MInstr("ret")], handler=True)
    fn = fn_of(MBlock("a", [reload(RAX, 0), MInstr("jmp")], succs=["h"]), h)
    assert remove_redundant_reloads(fn) == 0  # a throw arrives with registers clobbered


def test_storing_back_what_was_just_reloaded_goes_too():
    # nqueens' skipped column: count is reloaded and stored back into its own slot
    b = MBlock("a", [reload(RAX, 3), MInstr("cmp", [RCX, RCX], uses=[RCX]),
                     MInstr("mov", [Slot(3), RAX], uses=[RAX]), MInstr("ret")])
    fn = fn_of(b)
    assert remove_redundant_reloads(fn) == 1
    assert ops(fn) == ["mov rax slot3", "cmp rcx rcx", "ret "]


def test_a_store_back_after_a_change_stays():
    changed_reg = [reload(RAX, 3), MInstr("add", [RAX, RCX], defs=[RAX], uses=[RAX, RCX]),
                   MInstr("mov", [Slot(3), RAX], uses=[RAX])]
    changed_slot = [reload(RAX, 3), MInstr("mov", [Slot(3), RCX], uses=[RCX]),
                    MInstr("mov", [Slot(3), RAX], uses=[RAX])]
    other_slot = [reload(RAX, 3), MInstr("mov", [Slot(4), RAX], uses=[RAX])]
    for body in (changed_reg, changed_slot, other_slot):
        fn = fn_of(MBlock("a", body + [MInstr("ret")]))
        assert remove_redundant_reloads(fn) == 0


def test_a_reload_into_a_register_nobody_reads_goes():
    """nqueens' latch reloaded `count` into a register the next write replaced (a phi
    copy between two values spilled to one slot, whose store back had gone)."""
    dead = MBlock("a", [reload(RCX, 1), MInstr("mov", [RCX, RAX], defs=[RCX], uses=[RAX]),
                        MInstr("ret", uses=[RCX])])
    fn = fn_of(dead)
    assert remove_dead_reloads(fn) == 1
    assert ops(fn) == ["mov rcx rax", "ret "]
    # read later, in this block or a successor: kept
    read = MBlock("a", [reload(RCX, 1), MInstr("jmp")], succs=["b"])
    fn = fn_of(read, MBlock("b", [MInstr("ret", uses=[RCX])]))
    assert remove_dead_reloads(fn) == 0
    # read by a call as an argument register: kept
    arg = MBlock("a", [reload(PReg("rdi"), 1), MInstr("call", defs=[RAX],
                                                      uses=[PReg("rdi")]), MInstr("ret")])
    assert remove_dead_reloads(fn_of(arg)) == 0
