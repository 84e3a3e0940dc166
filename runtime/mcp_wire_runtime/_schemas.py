"""The validators a codec reads frames with: one pass of pydantic-core per frame, valid or not.

They are built once per codec from the frame classes' own core schemas, so what they return are
instances of those classes, validated exactly as the classes validate, with three differences
that belong to reading rather than to the models:

* A frame's kind is chosen inside the validator, so no byte is scanned in Python first: a
  request or notification by its `method`; a frame without one is a response (tagged by its
  `jsonrpc`), tried as an error response typed by `error.code`, as any error response, then as
  a result response.
* An error response may lack its `id` or carry `"id": null` (JSON-RPC 2.0 answers an unreadable
  request that way) in every revision; the id then reads as None.
* A modern result may lack the members that earlier revisions did not have (`resultType`, the
  caching hints): they read as their defaults and stay unset, and only the recognised
  `resultType` values (the revision's, plus a codec's extensions) validate.

A failing frame's errors start their location with its tag (a method, or "2.0") and, for a
response, the label of each branch it failed (`typed error`, `error`, `result`);
`mcp_wire_runtime._failures` turns them into the `ProtocolError`.
"""

from __future__ import annotations

import functools
import operator
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic_core import SchemaValidator
from pydantic_core import core_schema as cs

Schema = Any  # a pydantic-core schema: a dict of one of its many TypedDict shapes

_LOCK = threading.Lock()

# Branch labels, which start the location of a failing frame's errors.
TYPED_ERROR, ERROR, RESULT, MESSAGE, BATCH = "typed error", "error", "result", "message", "batch"
JSONRPC = "2.0"  # the tag of responses (a call's tag is its method)


class SchemaSet:
    """Core schemas of a codec's frame classes, sharing one table of definitions.

    They are made in one pass (each model's schema once).
    """

    def __init__(self, classes: Sequence[type[BaseModel]]) -> None:
        self._changed: set[type[BaseModel]] = set()  # classes validated by a changed schema
        every: Any = functools.reduce(operator.or_, classes)  # a union built at run time
        union: Any = TypeAdapter(every).core_schema
        self._definitions: dict[str, Schema] = {}
        if union["type"] == "definitions":
            self._definitions = {d["ref"]: d for d in union["definitions"]}
            union = union["schema"]
        union = self.resolve(union)
        choices = union["choices"] if union["type"] == "union" else [union]
        self._by_class: dict[type[BaseModel], Schema] = {}
        for choice in choices:
            model = self.resolve(choice[0] if isinstance(choice, tuple) else choice)
            self._by_class[model["cls"]] = model

    def of(self, cls: type[BaseModel]) -> Schema:
        """The model schema of `cls`."""
        return self._by_class[cls]

    def resolve(self, schema: Schema) -> Schema:
        """The schema a definition reference points at (followed to a non-reference)."""
        while schema["type"] == "definition-ref":
            schema = self._definitions[schema["schema_ref"]]
        return schema

    def validator(self, schema: Schema) -> SchemaValidator:
        """A validator of `schema` with the definitions it reaches."""
        definitions = [self._definitions[ref] for ref in self._reachable(schema)]
        whole: Any = cs.definitions_schema(schema, definitions) if definitions else schema
        # pydantic-core validates a complete model class with the class's own validator, not
        # with the schema given: a changed schema is only used for a class marked incomplete
        # while the validator is built.
        with _LOCK:
            marked = [c for c in self._changed if c.__dict__.get("__pydantic_complete__")]
            for cls in marked:
                cls.__pydantic_complete__ = False
            try:
                return SchemaValidator(whole)
            finally:
                for cls in marked:
                    cls.__pydantic_complete__ = True

    def _reachable(self, schema: Schema) -> list[str]:
        """The definitions `schema` refers to, directly or through others (only those are built)."""
        seen: dict[str, None] = {}
        stack: list[Any] = [schema]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                ref = node.get("schema_ref") if node.get("type") == "definition-ref" else None
                if ref is not None and ref not in seen:
                    seen[ref] = None
                    stack.append(self._definitions[ref])
                stack.extend(v for v in node.values() if isinstance(v, dict | list | tuple))
            elif isinstance(node, list | tuple):
                stack.extend(v for v in node if isinstance(v, dict | list | tuple))
        return list(seen)

    def with_fields(self, model: Schema, changes: Mapping[str, Any]) -> Schema:
        """Copy a model schema with some of its fields (by wire name) changed.

        Each change is a function from the field's schema to its new one. The original keeps its
        `ref`, so other references still reach it unchanged.
        """
        model = self.resolve(model)
        fields_schema = model["schema"]
        fields = dict(fields_schema["fields"])
        for name, field in fields_schema["fields"].items():
            wire = field.get("validation_alias") or name
            change = changes.get(wire if isinstance(wire, str) else name)
            if change is not None:
                fields[name] = {**field, "schema": change(field["schema"])}
        self._changed.add(model["cls"])
        copy = {k: v for k, v in model.items() if k != "ref"}
        copy["schema"] = {**fields_schema, "fields": fields}
        if "ref" in model:
            self._definitions.setdefault(model["ref"], model)
        return copy


