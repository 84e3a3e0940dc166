import importlib
import re
import typing

import pydantic
import typing_extensions

import mcp_wire
from tests.support import REVISIONS, revision_ir


def test_registry_lists_every_pinned_revision_with_its_derived_era():
    assert mcp_wire.REVISIONS == REVISIONS
    for name in REVISIONS:
        assert mcp_wire.ERAS[name] == revision_ir(name).era


def test_every_definition_keeps_its_schema_name_as_a_model_of_its_revision():
    """No definition is renamed, and no import shadows one (2024-11-05 has an `Annotated`)."""
    for name in REVISIONS:
        package = mcp_wire.revision(name)
        models = importlib.import_module(f"{package.__name__}.models")
        for definition in revision_ir(name).definitions:
            exported = getattr(package, definition)
            assert getattr(models, definition) is exported, (name, definition)
            if isinstance(exported, type):
                assert exported.__module__ == models.__name__, (name, definition)
                assert issubclass(exported, pydantic.BaseModel), (name, definition)


def _mentions_any(annotation: object) -> bool:
    if annotation is typing.Any:
        return True
    if isinstance(annotation, typing_extensions.TypeAliasType):  # JSONValue is one, never Any
        return _mentions_any(annotation.__value__) if annotation.__name__ != "JsonValue" else False
    return any(_mentions_any(arg) for arg in typing.get_args(annotation))


def test_no_field_is_typed_any_and_no_class_name_is_numbered():
    for name in REVISIONS:
        ir = revision_ir(name)
        models = importlib.import_module(f"{mcp_wire.revision(name).__name__}.models")
        classes = [
            c
            for c in vars(models).values()
            if isinstance(c, type)
            and issubclass(c, pydantic.BaseModel)
            and c.__module__ == models.__name__
        ]
        assert classes
        for cls in classes:
            assert cls.__name__ in ir.definitions, (name, cls.__name__)  # no invented names
            assert not re.search(r"[A-Za-z]\d+$", cls.__name__), (name, cls.__name__)
            cls.model_rebuild()
            for field, info in cls.model_fields.items():
                assert not _mentions_any(info.annotation), (name, cls.__name__, field)
