"""The sea of nodes (lessons 05-06): graph nodes, the type lattice, peepholes, GVN."""