def _inner(schema: Schema) -> Schema:
    """A field's schema without its default."""
    return schema["schema"] if schema["type"] == "default" else schema


def defaulted(value: Any, values: Sequence[Any] | None = None) -> Any:
    """Make a field change: the member may be absent (read as `value`, left unset).

    With `values`, only those values validate.
    """

    def change(schema: Schema) -> Schema:
        inner = cs.literal_schema(list(values)) if values is not None else _inner(schema)
        return cs.with_default_schema(inner, default=value)

    return change


def only(values: Sequence[Any]) -> Any:
    """A field change: only these values validate (the member stays as required as it was)."""

    def change(schema: Schema) -> Schema:
        literal = cs.literal_schema(list(values))
        if schema["type"] == "default":
            return {**schema, "schema": literal}
        return literal

    return change


def optional_null(schema: Schema) -> Schema:
    """A field change: the member may be absent or null (both read as None)."""
    inner = _inner(schema)
    if inner["type"] == "nullable":
        inner = inner["schema"]
    return cs.with_default_schema(cs.nullable_schema(inner), default=None)


def integer_first(schema: Schema) -> Schema:
    """A field change: the member must be a JSON integer before its own schema judges it."""
    inner = _inner(schema)
    if inner["type"] == "int":
        return schema
    checked = cs.chain_schema([cs.int_schema(strict=True), inner])
    return {**schema, "schema": checked} if schema["type"] == "default" else checked


def labelled_union(choices: Sequence[tuple[Schema, str]]) -> Schema:
    """Choices tried in order; the first that validates wins."""
    if len(choices) == 1:
        return choices[0][0]
    return cs.union_schema(list(choices), mode="left_to_right")


def tagged(choices: Mapping[Any, Schema], path: Any) -> Schema:
    """A union picked by the value at `path` (a key, a path, or a list of paths: the first found)."""
    return cs.tagged_union_schema(dict(choices), discriminator=path)


