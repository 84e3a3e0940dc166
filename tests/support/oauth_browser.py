"""The browser's part in an OAuth proxy login, for the proxy's tests: follows redirects with a
cookie jar, fills and submits the forms it meets (the proxy's consent page, oidc-provider's
login and consent), and stops at the MCP client's redirect URI, whose URL it returns (the
`redirect` of mcpio's `OAuth`).

It is aiohttp (a dev dependency), which logs no request lines: the log of a test is the
server's and the client's alone."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from html import unescape
from urllib.parse import urljoin

import aiohttp

from tests.support.browser import Tab

_FORM = re.compile(r"<form\b([^>]*)>(.*?)</form>", re.S | re.I)
_ATTR = re.compile(r"""([a-zA-Z_-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_INPUT = re.compile(r"<(?:input|button)\b([^>]*)>", re.I)


def _attrs(text: str) -> dict[str, str]:
    return {
        m[1].lower(): unescape(m[2] if m[2] is not None else m[3]) for m in _ATTR.finditer(text)
    }


def first_form(html: str, base: str) -> tuple[str, dict[str, str]]:
    """The first form of a page: its absolute action and its inputs' names and values (of the
    buttons, the one whose value is "approve", else none)."""
    match = _FORM.search(html)
    if match is None:
        raise AssertionError(f"no form on the page: {html[:300]}")
    action = urljoin(base, _attrs(match[1]).get("action", base))
    fields: dict[str, str] = {}
    for tag in _INPUT.finditer(match[2]):
        attrs = _attrs(tag[1])
        name = attrs.get("name")
        if name is None:
            continue
        if tag[0].lower().startswith("<button") and attrs.get("value") != "approve":
            continue
        fields.setdefault(name, attrs.get("value", ""))
    return action, fields


@dataclass
class Browser:
    """Drives a login until the client's redirect URI (`stop_at`) is reached.

    Args:
        stop_at: The start of the MCP client's redirect URI.
        typed: What the user types into the forms' fields (oidc-provider's `login`, ...).
        decision: The consent page's answer: "approve" or "deny".
    """

    stop_at: str
    typed: Mapping[str, str] = field(default_factory=dict[str, str])
    decision: str = "approve"
    # the URLs of the pages it saw, every URL it was redirected to (codes: not in the repr)
    pages: list[str] = field(default_factory=list[str], repr=False)
    visited: list[str] = field(default_factory=list[str], repr=False)
    jar: aiohttp.CookieJar | None = None  # kept from one login to the next, as a browser's

    async def __call__(self, url: str) -> str:
        if self.jar is None:
            self.jar = aiohttp.CookieJar(unsafe=True)  # 127.0.0.1 is an IP address
        async with aiohttp.ClientSession(cookie_jar=self.jar) as session:
            method, data = "GET", None
            for _ in range(20):
                async with session.request(method, url, data=data, allow_redirects=False) as r:
                    body = await r.text()
                    location = r.headers.get("location")
                if location is not None:
                    url, method, data = urljoin(url, location), "GET", None
                    self.visited.append(url)
                    if url.startswith(self.stop_at):
                        return url
                    continue
                if r.status != 200:
                    raise AssertionError(f"{url}: HTTP {r.status}: {body[:300]}")
                self.pages.append(url)
                url, fields = first_form(body, url)
                fields.update({k: v for k, v in self.typed.items() if k in fields})
                if "decision" in fields:
                    fields["decision"] = self.decision
                method, data = "POST", fields
        raise AssertionError("the login went through more than 20 pages and redirects")


# The page's first form with the typed values filled in, its approving (else first) button
# clicked a moment later.
_FILL_AND_SUBMIT = """(() => {
  const form = document.querySelector("form");
  for (const [name, value] of Object.entries(%s)) {
    const input = form.querySelector(`[name="${name}"]`);
    if (input) input.value = value;
  }
  const button = form.querySelector("#approve") || form.querySelector("button[type=submit]");
  setTimeout(() => button.click(), 0);
  return true;
})()"""


async def chromium_login(tab: Tab, url: str, typed: Mapping[str, str], done: str) -> list[str]:
    """Headless Chromium through a login from `url`: each page's form filled with `typed` and
    submitted, until the page at `done` (the client's redirect URI) is reached; the URLs of
    the pages with a form."""
    await tab.load(url)
    return await chromium_walk(tab, typed, done)


async def chromium_walk(tab: Tab, typed: Mapping[str, str], done: str) -> list[str]:
    """`chromium_login` from the page the tab shows now."""
    pages: list[str] = []
    for _ in range(10):
        href = await tab.eval("location.href")
        if href.startswith(done):
            return pages
        if not await tab.eval("document.querySelector('form') !== null"):
            text = await tab.eval("document.body.innerText")
            raise AssertionError(f"a page without a form: {href}: {text[:300]}")
        pages.append(href)
        await tab.submit(_FILL_AND_SUBMIT % json.dumps(dict(typed)))
    raise AssertionError("the login went through more than 10 pages")
