"""The Jinja2 environment: templates/ rendered from the IR. Templates format; they decide nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jinja2

from codegen.normalize import pascal

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["pascal"] = pascal
    env.filters["pystr"] = lambda text: json.dumps(str(text), ensure_ascii=False)  # a literal
    return env


def render(template: str, **context: Any) -> str:
    context.setdefault("revision", None)
    context.setdefault("inputs", None)
    context.setdefault("extension", None)  # an extension's own modules: its pin
    context.setdefault("extensions", ())  # the extensions of a revision (pins)
    context.setdefault("share", None)  # an extension's codec: what it shares with core's
    return environment().get_template(template).render(**context)
