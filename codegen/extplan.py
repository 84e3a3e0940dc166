"""What an extension's codec shares with its core revision's codec (inherited, not written again).

The extension's codec class derives from its revision's codec class. An extension's models import
every core class they share, so an expression of the extension's codec names the same object as
the core codec's when it is the same text and names no definition of the extension's own (`m.X`
with X a core definition) or a frame class defined alike in both. From that, per table: the
core table is inherited as it is, or spread with the extension's added and changed entries, or
(when the extension drops an entry) written in full; per class attribute: inherited when the
revision facts it is made of are equal; per method of the typed API: its whole overload set
declared again when the extension changes a type it names (a subclass's declaration replaces
the overload set, it cannot add to it), else inherited.
"""

from __future__ import annotations

from dataclasses import dataclass

from codegen.wireplan import Frame, Signature, WirePlan

TABLES = ("requests", "notifications", "responses")
# The codec methods the typed API declares (with_extensions: the core codec's names every
# extension of the revision, so an extension's codec inherits it).
TYPED = ("decode", "decode_response", "request", "notification", "response", "error", "envelope")


@dataclass(frozen=True)
class Shared:
    """The extension codec's share of its core codec (templates read names and flags only)."""

    core_class: str  # "_core.Codec2026_07_28"
    frames: tuple[str, ...]  # generated frame classes imported from the core codec
    own_frames: tuple[Frame, ...]  # generated frame classes written in the extension's codec
    spread: dict[str, tuple[Frame, ...]]  # table -> its entries beside the core table's
    unions: dict[str, str]  # alias -> annotation, the core codec's alias where it fits
    open_models: tuple[str, ...] | None  # the extension's own open models (None: in full)
    inherited: frozenset[str]  # class attributes the extension's codec inherits
    typed: frozenset[str]  # typed API methods the extension changes (declared again, whole)


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
    inherited = _inherited(ext, core)
    if same.expr(f"m.{ext.revision.frames.result_response}") and same.expr(
        f"m.{ext.revision.frames.error_response}"
    ):
        inherited |= {"result_response", "error_response"}
    return Shared(
        core_class=f"_core.{core.codec_class}",
        frames=frames,
        own_frames=tuple(f for f in _generated(ext) if f.name not in frames),
        spread=spread,
        unions=unions,
        open_models=extra,
        inherited=inherited,
        typed=_typed(ext, core, same, unions),
    )


def _generated(plan: WirePlan) -> list[Frame]:
    return [f for f in (*plan.requests, *plan.notifications, *plan.responses) if f.generated]


def _inherited(ext: WirePlan, core: WirePlan) -> frozenset[str]:
    """The class attributes whose revision facts are the core revision's."""
    a, b = ext.revision, core.revision
    out = set()
    if (a.name, a.era, a.batching, a.handshake) == (b.name, b.era, b.batching, b.handshake):
        out |= {"revision", "era", "batching", "unbatchable"}
    if ext.error_frames == core.error_frames:
        out.add("error_frames")
    if (ext.envelope, ext.envelope_keys) == (core.envelope, core.envelope_keys):
        out.add("public_envelope_keys")
    if a.meta_envelope == b.meta_envelope:
        out |= {"envelope_keys", "envelope_model"}
    if a.result_types == b.result_types and a.interim_one_of == b.interim_one_of:
        out |= {"result_tags", "interim_one_of"}
    if ext.cache_defaults == core.cache_defaults:
        out.add("cache_defaults")
    if a.meta_rule == b.meta_rule:
        out |= {"meta_key", "reserved_labels", "known_reserved_keys"}
    return frozenset(out)


def _typed(
    ext: WirePlan, core: WirePlan, same: _SameObject, unions: dict[str, str]
) -> frozenset[str]:
    """The typed API methods whose declarations name a type the extension changes."""
    kept = {alias for alias, annotation in unions.items() if annotation == f"_core.{alias}"}
    if {"RequestFrame", "NotificationFrame", "ErrorFrame"} <= kept and same.expr(
        f"m.{ext.revision.frames.result_response}"
    ):
        kept.add("MessageFrame")
    requests = same.signatures(ext.request_signatures, core.request_signatures)
    errors = ext.error_frames == core.error_frames and all(
        same.expr(f"m.{name}") for _, name in ext.error_frames
    )
    envelope = ext.envelope_types == core.envelope_types and all(
        same.expr(t) for t in ext.envelope_types or () if t != "Any"
    )
    unchanged = {
        "decode": "MessageFrame" in kept,
        "decode_response": requests and {"ResultFrame", "ErrorFrame"} <= kept,
        "request": requests and envelope and "RequestFrame" in kept,
        "notification": "NotificationFrame" in kept
        and same.signatures(ext.notification_signatures, core.notification_signatures),
        "response": requests and "ResultFrame" in kept,
        "error": errors and "ErrorFrame" in kept,
        "envelope": envelope,
    }
    return frozenset(name for name in TYPED if not unchanged[name])


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

    def signatures(self, ours: tuple[Signature, ...], theirs: tuple[Signature, ...]) -> bool:
        """Whether the typed API declares these methods as the core codec's does."""
        names = [n for s in ours for n in (s.frame, s.params, s.response, *s.results) if n]
        return ours == theirs and all(self.expr(n) for n in names)

    def frame(self, frame: Frame) -> bool:
        if self._core_frames.get(frame.name) != frame:
            return False
        if frame.discriminated and not self._same_tags:
            return False
        parts = [frame.base, *(r for union in frame.results for r in union.split(" | "))]
        return all(self.expr(p) for p in parts if p)
