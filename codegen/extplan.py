"""What an extension's codec shares with its core revision's codec (imported, not written again).

An extension's models import every core class they share, so an expression of the extension's
codec names the same object as the core codec's when it is the same text and names no
definition of the extension's own (`m.X` with X a core definition) or a frame class defined alike
in both. From that, per table: the core table is reused as it is, or spread with the extension's
added and changed entries, or (when the extension drops an entry) written in full; per class
attribute: a reference to the core codec's when the revision facts it is made of are equal.
"""

from __future__ import annotations

from dataclasses import dataclass

from codegen.wireplan import Frame, WirePlan

TABLES = ("requests", "notifications", "responses")


@dataclass(frozen=True)
class Shared:
    """The extension codec's share of its core codec (templates read names and flags only)."""

    core_class: str  # "_core.Codec2026_07_28"
    frames: tuple[str, ...]  # generated frame classes imported from the core codec
    own_frames: tuple[Frame, ...]  # generated frame classes written in the extension's codec
    spread: dict[str, tuple[Frame, ...]]  # table -> its entries beside the core table's
    unions: dict[str, str]  # alias -> annotation, the core codec's alias where it fits
    open_models: tuple[str, ...] | None  # the extension's own open models (None: in full)
    inherited: frozenset[str]  # class attributes referring to the core codec's


def share(ext: WirePlan, core: WirePlan, own: set[str]) -> Shared:
    same = _SameObject(ext, core, own)
    frames = tuple(f.name for f in _generated(ext) if same.frame(f))
    spread = {}
    for table in TABLES:
        ours: tuple[Frame, ...] = getattr(ext, table)
        theirs = {f.method: f for f in getattr(core, table)}
        if theirs.keys() <= {f.method for f in ours}:
            changed = tuple(f for f in ours if f != theirs.get(f.method) or not same.expr(f.name))
            spread[table] = changed
    core_unions = core.unions
    unions = {}
    for alias, annotation in ext.unions.items():
        members = annotation.split(" | ")
        theirs_members = core_unions[alias].split(" | ")
        if alias != "MessageFrame" and set(theirs_members) <= set(members):
            if all(same.expr(m) for m in theirs_members):
                rest = [m for m in members if m not in theirs_members]
                annotation = " | ".join([f"_core.{alias}", *rest])
        unions[alias] = annotation
    extra = None
    if set(core.open_models) <= set(ext.open_models):
        extra = tuple(n for n in ext.open_models if n not in core.open_models)
    return Shared(
        core_class=f"_core.{core.codec_class}",
        frames=frames,
        own_frames=tuple(f for f in _generated(ext) if f.name not in frames),
        spread=spread,
        unions=unions,
        open_models=extra,
        inherited=_inherited(ext, core),
    )


def _generated(plan: WirePlan) -> list[Frame]:
    return [f for f in (*plan.requests, *plan.notifications, *plan.responses) if f.generated]


def _inherited(ext: WirePlan, core: WirePlan) -> frozenset[str]:
    """The class attributes whose revision facts are the core revision's."""
    a, b = ext.revision, core.revision
    out = set()
    if ext.error_frames == core.error_frames:
        out.add("error_frames")
    if a.meta_envelope == b.meta_envelope:
        out |= {"envelope_keys", "envelope_model"}
    if a.result_types == b.result_types and a.interim_one_of == b.interim_one_of:
        out |= {"result_tags", "interim_one_of"}
    if ext.cache_defaults == core.cache_defaults:
        out.add("cache_defaults")
    if a.meta_rule == b.meta_rule:
        out |= {"meta_key", "reserved_labels", "known_reserved_keys"}
    return frozenset(out)


class _SameObject:
    """Whether an expression of the extension's codec names what the core codec's names."""

    def __init__(self, ext: WirePlan, core: WirePlan, own: set[str]) -> None:
        self._own = own
        self._core_frames = {f.name: f for f in _generated(core)}
        # A discriminated frame reads resultType with the codec's tags: the extension's own
        # tags make its frames differ from the core's.
        self._same_tags = not ext.extension_tags
        self._ext_frames = {f.name: f for f in _generated(ext)}

    def expr(self, name: str) -> bool:
        if name.startswith("m."):
            return name[2:] not in self._own
        frame = self._ext_frames.get(name)
        return frame is not None and self.frame(frame)

    def frame(self, frame: Frame) -> bool:
        if self._core_frames.get(frame.name) != frame:
            return False
        if frame.discriminated and not self._same_tags:
            return False
        parts = [frame.base, *(r for union in frame.results for r in union.split(" | "))]
        return all(self.expr(p) for p in parts if p)
