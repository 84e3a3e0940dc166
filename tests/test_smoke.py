import importlib

import pydantic

import mcp_wire
from tests.conftest import REVISIONS, revision_ir


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
