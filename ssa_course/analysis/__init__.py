"""Analyses over Julia-style IRCode (lesson 10): escape analysis after Julia's design.

A layer of its own between ``ssa`` (the IRCode it reads) and ``son`` (whose passes may use
its results): it imports only ``base``, ``tiny`` and ``ssa``.
"""
