"""SSA: dominators, construction (minimal, pruned, on the fly), destruction, Julia's IRCode."""