class Readers:
    """The validators one codec reads with.

    `message` for `decode`, `response(method)` for `decode_response`. `result_changes(spec,
    tag)` relaxes result models (the codec's era hook); `result_tags` orders a tagged result's
    branches (the complete one first: the most common).
    """

    def __init__(self, codec: Any, result_changes: Any) -> None:
        self._codec = codec
        self._changes = result_changes
        frames = [
            *codec.requests.values(),
            *codec.notifications.values(),
            *codec.responses.values(),
            codec.result_response,
            codec.error_response,
            *codec.error_frames.values(),
        ]
        self._set = SchemaSet(list(dict.fromkeys(frames)))
        self._error_choices = self._errors()
        responses = labelled_union(
            [*self._error_choices, (self._result(codec.result_response, None), RESULT)]
        )
        # One tag picks the frame: its `method` (a request or notification), else its `jsonrpc`
        # (a response: "2.0"), so a malformed call is never tried as a response.
        choices = {
            m: self._set.of(cls) for m, cls in {**codec.requests, **codec.notifications}.items()
        }
        one = tagged({**choices, JSONRPC: responses}, [["method"], ["jsonrpc"]])
        if codec.batching:
            one = labelled_union([(one, MESSAGE), (cs.list_schema(one), BATCH)])
        self.message = self._set.validator(one).validate_json

    def response(self, method: str) -> SchemaValidator:
        """The validator of `method`'s responses: its result, or an error frame."""
        codec = self._codec
        frame = self._result(codec.responses[method], codec.methods[method])
        return self._set.validator(labelled_union([(frame, RESULT), *self._error_choices]))

    def _errors(self) -> list[tuple[Schema, str]]:
        codec = self._codec
        out: list[tuple[Schema, str]] = []
        if codec.error_frames:
            typed = {code: self._error(cls) for code, cls in codec.error_frames.items()}
            out.append((tagged(typed, ["error", "code"]), TYPED_ERROR))
        out.append((self._error(codec.error_response), ERROR))
        return out

    def _error(self, cls: type[BaseModel]) -> Schema:
        # A typed frame's code is a literal, which would also take -32020.0: an integer first.
        code = {"code": integer_first}
        return self._set.with_fields(
            self._set.of(cls),
            {"id": optional_null, "error": lambda schema: self._set.with_fields(schema, code)},
        )

    def _result(self, cls: type[BaseModel], spec: Any) -> Schema:
        return self._set.with_fields(
            self._set.of(cls), {"result": lambda schema: self._relaxed(schema, spec)}
        )

    def _relaxed(self, schema: Schema, spec: Any) -> Schema:
        schema = self._set.resolve(_inner(schema))
        if not _by_result_type(schema):  # one model, or a union of them (tagged otherwise)
            return self._task_or_result(self._changed(schema, self._changes(spec, None)), spec)
        order = list(self._codec.result_tags)
        tags = sorted(schema["choices"], key=lambda t: order.index(t) if t in order else len(order))
        return labelled_union(
            [(self._changed(schema["choices"][t], self._changes(spec, t)), str(t)) for t in tags]
        )

    def _task_or_result(self, schema: Schema, spec: Any) -> Schema:
        """A method's result or the task a task-augmented request may get instead (2025-11-25:
        `CallToolResult | CreateTaskResult`), picked by the task result's required `task` member
        (pydantic's smart union would try both models, strict then lax, on every result)."""
        task_result = getattr(spec, "task_result", None)
        if task_result is None or schema["type"] != "union" or len(schema["choices"]) != 2:
            return schema
        choices = [c[0] if isinstance(c, tuple) else c for c in schema["choices"]]
        models = [self._set.resolve(c).get("cls") for c in choices]
        if models.count(task_result) != 1 or None in models:
            return schema
        if models[0] is not task_result:
            choices, models = choices[::-1], models[::-1]
        tags = [cls.__name__ for cls in models]  # (a failure's location names its model, as before)

        def task_or_result(value: Any) -> str:
            return tags[0] if type(value) is dict and "task" in value else tags[1]

        return cs.tagged_union_schema(
            dict(zip(tags, choices, strict=True)), discriminator=task_or_result
        )

    def _changed(self, schema: Schema, changes: Mapping[str, Any]) -> Schema:
        """A result schema with `changes` made to its models (each branch of a union)."""
        schema = self._set.resolve(schema)
        if schema["type"] == "model":
            return self._set.with_fields(schema, changes)
        if schema["type"] == "union":
            choices = [
                (
                    (self._changed(c[0], changes), c[1])
                    if isinstance(c, tuple)
                    else self._changed(c, changes)
                )
                for c in schema["choices"]
            ]
            return {**schema, "choices": choices}
        if schema["type"] == "tagged-union":  # by a member of the result (an extension's status)
            tagged = {t: self._changed(c, changes) for t, c in schema["choices"].items()}
            return {**schema, "choices": tagged}
        return schema


def _by_result_type(schema: Schema) -> bool:
    """A union tagged by `resultType` (its discriminator is a function of the value: the
    generated codecs' `result_discriminator`), not by a plain member such as `status`."""
    if schema["type"] != "tagged-union":
        return False
    discriminator = schema.get("discriminator")
    return callable(discriminator) or discriminator == "resultType"
