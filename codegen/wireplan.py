"""What the dispatch and codec templates render for one revision, derived from the IR.

Templates get names and flags only; every decision (which frame classes a revision needs, which
results are discriminated by `resultType`, how a method maps to the public models) is made here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from codegen.ir import Era, Kind, Method, Revision

# Values the public (latest) models require where an older revision has nothing to say. Each
# follows the protocol's rule for an older peer: a result without resultType is complete, and
# one without caching hints is stale at once (ttlMs 0) and reused only in its own
# authorization context ("private").
PUBLIC_BACKFILL: dict[str, Any] = {"ttlMs": 0, "cacheScope": "private"}


@dataclass(frozen=True)
class Frame:
    """A frame class: either a model as it is (`generated` False) or one the codec defines."""

    method: str
    name: str  # expression in the codec module: "m.CallToolRequest" or "CallToolRequestFrame"
    generated: bool
    base: str = ""  # for generated request/notification frames: the message model
    # for generated response frames: result models (discriminated: one per resultType tag)
    results: tuple[str, ...] = ()
    discriminated: bool = False  # results tagged by resultType (interim vs complete)
    tags: tuple[str, ...] = ()  # discriminated: the resultType tag of each of `results`
    widens: str = ""  # the schema's response class, whose `result` this frame's widens


@dataclass(frozen=True)
class Signature:
    """One method as the typed codec API declares it (for type checkers)."""

    method: str
    frame: str  # its request or notification frame
    params: str | None  # the params model; None: the method takes no params
    params_needed: bool  # the caller must pass params (the builder does not supply them)
    response: str = ""  # requests: the result response frame
    results: tuple[str, ...] = ()  # requests: the result models a response may carry
    paginated: bool = False  # a list method (lenient decoding applies)

    @property
    def params_type(self) -> str:
        """The `params` argument's annotation, with its default when params are optional."""
        if self.params is None:
            return "None = None"
        accepted = f"{self.params} | Mapping[str, Any]"
        return accepted if self.params_needed else f"{accepted} | None = None"

    @property
    def result_type(self) -> str:
        return " | ".join((*self.results, "Mapping[str, Any]"))


@dataclass(frozen=True)
class PublicEntry:
    method: str
    own_params: str | None
    public_params: str | None
    own_result: str | None
    public_result: str | None
    result_backfill: dict[str, Any]


@dataclass(frozen=True)
class WirePlan:
    revision: Revision
    latest: Revision
    requests: tuple[Frame, ...]
    notifications: tuple[Frame, ...]
    responses: tuple[Frame, ...]
    error_frames: tuple[tuple[int, str], ...]
    error_constants: tuple[tuple[str, int], ...]
    open_models: tuple[str, ...]
    public: tuple[PublicEntry, ...]
    is_latest: bool
    request_signatures: tuple[Signature, ...] = ()
    notification_signatures: tuple[Signature, ...] = ()

    @property
    def codec_class(self) -> str:
        return codec_class(self.revision)

    @property
    def unions(self) -> dict[str, str]:
        """The message unions the typed API names (alias -> annotation)."""
        frames = self.revision.frames
        errors = (f"m.{frames.error_response}", *(f"m.{n}" for _, n in self.error_frames))
        out = {
            "RequestFrame": _union(s.frame for s in self.request_signatures),
            "NotificationFrame": _union(s.frame for s in self.notification_signatures),
            "ResultFrame": _union(s.response for s in self.request_signatures),
            "ErrorFrame": _union(errors),
        }
        out["MessageFrame"] = _union(
            ("RequestFrame", "NotificationFrame", f"m.{frames.result_response}", "ErrorFrame")
        )
        return out

    @property
    def envelope_types(self) -> tuple[str, str] | None:
        """Modern era: the types of the envelope's client capabilities and client info."""
        env = self.revision.meta_envelope
        if env is None:
            return None
        info = f"m.{env.INFO_TYPE}" if env.client_info_key else "Any"
        return f"m.{env.CAPABILITIES_TYPE}", info

    @property
    def extension_tags(self) -> dict[str, tuple[str, ...]]:
        """resultType values of an extension's task results -> the methods answering them."""
        out: dict[str, list[str]] = {}
        for m in self.revision.methods:
            if m.task_result_type:
                out.setdefault(m.task_result_type, []).append(m.name)
        return {tag: tuple(methods) for tag, methods in sorted(out.items())}

    @property
    def cache_defaults(self) -> dict[str, Any]:
        """Caching hints an older peer leaves out, read as the protocol says (see PUBLIC_BACKFILL)."""
        fields: set[str] = set()
        for m in self.revision.methods:
            if m.cacheable and m.result:
                fields |= {f.name for f in self.revision.definitions[m.result].fields if f.required}
        return {k: v for k, v in PUBLIC_BACKFILL.items() if k in fields}

    @property
    def envelope(self) -> Any:
        """The latest revision's per-request meta envelope, when this older revision lacks one."""
        if self.is_latest or self.revision.meta_envelope is not None:
            return None
        return self.latest.meta_envelope

    @property
    def envelope_keys(self) -> tuple[str, ...]:
        """Keys of that envelope this revision's own `_meta` objects lack (e.g. not progressToken)."""
        if self.envelope is None:
            return ()
        rev = self.revision
        own = {f.name for n in _meta_types(rev) for f in rev.definitions[n].fields}
        fields = self.latest.definitions[self.envelope.definition].fields
        return tuple(f.name for f in fields if f.name not in own)


