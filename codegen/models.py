"""Pydantic models of one revision, by datamodel-code-generator with one pinned option set.

The schema it reads has been through `codegen.normalize` first; every option below is part of
the output's contract (reviewed diffs depend on them), so change them only on purpose.
"""

from __future__ import annotations

import json
import re
import warnings
from typing import Any

import datamodel_code_generator as dcg
from datamodel_code_generator.enums import DataModelType, InputFileType, StrictTypes
from datamodel_code_generator.format import PythonVersion

from codegen.errors import CodegenError

BASE_MODULE = "mcp_wire._base"
_REBUILD = re.compile(r"^\w+\.model_rebuild\(\)$")

OPTIONS: dict[str, Any] = {
    "input_file_type": InputFileType.JsonSchema,
    "output_model_type": DataModelType.PydanticV2BaseModel,
    "target_python_version": PythonVersion.PY_311,
    "base_class": f"{BASE_MODULE}.WireModel",
    "type_overrides": {"JSONValue": f"{BASE_MODULE}.JSONValue"},
    # Bytes and URIs stay the strings they are on the wire (no Base64Str / AnyUrl rewriting).
    "type_mappings": ["string+uri=string", "string+byte=string", "string+uri-template=string"],
    # JSON numbers and booleans are read exactly as JSON types them: no `true` as 1, no "12" as
    # 12, no 1 as `true` (pydantic's lax mode would coerce them, and change the message).
    "strict_types": [StrictTypes.int, StrictTypes.float, StrictTypes.bool],
    "use_annotated": True,
    "field_constraints": True,
    "use_standard_collections": True,
    "use_union_operator": True,
    "enum_field_as_literal": "all",
    "use_double_quotes": True,
    "disable_timestamp": True,
    "use_schema_description": True,
    "use_field_description": True,
    "use_type_alias": True,
    "skip_root_model": True,
    "remove_special_field_name_prefix": True,
    "formatters": [],
}


def _without_open_markers(node: Any) -> Any:
    """Drop `additionalProperties: {}` beside properties: every model keeps unknown members
    (typed as JSON values, in the base class), so a per-model `Any` extras annotation is noise."""
    if isinstance(node, list):
        return [_without_open_markers(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _without_open_markers(v) for k, v in node.items()}
    if "properties" in out and out.get("additionalProperties") in ({}, True):
        del out["additionalProperties"]
    return out


def generate_models(normalized_schema: dict[str, Any], revision: str) -> str:
    """Model source text of one revision (unformatted, no header)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            schema = json.dumps(_without_open_markers(normalized_schema), sort_keys=True)
            out = dcg.generate(schema, **OPTIONS)
        except Exception as exc:  # the generator raises many types; all mean "bad schema"
            raise CodegenError(
                f"{revision}: model generation failed: {type(exc).__name__}: {exc}"
            ) from None
    if not isinstance(out, str):
        raise CodegenError(f"{revision}: model generation produced no single module")
    lines = out.splitlines()
    while lines and (lines[0].startswith("#") or not lines[0].strip()):
        lines.pop(0)  # datamodel-codegen's own header: ours replaces it
    # Models build their validators on first use (defer_build in the base class), which also
    # resolves forward references; eager model_rebuild() calls would cost the import that time.
    lines = [line for line in lines if not _REBUILD.match(line)]
    return "\n".join(lines) + "\n"
