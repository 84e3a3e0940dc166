"""A params member named `meta` (not `_meta`) is a member the official schema allows and knows
nothing of: it is kept as an unknown member, never read as `_meta` (found by the differential
suite, tests/codegen/test_differential.py). Constructors still take the Python name."""

import mcp_wire


def test_a_member_named_meta_is_kept_as_an_unknown_member() -> None:
    model = mcp_wire.revision("2024-11-05").GetPromptRequest
    read = model.model_validate({"method": "prompts/get", "params": {"name": "", "meta": None}})
    assert read.params.model_extra == {"meta": None}
    assert read.params.meta is None


def test_a_wire_read_keeps_meta_and_underscore_meta_apart() -> None:
    model = mcp_wire.revision("2025-11-25").CallToolRequestParams
    read = model.model_validate_json(b'{"name": "t", "meta": 1, "_meta": {"k": 2}}')
    assert read.model_extra == {"meta": 1}
    assert read.model_dump(by_alias=True) == {"name": "t", "meta": 1, "_meta": {"k": 2}}


def test_constructors_take_the_python_name_nested_dicts_included() -> None:
    wire = mcp_wire.revision("2024-11-05")
    built = wire.GetPromptRequest(
        method="prompts/get", params={"name": "x", "meta": {"progressToken": 1}}
    )
    assert built.params.meta is not None
    assert built.model_dump(by_alias=True)["params"]["_meta"] == {"progressToken": 1}
