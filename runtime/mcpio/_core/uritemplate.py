"""Matching a URI against an RFC 6570 URI template (up to level 4): which values of the template's
variables expand to it. A resource template's handler receives them.

Every operator is read: `{x}`, `{+x}`, `{#x}`, `{.x}`, `{/x}`, `{;x}`, `{?x,y}`, `{&x}`, with
the explode (`{/segments*}`) and prefix (`{x:3}`) modifiers. A value is percent-decoded; an
exploded variable's value is the list of its items, as is a comma-separated value of a variable
the caller says is a list. Query variables (`?`, `&`) match in any order, each optional; a name
the template does not give makes the URI not match. Any other expression is required unless
each of its variables is optional (`optional`: a parameter with a default).

Matching is the inverse of expansion only where expansion is unambiguous: a simple `{x}` takes
no `/`, `?` or `#` (a reserved `{+x}` takes them), a `{.x}` takes no `.`, and within one
expression of several variables no value takes a `,`.

FastMCP's `{x*}` (not RFC 6570's) is a path of several segments: with `wildcard`, a simple
exploded variable that is not a list takes one string, `/` and all (no `?` nor `#`), as FastMCP
reads `docs://{path*}`; a list variable's `{x*}` stays RFC 6570's comma-separated items.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from urllib.parse import unquote

Value = str | list[str]

_EXPRESSION = re.compile(r"\{([^{}]*)\}")
_VARSPEC = re.compile(r"([A-Za-z0-9_]+)(?::([1-9][0-9]{0,3})|(\*))?")
_OPERATORS = "+#./;?&"
# operator -> (what the expansion starts with, what separates its values)
_JOINS = {
    "": ("", ","),
    "+": ("", ","),
    "#": ("#", ","),
    ".": (".", "."),
    "/": ("/", "/"),
    ";": (";", ";"),
    "?": ("?", "&"),
    "&": ("&", "&"),
}
_QUERY = frozenset("?&")


@dataclass(frozen=True)
class Variable:
    name: str
    operator: str
    explode: bool
    prefix: int | None
    wildcard: bool = False  # FastMCP's `{x*}`: one string of several segments


def is_template(uri: str) -> bool:
    """Whether `uri` holds a `{...}` expression (a template, not one resource's URI)."""
    return _EXPRESSION.search(uri) is not None


class UriTemplate:
    """A compiled URI template: `match(uri)` gives its variables' values, or None."""

    def __init__(
        self,
        template: str,
        optional: Collection[str] = (),
        lists: Collection[str] = (),
        wildcard: bool = False,
    ) -> None:
        """`optional`: variables that may be absent; `lists`: variables whose comma-separated
        value is a list; `wildcard`: a simple `{x*}` not in `lists` is FastMCP's path of
        several segments. `ValueError` for a template that is not RFC 6570."""
        self.template = template
        self.variables: dict[str, Variable] = {}
        self._queries: set[str] = set()  # the regex groups holding a query part
        self._lists = frozenset(lists)
        self._wildcard = wildcard
        regex: list[str] = []
        end = 0
        for found in _EXPRESSION.finditer(template):
            literal = template[end : found.start()]
            if "{" in literal or "}" in literal:
                raise ValueError(f"URI template {template!r}: unbalanced brace")
            regex.append(re.escape(literal))
            regex.append(self._expression(found.group(1), frozenset(optional)))
            end = found.end()
        tail = template[end:]
        if "{" in tail or "}" in tail:
            raise ValueError(f"URI template {template!r}: unbalanced brace")
        regex.append(re.escape(tail))
        self._regex = re.compile("".join(regex))

    def _expression(self, body: str, optional: frozenset[str]) -> str:
        operator = body[:1] if body[:1] in _OPERATORS else ""
        specs = body[len(operator) :].split(",")
        variables: list[Variable] = []
        for spec in specs:
            parsed = _VARSPEC.fullmatch(spec)
            if parsed is None:
                raise ValueError(f"URI template {self.template!r}: bad variable {spec!r}")
            name, prefix, explode = parsed.groups()
            if name in self.variables or name.startswith("__"):
                raise ValueError(f"URI template {self.template!r}: {name} appears twice")
            size = int(prefix) if prefix else None
            wildcard = bool(self._wildcard and explode and not operator) and name not in self._lists
            variable = Variable(name, operator, explode is not None, size, wildcard)
            self.variables[name] = variable
            variables.append(variable)
        if operator in _QUERY:  # the whole query part, read by name (`_query`)
            group = f"__{len(self._queries)}"
            self._queries.add(group)
            return f"(?:\\{operator}(?P<{group}>[^#]*))?"
        first, sep = _JOINS[operator]
        several = len(variables) > 1
        pieces = [self._piece(v, sep, several) for v in variables]
        expression = re.escape(first) + re.escape(sep).join(pieces)
        if all(v.name in optional for v in variables):
            return f"(?:{expression})?"
        return expression

    @staticmethod
    def _piece(variable: Variable, sep: str, several: bool) -> str:
        operator = variable.operator
        if variable.wildcard:
            return f"(?P<{variable.name}>[^?#]+)"
        if operator in ("+", "#"):
            char = "[^,]" if several else "."
        else:
            extra = re.escape(sep) if operator else ""  # the simple `{x}`'s "," is a list's
            char = "[^/?#" + extra + (",]" if several else "]")
        if variable.prefix is not None:
            value = f"{char}{{1,{variable.prefix}}}"
        else:
            value = f"{char}+?" if operator in ("+", "#") else f"{char}+"
        if operator == ";":  # a named value: `;x=1` (`;x` when empty)
            value = f"{variable.name}(?:={value}|)"
        if variable.explode:
            value = f"{value}(?:{re.escape(sep)}{value})*"
        return f"(?P<{variable.name}>{value})"

    def match(self, uri: str) -> dict[str, Value] | None:
        """The values of the variables `uri` gives (absent ones left out), or None."""
        found = self._regex.fullmatch(uri)
        if found is None:
            return None
        values: dict[str, Value] = {}
        for name, raw in found.groupdict().items():
            if raw is None:
                continue
            if name in self._queries:
                query = self._query(raw)
                if query is None:
                    return None
                values.update(query)
            else:
                values[name] = self._value(self.variables[name], raw)
        return values

    def _value(self, variable: Variable, raw: str) -> Value:
        if variable.operator == ";":
            items = [item.partition("=")[2] for item in raw.split(";")]
            return (
                [unquote(i) for i in items]
                if variable.explode
                else self._listed(variable, items[0])
            )
        if variable.explode and not variable.wildcard:
            return [unquote(item) for item in raw.split(_JOINS[variable.operator][1])]
        return self._listed(variable, raw)

    def _listed(self, variable: Variable, raw: str) -> Value:
        if variable.name in self._lists:
            return [unquote(item) for item in raw.split(",")]
        return unquote(raw)

    def _query(self, raw: str) -> dict[str, Value] | None:
        """The query's `name=value` pairs, by name: None when it names a variable the template
        does not give in a query expression, or repeats one that is not exploded."""
        values: dict[str, Value] = {}
        for pair in raw.split("&") if raw else ():
            name, _, value = pair.partition("=")
            variable = self.variables.get(unquote(name))
            if variable is None or variable.operator not in _QUERY:
                return None
            if variable.explode:
                listed = values.setdefault(variable.name, [])
                assert isinstance(listed, list)
                listed.append(unquote(value))
            elif variable.name in values:
                return None
            else:
                values[variable.name] = self._listed(variable, value)
        return values
