"""The escape lattice: one :class:`EscapeInfo` per value, each property joined on its own.

An element records, for one IRCode value (an argument or a statement):

* ``analyzed`` -- whether the value is a reference at all (ints and bools are not analysed:
  their escape cannot matter; formally outside the lattice, shown ``◌``);
* ``returns`` -- the statement numbers of the ``return`` sites through which it may reach
  the caller (ReturnEscape);
* ``thrown`` -- the statement numbers where it may be thrown (ThrownEscape);
* ``args`` -- the arguments through whose fields it may reach the caller (ArgEscape:
  stored into a field or element of something the caller passed in);
* ``everywhere`` -- it may escape anywhere the analysis cannot follow (AllEscape: printed,
  handed to an unknown operation);
* ``alias`` -- what may be stored in its fields or elements (:class:`AliasInfo`).

Because every property is a set, a flag or a small lattice of its own, the join is the
property-wise join and the order is the property-wise order: the lattice laws hold
because they hold for each property (``tests/test_escape_lattice.py`` checks them).
"""

from __future__ import annotations

from dataclasses import dataclass

# AliasInfo kinds, lowest first: nothing known yet, per-field sets, one element set, unknown.
# FIELDS and ELEMENTS sit side by side (neither is below the other): an object and an array
# are different shapes, so a value that may be either has contents we cannot name -> UNKNOWN.
# This is Julia's EscapeAnalysis AliasInfo (`false`, `IndexableFields`, `IndexableElements`,
# `Unindexable`, `true`), with `Unindexable` and `true` folded into one top.
NONE, FIELDS, ELEMENTS, UNKNOWN = "none", "fields", "elements", "unknown"


@dataclass(frozen=True, slots=True)
class AliasInfo:
    """What may be stored in an object's fields (``fields``: field -> values) or an
    array's elements (``elements``: values). ``kind`` is one of ``none`` (bottom: nothing
    stored or loaded), ``fields``, ``elements``, ``unknown`` (top: the contents cannot be
    told apart -- a structure merged with another of a different shape, or handed to a
    call that may rearrange it). Values are printed names (``%3``, ``p``)."""

    kind: str = NONE
    fields: frozenset[tuple[str, frozenset[str]]] = frozenset()
    elements: frozenset[str] = frozenset()

    # `fields` is stored as a frozenset of pairs so the whole element stays hashable and
    # comparable with ==; the solver detects "nothing changed" by that equality.
    def field_map(self) -> dict[str, frozenset[str]]:
        return dict(self.fields)

    def join(self, other: AliasInfo) -> AliasInfo:
        # Bottom is the identity of the join, and joining equal elements is a no-op:
        # returning the argument unchanged keeps the fixpoint's equality test cheap.
        if self.kind == NONE:
            return other
        if other.kind == NONE or self == other:
            return self
        # Two different shapes (or anything with top) meet at top: once we cannot say which
        # field a store went to, every load from the structure must assume any stored value.
        if self.kind == UNKNOWN or other.kind == UNKNOWN or self.kind != other.kind:
            return ALIAS_UNKNOWN
        # Same shape: union what may be stored. Arrays keep one set for all indices (an index
        # is rarely a constant the analysis could trust), objects one set per field name.
        if self.kind == ELEMENTS:
            return AliasInfo(ELEMENTS, elements=self.elements | other.elements)
        merged = self.field_map()
        for f, vals in other.fields:
            merged[f] = merged.get(f, frozenset()) | vals
        return AliasInfo(FIELDS, fields=frozenset(merged.items()))

    # The order is defined by the join (a ⊑ b iff a ⊔ b = b), so the two can never disagree.
    def leq(self, other: AliasInfo) -> bool:
        return self.join(other) == other

    def __str__(self) -> str:
        if self.kind == FIELDS:
            inner = ", ".join(f"{f}: {{{', '.join(sorted(v))}}}" for f, v in sorted(self.fields))
            return f"Fields({inner})"
        if self.kind == ELEMENTS:
            return f"Elements({', '.join(sorted(self.elements))})"
        return "Unknown" if self.kind == UNKNOWN else "NoAlias"


