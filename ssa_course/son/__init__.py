"""The sea of nodes (lessons 05-07): graph nodes, the type lattice, peepholes, GVN, SCCP,
global code motion. ``ssa_course.sea_of_nodes(source)`` is the lessons' entry point."""
