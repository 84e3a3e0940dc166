"""A `DeprecationWarning` once per deprecated member or method, when a user sets or sends it.

The schema's `deprecated: true` reaches the models as a mark on the member (`x-deprecated` in
its `json_schema_extra`) and the dispatch tables as `MethodSpec.deprecated`; reading a frame a
peer sent never warns (its choice, not the user's).
"""

import warnings

DEPRECATED_MARK = "x-deprecated"  # generation's mark of a member the schema deprecates

_warned: set[tuple[str, str]] = set()


def warn_once(owner: str, name: str, what: str, *, stacklevel: int) -> None:
    """Warn that `name` of `owner` (a model's qualified name, a revision) is deprecated, the
    first time only; `stacklevel` as the caller would pass it to `warnings.warn`."""
    key = (owner, name)
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn(
        f"{what} {name!r} of {owner} is deprecated by the MCP schema",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )
