import mcp_wire
from tests.conftest import REVISIONS, revision_ir


def test_registry_lists_every_pinned_revision_with_its_derived_era():
    assert mcp_wire.REVISIONS == REVISIONS
    for name in REVISIONS:
        assert mcp_wire.ERAS[name] == revision_ir(name).era
