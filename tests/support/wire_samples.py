"""Golden wire files: one minimal, schema-valid exchange per method of every revision.

Built from the IR and the official schema (required members only, the first branch of every
union), checked against the official schema, written to tests/golden/<rev>/<method>.json for
review. Regenerate with `python -m tests.support.wire_samples` after `make generate`; a test fails
when the committed files differ from what this produces.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from codegen.ir import Kind, Method, Revision
from codegen.normalize import definitions_of, ref_name

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
_FORMATS = {"uri": "https://example.com/a", "byte": "aGk=", "uri-template": "file:///{path}"}


class Sampler:
    """Minimal valid instances of a schema's definitions."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self.defs = definitions_of(schema)
        self.key = "$defs" if "$defs" in schema else "definitions"

    def validate(self, instance: Any, definition: str) -> None:
        root = {"$ref": f"#/{self.key}/{definition}", self.key: self.defs}
        if "$schema" in self.schema:
            root["$schema"] = self.schema["$schema"]
        jsonschema.validators.validator_for(root)(root).validate(instance)

    def sample(self, node: Any, depth: int = 0) -> Any:
        if depth > 24:
            raise RecursionError("schema recursion without an optional way out")
        if (name := ref_name(node)) is not None:
            return self.sample(self.defs[name], depth + 1)
        if not isinstance(node, dict):
            return "x"
        if "const" in node:
            return node["const"]
        if "enum" in node:
            return node["enum"][0]
        if "allOf" in node:
            out: dict[str, Any] = {}
            for part in node["allOf"]:
                out.update(self.sample(part, depth + 1))
            return out
        for key in ("anyOf", "oneOf"):
            if key in node:
                return self.sample(node[key][0], depth + 1)
        typ = node.get("type", "object" if "properties" in node else None)
        if isinstance(typ, list):
            typ = next(t for t in typ if t != "null")
        if typ == "object":
            props = node.get("properties", {})
            return {
                p: self.sample(props.get(p, {}), depth + 1)
                for p in sorted(node.get("required", []))
            }
        if typ == "array":
            return [self.sample(node.get("items", {}), depth + 1)]
        if typ == "string":
            return _FORMATS.get(node.get("format", ""), "x")
        if typ == "integer":
            return max(int(node.get("minimum", 1)), 1)
        if typ == "number":
            return 1.5
        if typ == "boolean":
            return True
        return "x"


def _frame_params(sampler: Sampler, rev: Revision, m: Method) -> Any:
    if m.params is None:
        return None
    message = sampler.defs[m.message]
    params = sampler.sample(message["properties"]["params"])
    envelope = rev.meta_envelope
    if envelope is not None and isinstance(params.get("_meta"), dict):
        params["_meta"][envelope.protocol_version_key] = rev.name
    return params


def _result(sampler: Sampler, rev: Revision, name: str) -> Any:
    result = sampler.sample({"$ref": f"#/{sampler.key}/{name}"})
    if rev.result_types and isinstance(result, dict) and "resultType" in result:
        result["resultType"] = (
            rev.result_types[1] if name == rev.interim_result else rev.result_types[0]
        )
    if name == rev.interim_result and rev.interim_one_of and isinstance(result, dict):
        # An interim result carries at least one of these (MRTR): the first, sampled.
        member = rev.interim_one_of[0]
        node = sampler.defs[name]["properties"][member]
        result[member] = sampler.sample(node)
    sampler.validate(result, name)
    return result


def exchange(schema: dict[str, Any], rev: Revision, m: Method) -> dict[str, Any]:
    """The golden exchange of one method: its message, and the result(s) answering it."""
    sampler = Sampler(schema)
    params = _frame_params(sampler, rev, m)
    if m.kind is Kind.INPUT_REQUEST:
        message: dict[str, Any] = {"method": m.name}
    elif m.kind is Kind.REQUEST:
        message = {"jsonrpc": "2.0", "id": 1, "method": m.name}
    else:
        message = {"jsonrpc": "2.0", "method": m.name}
    if params is not None:
        message["params"] = params
    bare = {k: v for k, v in message.items() if k in ("method", "params")}
    sampler.validate(message if rev.frames.message_has_envelope else bare, m.message)
    out: dict[str, Any] = {"method": m.name, "kind": str(m.kind), "message": message}
    if m.results:
        out["results"] = {name: _result(sampler, rev, name) for name in m.results}
    return out


def file_name(method: str) -> str:
    return method.replace("/", "__") + ".json"


def render(schema: dict[str, Any], rev: Revision) -> dict[str, str]:
    return {
        file_name(m.name): json.dumps(exchange(schema, rev, m), indent=2, sort_keys=True) + "\n"
        for m in rev.methods
    }


def main() -> None:
    from tests.support import REVISIONS, official_schema, revision_ir

    for name in REVISIONS:
        folder = GOLDEN / name
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob("*.json"):
            stale.unlink()
        for file, text in render(official_schema(name), revision_ir(name)).items():
            (folder / file).write_text(text, encoding="utf-8")
        print(f"{name}: {len(list(folder.glob('*.json')))} golden exchanges")


if __name__ == "__main__":
    main()
