"""Generated models carry plain annotations (cheap to import), with the same fields as before.

`codegen.models` drops datamodel-code-generator's `from __future__ import annotations` and keeps
as strings only the annotations that cannot be evaluated where they stand (issue 8, item 4).
"""

from __future__ import annotations

import subprocess
import sys
import types
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

import mcp_wire
from codegen.errors import CodegenError
from codegen.models import _defined_before_use, _eager_annotations
from tests.support import ROOT

SOURCE = '''from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from mcp_wire_runtime.base import WireModel


class A(WireModel):
    """A model."""

    b: B | None = None
    """Defined further down."""
    me: list[A] | None = None
    meta: Annotated[
        Literal["x"] | B, Field(alias="_meta")
    ]
    kind: Literal["a"]
    str: str = "shadowed below"
    other: str
    first: int


Alias = list[A]


class B(WireModel):
    a: A
    items: Alias
'''


@pytest.fixture(scope="module")
def eager() -> str:
    """SOURCE with its annotations made eager."""
    return _eager_annotations(SOURCE, "test")


def test_the_future_import_is_dropped(eager: str) -> None:
    assert "from __future__" not in eager


def test_an_annotation_naming_a_later_model_stays_a_string(eager: str) -> None:
    assert 'b: "B | None" = None' in eager


def test_an_annotation_naming_its_own_class_stays_a_string(eager: str) -> None:
    assert 'me: "list[A] | None" = None' in eager


def test_an_annotated_annotation_stays_a_string_whole_on_one_line(eager: str) -> None:
    assert "meta: \"Annotated[Literal['x'] | B, Field(alias='_meta')]\"" in eager


def test_annotations_that_evaluate_in_place_are_left_plain(eager: str) -> None:
    assert 'kind: Literal["a"]' in eager
    assert "first: int" in eager
    assert "a: A\n" in eager and "items: Alias\n" in eager


def test_an_annotation_naming_what_the_class_body_binds_stays_a_string(eager: str) -> None:
    assert 'str: "str" = "shadowed below"' in eager
    assert 'other: "str"' in eager


def test_a_field_s_docstring_is_kept(eager: str) -> None:
    assert '"""Defined further down."""' in eager


def test_a_module_without_the_future_import_is_left_as_it_is(eager: str) -> None:
    assert _eager_annotations(eager, "test") == eager


def test_an_annotation_that_cannot_be_quoted_is_an_error() -> None:
    source = 'from __future__ import annotations\n\n\nclass A:\n    x: L["it\'s", \'a "b"\'] | B\n'
    with pytest.raises(CodegenError, match="cannot quote"):
        _eager_annotations(source, "test")


ORDERED = '''from __future__ import annotations

from mcp_wire_runtime.base import WireModel


class A(WireModel):
    b: B
    self: A | None = None


Alias = TypeAliasType("Alias", A | "Later")
"""The alias's docstring."""


class B(WireModel):
    c: C | None = None
    cycle: D | None = None


class C(Base):
    x: int


class D(WireModel):
    b: B | None = None


class Later(WireModel):
    pass
'''


def test_definitions_come_after_what_their_annotations_name() -> None:
    out = _defined_before_use(ORDERED, "test")
    order = [line.split()[0] if "=" in line else line.split()[1].split("(")[0]
             for line in out.splitlines() if line.startswith(("class ", "Alias ="))]  # fmt: skip
    # C needs Base, which is not defined here: evaluated at once, so it stays where it was.
    # B and D name each other: B (first of the cycle) keeps its forward reference to D.
    assert order == ["C", "B", "D", "A", "Alias", "Later"]
    assert '"""The alias\'s docstring."""' in out.split("Alias =")[1].split("class D")[0]
    assert out.startswith("from __future__ import annotations\n\nfrom mcp_wire_runtime.base import")
    assert _defined_before_use(out, "test") == out
    final = _eager_annotations(out, "test")
    assert 'cycle: "D | None" = None' in final and "b: B\n" in final and "c: C | None" in final


def test_a_definition_used_at_once_is_moved_up_unless_in_a_cycle() -> None:
    assert _defined_before_use("X = list[Y]\n\n\nclass Y:\n    pass\n", "test").startswith(
        "class Y:"
    )
    source = "class A(B):\n    pass\n\n\nclass B:\n    a: A\n"
    with pytest.raises(CodegenError, match="A needs B defined first"):
        _defined_before_use(source, "test")


def _described(module: types.ModuleType) -> dict[str, typing.Any]:
    """What each model of a module is, its module's name left out (dicts compare unordered)."""
    out: dict[str, typing.Any] = {}
    prefix = f"{module.__name__}."
    for name, cls in sorted(vars(module).items()):
        if not (
            isinstance(cls, type)
            and issubclass(cls, BaseModel)
            and cls.__module__ == module.__name__
        ):
            continue
        cls.model_rebuild()
        hints = typing.get_type_hints(cls, include_extras=True)
        out[name] = {
            "doc": cls.__doc__,
            "fields": {f: repr(i).replace(prefix, "") for f, i in cls.model_fields.items()},
            "hints": {k: repr(v).replace(prefix, "") for k, v in hints.items()},
            "validation": cls.model_json_schema(by_alias=True),
            "serialization": cls.model_json_schema(by_alias=True, mode="serialization"),
        }
    return out


def compare_with_deferred(rev: str) -> None:
    """Every model of the revision against the same module text with the future import put
    back (every annotation a string again): fields, types, aliases, docstrings, schemas."""
    models = mcp_wire.revision(rev).models
    text = Path(models.__file__).read_text(encoding="utf-8")
    assert "from __future__ import annotations" not in text
    for cls in vars(models).values():  # no forward references left: every class is complete
        if isinstance(cls, type) and cls.__module__ == models.__name__:
            assert not [a for a in cls.__annotations__.values() if isinstance(a, str)], cls
    name = f"_deferred_{models.__name__.replace('.', '_')}"
    deferred = types.ModuleType(name)
    sys.modules[name] = deferred
    exec(compile("from __future__ import annotations\n" + text, name, "exec"), vars(deferred))
    expected = _described(deferred)
    got = _described(models)
    assert got.keys() == expected.keys()
    for cls in got:
        assert got[cls] == expected[cls], cls


@pytest.mark.parametrize("rev", mcp_wire.REVISIONS)
def test_models_are_those_the_future_import_gave(rev: str) -> None:
    """In a fresh interpreter: both modules' models are built the same way, from scratch."""
    code = (
        f"from tests.codegen.test_eager_annotations import compare_with_deferred as c; c({rev!r})"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