# Bottom and top, shared: the join returns these very objects, so no element is rebuilt.
ALIAS_NONE = AliasInfo()
ALIAS_UNKNOWN = AliasInfo(UNKNOWN)


@dataclass(frozen=True, slots=True)
class EscapeInfo:
    """One value's escape state (see the module docstring for each property)."""

    # Each field is its own lattice (bool under `or`, sets under union, AliasInfo under its
    # join); the product of lattices is a lattice, which is all the solver needs to terminate:
    # every property can only grow, and each is bounded by the function's finite statements.
    analyzed: bool = False
    returns: frozenset[int] = frozenset()
    thrown: frozenset[int] = frozenset()
    args: frozenset[int] = frozenset()
    everywhere: bool = False
    alias: AliasInfo = ALIAS_NONE

    def join(self, other: EscapeInfo) -> EscapeInfo:
        """The least upper bound: each property joined on its own."""
        # Escape is a may-property: a value that escapes on one path escapes, so the join
        # keeps every site (union) rather than intersecting. Keeping the *sites*, not one flag,
        # is what lets a later pass ask "which return?" (Julia keeps the same sets).
        return EscapeInfo(self.analyzed or other.analyzed, self.returns | other.returns,
                          self.thrown | other.thrown, self.args | other.args,
                          self.everywhere or other.everywhere, self.alias.join(other.alias))

    def leq(self, other: EscapeInfo) -> bool:
        """The partial order: ``self ⊑ other`` when joining adds nothing to ``other``."""
        return self.join(other) == other

    def escape_only(self) -> EscapeInfo:
        """The same escape properties without the alias information (what a container's
        escape passes on to its contents)."""
        # Contents escape wherever their container does, but what is stored *inside* the
        # container says nothing about what is stored inside its contents: drop the alias.
        return EscapeInfo(self.analyzed, self.returns, self.thrown, self.args,
                          self.everywhere)

    # -- the questions optimizations ask ----------------------------------------------

    def has_no_escape(self) -> bool:
        """Never seen outside this call frame (stack allocation / scalar replacement)."""
        # `analyzed` is required: an int was never tracked, so "no escape sites" would be a
        # claim we never checked, not a fact.
        return self.analyzed and not (self.returns or self.thrown or self.args
                                      or self.everywhere)

    def has_return_escape(self) -> bool:
        return bool(self.returns)

    def has_thrown_escape(self) -> bool:
        return bool(self.thrown)

    def has_arg_escape(self) -> bool:
        return bool(self.args)

    def has_all_escape(self) -> bool:
        return self.everywhere

    def glyph(self) -> str:
        """The ``code_escapes`` column: ``◌`` not analysed, ``✓`` no escape, ``↑`` only
        returned, ``*`` thrown or through an argument (between return and all), ``X``
        everywhere; then ``′`` when fields or elements carry alias information."""
        if not self.analyzed:
            return "◌"
        # Report the worst property first: AllEscape subsumes the others for an optimizer,
        # so a value both returned and printed shows X, not ↑.
        if self.everywhere:
            mark = "X"
        elif self.thrown or self.args:
            mark = "*"
        elif self.returns:
            mark = "↑"
        else:
            mark = "✓"
        return mark + ("′" if self.alias.kind != NONE else "")

    def __str__(self) -> str:
        if not self.analyzed:
            return "NotAnalyzed"
        parts = []
        if self.everywhere:
            parts.append("AllEscape")
        if self.returns:
            parts.append(f"ReturnEscape{{{', '.join(map(str, sorted(self.returns)))}}}")
        if self.thrown:
            parts.append(f"ThrownEscape{{{', '.join(map(str, sorted(self.thrown)))}}}")
        if self.args:
            parts.append(f"ArgEscape{{{', '.join(map(str, sorted(self.args)))}}}")
        text = " + ".join(parts) or "NoEscape"
        return text + (f" {self.alias}" if self.alias.kind != NONE else "")


# The three starting points: the bottom (⊥, values the analysis ignores), a fresh allocation
# (analysed, nowhere yet) and the top every unknown operation pushes its operands to.
NOT_ANALYZED = EscapeInfo()
NO_ESCAPE = EscapeInfo(analyzed=True)
ALL_ESCAPE = EscapeInfo(analyzed=True, everywhere=True)