def codec_class(rev: Revision) -> str:
    """The codec class of a revision: 2026-07-28 -> Codec2026_07_28."""
    return "Codec" + rev.name.replace("-", "_")


def _union(members: Any) -> str:
    unique = list(dict.fromkeys(members))
    return " | ".join(unique) if unique else "Never"


def _needs_params(rev: Revision, m: Method) -> bool:
    """Whether a builder's caller must pass params: the schema requires them, and (modern era)
    for more than the `_meta` envelope the builder stamps."""
    if m.params is None or not m.params_required:
        return False
    if rev.meta_envelope is None:
        return True
    fields = rev.definitions[m.params].fields if m.params in rev.definitions else ()
    return any(f.required and f.name != "_meta" for f in fields)


def _answers(m: Method) -> tuple[str, ...]:
    """Every result model a response to `m` may carry: its results, then its task result."""
    return tuple(f"m.{r}" for r in dict.fromkeys((*m.results, *filter(None, (m.task_result,)))))


def _signature(rev: Revision, m: Method, frame: Frame, response: Frame | None) -> Signature:
    results = _answers(m)
    return Signature(
        method=m.name,
        frame=frame.name,
        params=f"m.{m.params}" if m.params else None,
        params_needed=_needs_params(rev, m),
        response=response.name if response is not None else "",
        results=results if response is not None else (),
        paginated=m.list_field is not None,
    )


def constant_name(definition: str) -> str:
    """UnsupportedProtocolVersionError -> UNSUPPORTED_PROTOCOL_VERSION_ERROR."""
    out = []
    for i, ch in enumerate(definition):
        if (
            ch.isupper()
            and i
            and (not definition[i - 1].isupper() or definition[i + 1 : i + 2].islower())
        ):
            out.append("_")
        out.append(ch.upper())
    return "".join(out)


def _meta_types(rev: Revision) -> set[str]:
    """Definitions that are the type of a `_meta` member."""
    return {
        f.type
        for d in rev.definitions.values()
        for f in d.fields
        if f.name == "_meta" and f.type in rev.definitions
    }


def _message_frame(rev: Revision, m: Method) -> Frame:
    if rev.frames.message_has_envelope:
        return Frame(m.name, f"m.{m.message}", False)
    return Frame(m.name, f"{m.message}Frame", True, base=f"m.{m.message}")


