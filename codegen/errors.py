"""The one exception the generator raises for bad input: the CLI prints it as one line."""


class CodegenError(Exception):
    """A user-facing failure (bad schema, checksum mismatch, unknown revision, ...)."""
