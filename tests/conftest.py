"""Shared fixtures: the project, the local mirror of official inputs, and each revision's IR."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from codegen.ir import Revision
from codegen.pipeline import Project, load_revision

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
MIRROR = SHARED / "mcp-spec" / "schema"
EXAMPLES = SHARED / "mcp-spec" / "examples"
PROJECT = Project(ROOT)
REVISIONS = tuple(PROJECT.pins())


@functools.cache
def revision_ir(name: str) -> Revision:
    return load_revision(PROJECT, PROJECT.pins()[name])[0]


@functools.cache
def official_schema(name: str) -> dict:
    return json.loads((MIRROR / name / "schema.json").read_text(encoding="utf-8"))


@pytest.fixture(params=REVISIONS)
def revision_name(request: pytest.FixtureRequest) -> str:
    return request.param