def _response_frame(rev: Revision, m: Method) -> Frame:
    base = m.message.removesuffix("Request")
    name = f"{base}ResultResponse"
    results = _answers(m)
    discriminated = bool(m.interim_results) and rev.result_types is not None
    # The schema's response class, when the codec's `result` is exactly its type (perhaps
    # discriminated): then the frame is that class or a subclass. A response that may also carry
    # a task result the schema's class does not name widens `result`, which a subclass cannot do
    # (a mutable field's type is invariant): that frame is a class of its own.
    schema_class = m.result_link == "response" and results == tuple(f"m.{r}" for r in m.results)
    if schema_class and not discriminated:
        return Frame(m.name, f"m.{name}", False)
    if name in rev.definitions and m.result_link != "response":
        name = f"{base}ResultResponseFrame"
    widens = name if m.result_link == "response" and not schema_class else ""
    tags: tuple[str, ...] = ()
    if discriminated and rev.result_types is not None:
        # One branch per tag: the interim result has its own, and so has a task result tagged by
        # a resultType of its own (an extension's); the final result and a task result without
        # one share the complete tag, as a union (a second branch with that tag replaced it).
        complete, interim_tag = rev.result_types
        own_tag = {f"m.{m.task_result}": m.task_result_type} if m.task_result_type else {}
        interim = {f"m.{r}" for r in m.interim_results}
        tag_of = {r: interim_tag if r in interim else own_tag.get(r, complete) for r in results}
        finals = " | ".join(r for r in results if tag_of[r] == complete)
        branches = {(finals if t == complete else r): t for r, t in tag_of.items()}
        results, tags = tuple(branches), tuple(branches.values())
    return Frame(m.name, name, True, base=f"m.{name}" if schema_class else "", results=results,
                 discriminated=discriminated, widens=widens, tags=tags)  # fmt: skip


def _public_entry(rev: Revision, latest: Revision, m: Method) -> PublicEntry | None:
    pub = latest.method(m.name)
    if pub is None:
        return None
    backfill: dict[str, Any] = {}
    own_def = rev.definitions.get(m.result or "")
    pub_def = latest.definitions.get(pub.result or "")
    if own_def is not None and pub_def is not None:
        for f in pub_def.fields:
            if f.required and own_def.field(f.name) is None:
                if f.name == "resultType" and latest.result_types:
                    backfill[f.name] = latest.result_types[0]
                elif f.name in PUBLIC_BACKFILL:
                    backfill[f.name] = PUBLIC_BACKFILL[f.name]
    return PublicEntry(
        method=m.name,
        own_params=f"m.{m.params}" if m.params else None,
        public_params=f"public.{pub.params}" if pub.params else None,
        own_result=f"m.{m.result}" if m.result else None,
        public_result=f"public.{pub.result}" if pub.result else None,
        result_backfill=backfill,
    )


def plan(rev: Revision, latest: Revision) -> WirePlan:
    wire = [m for m in rev.methods if m.kind is not Kind.INPUT_REQUEST]
    request_methods = [m for m in wire if m.kind is Kind.REQUEST]
    notification_methods = [m for m in wire if m.kind is Kind.NOTIFICATION]
    requests = tuple(_message_frame(rev, m) for m in request_methods)
    notifications = tuple(_message_frame(rev, m) for m in notification_methods)
    responses = tuple(_response_frame(rev, m) for m in request_methods)
    frames = {e.code: e.name for e in rev.errors if rev.definitions[e.name].field("error")}
    constants = {constant_name(e.name): e.code for e in rev.errors}
    public = tuple(e for m in rev.methods if (e := _public_entry(rev, latest, m)) is not None)
    metas = _meta_types(rev)
    return WirePlan(
        revision=rev,
        latest=latest,
        requests=requests,
        notifications=notifications,
        responses=responses,
        error_frames=tuple(sorted(frames.items())),
        error_constants=tuple(sorted(constants.items())),
        # `_meta` is open in every revision, declared so or not (2026's MetaObject is not).
        open_models=tuple(sorted(n for n, d in rev.definitions.items() if d.open or n in metas)),
        public=public,
        is_latest=rev.name == latest.name,
        request_signatures=tuple(
            _signature(rev, m, f, r)
            for m, f, r in zip(request_methods, requests, responses, strict=True)
        ),
        notification_signatures=tuple(
            _signature(rev, m, f, None)
            for m, f in zip(notification_methods, notifications, strict=True)
        ),
    )


def era_template(rev: Revision) -> str:
    return "codec_modern.py.jinja" if rev.era is Era.MODERN else "codec_legacy.py.jinja"
