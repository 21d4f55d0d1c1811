"""The colours of the sea-of-nodes drawings, shared by the printer that draws them and the
legend that explains them (kept here so the legend needs no IR package)."""

CONTROL_FILL = "#fff2a8"  # Start, If, Region, Loop, Return, ...
MEMORY_FILL = "#d6e9ff"  # a memory operation or a Phi of memory
PHI_FILL = "#e8f5e0"  # a Phi of a value
CONSTANT_FILL = "#f0f0f0"
CONTROL_COLOR = "#c00000"  # control edges
MEMORY_COLOR = "#1f5fbf"  # memory edges
CHANGED_FILL = "#ffb347"  # a node whose type the other mode (SCCP / parser) sees differently
DEAD_FILL = "#dddddd"  # a node SCCP proves never runs
NEW_FILL = "#b5e3ff"  # a node the optimistic pass made (son-opt against son)
REMOVED_FILL = "#f6c6c6"  # a node of son the optimistic pass removed (drawn without edges)
