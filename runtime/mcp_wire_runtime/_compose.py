"""A revision's codec with several extensions: their generated codec classes composed at run time.

Each extension of a revision is generated once, as its own codec class: a subclass of the
revision's codec that changes some of its class tables (methods, frames, open models, the
`resultType` values it adds). Composing takes from each extension's class what it changes of the
revision's codec and lays all of them over the revision's codec, in one class that derives from
every extension's class (an `isinstance` check against any of them holds). Nothing is generated
per combination of extensions.

Two extensions conflict when they change one entry (a method, a frame, any other member of the
codec) differently: composing them is a `ValueError` naming both.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import FunctionType
from typing import Any, ClassVar, Protocol, TypeVar, cast


class _Codec(Protocol):
    """What composing reads of a codec (`mcp_wire_runtime.codec.Codec`, which imports this module)."""

    revision: ClassVar[str]
    extension_ids: ClassVar[frozenset[str]]


CodecClass = TypeVar("CodecClass", bound=type[_Codec])


class _Marker:
    """An entry an extension takes out of a revision's table, or a whole member it changes."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


_REMOVED = _Marker("removed")
_WHOLE = _Marker("whole")
# A member's parts the extensions change: entry key (`_WHOLE`: the member) -> (the extension
# that changed it, its value).
Parts = dict[Any, tuple[str, Any]]
# A codec class's attributes that are no member of its tables (its methods).
_METHODS = FunctionType | classmethod | staticmethod | property


def core_of(cls: CodecClass) -> CodecClass:
    """The revision's own codec class of a codec class (itself when it has no extension)."""
    return cast("CodecClass", next(c for c in cls.__mro__ if not getattr(c, "extension_ids", None)))


@functools.cache
def composed(core: CodecClass, extensions: tuple[CodecClass, ...]) -> CodecClass:
    """The codec class of `core`'s revision with every extension of `extensions` (each the
    generated codec class of one extension, in order of their ids).

    Raises:
        ValueError: Two of them change one member of the codec differently.
    """
    if not extensions:
        return core
    if len(extensions) == 1 and issubclass(extensions[0], core):
        return extensions[0]
    members: dict[str, Parts] = {}
    for extension in extensions:
        _lay(members, extension, core.revision)
    attrs = {name: _applied(getattr(core, name), parts) for name, parts in members.items()}
    suffix = "".join(e.__name__.removeprefix(core_of(e).__name__) for e in extensions)
    bases = extensions if all(issubclass(e, core) for e in extensions) else (*extensions, core)
    cls = type(core.__name__ + suffix, bases, attrs)
    cls.__module__ = core.__module__
    return cast("CodecClass", cls)


def _lay(members: dict[str, Parts], extension: type[_Codec], revision: str) -> None:
    """Add what `extension` changes of its revision's codec to `members`, refusing a change
    another extension made differently."""
    base = core_of(extension)
    label = ", ".join(sorted(extension.extension_ids))
    for name, value in vars(extension).items():
        if name.startswith("__") or isinstance(value, _METHODS):
            continue
        for key, entry in _changes(getattr(base, name), value):
            parts = members.setdefault(name, {})
            other = parts.setdefault(key, (label, entry))
            if other[1] != entry:
                member = name if key is _WHOLE else f"{name}[{key!r}]"
                raise ValueError(
                    f"extensions {other[0]} and {label} of revision {revision} conflict: "
                    f"they define {member} differently"
                )


def _changes(base: Any, value: Any) -> list[tuple[Any, Any]]:
    """What `value` changes of `base`: a table's added and changed entries (a removed one as
    `_REMOVED`), a set's added members, else the whole value (nothing when equal)."""
    if isinstance(base, Mapping) and isinstance(value, Mapping):
        table: Mapping[Any, Any] = value
        changed = [(k, v) for k, v in table.items() if k not in base or base[k] != v]
        return changed + [(k, _REMOVED) for k in base if k not in table]
    if isinstance(base, frozenset) and isinstance(value, frozenset):
        added: frozenset[Any] = value - base
        return [(v, v) for v in sorted(added, key=repr)]
    return [] if value == base else [(_WHOLE, value)]


def _applied(base: Any, parts: Parts) -> Any:
    """A member of the revision's codec with the extensions' changes to it."""
    entries = {key: entry for key, (_, entry) in parts.items()}
    if isinstance(base, Mapping):
        table: dict[Any, Any] = {**base, **entries}
        return {k: v for k, v in table.items() if v is not _REMOVED}
    if isinstance(base, frozenset):
        return base | frozenset(entries)
    return entries[_WHOLE]
