"""Optional dependencies: the wheel's extras, and the one-line error for a missing one."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

# What each extra brings that mcpio imports (top-level module names).
EXTRAS: dict[str, frozenset[str]] = {
    "http": frozenset({"uvicorn", "httpx", "h11"}),
    "auth": frozenset({"jwt", "cryptography"}),
    "redis": frozenset({"redis"}),
    "inspect": frozenset({"jsonschema"}),
    "schemas": frozenset({"jsonschema"}),
    "otel": frozenset({"opentelemetry"}),
    "skills": frozenset({"yaml"}),
    "openapi": frozenset({"yaml", "httpx"}),
}


class MissingExtra(ImportError):
    """An optional part of mcpio was used without the extra that brings its dependencies."""


@contextlib.contextmanager
def needs(extra: str, what: str) -> Iterator[None]:
    """Turn a missing module of `extra` into a `MissingExtra` naming the extra to install."""
    try:
        yield
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").partition(".")[0]
        if missing not in EXTRAS[extra]:
            raise
        from mcpio._version import __version__

        wheel = f"mcpgen-{__version__}-py3-none-any.whl[{extra}]"
        message = (
            f"{what} needs the '{extra}' extra (no module named {missing!r}): "
            f"pip install 'path/to/{wheel}'"
        )
        raise MissingExtra(message, name=exc.name) from None
