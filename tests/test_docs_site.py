"""The documentation site: `mkdocs build --strict` passes (broken links, missing references and
warnings fail it), and the built site works in a real browser.

Headless Chromium (tests/support/browser.py) loads every page of the site from a static server on
127.0.0.1: no page logs a console error (a script exception, `console.error`, a resource that
failed to load), every internal link leads to a page of the site or a file it has, and every
anchor to an element of its page. The search, used as a reader would, finds the tools page for
"tool". Screenshots of the home page and of a reference page are saved (the path is printed)
and checked to be a themed page: Material's indigo header across the top, and more than a few
colours below it.
"""

from __future__ import annotations

import asyncio
import html
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urldefrag, urlparse

import aiohttp
import pytest

from tests.support import ROOT
from tests.support.browser import Tab, chromium, png_pixels, static_server

INDIGO = (64, 81, 181)  # #4051b5, Material's `primary: indigo` header (mkdocs.yml)
SHOTS = ROOT / "build" / "docs-screenshots"
DOCS = ROOT / "docs"
LINKS = "JSON.stringify([...document.querySelectorAll('a[href]')].map(a => a.href))"
IDS = "JSON.stringify([...document.querySelectorAll('[id]')].map(e => e.id))"
HEADER = "getComputedStyle(document.querySelector('.md-header')).backgroundColor"
# A page the checks must fault (not part of the site: written beside it before serving).
BROKEN = "selftest-broken.html"
BROKEN_PAGE = (
    '<html><body><a href="servers/tools/#no-such-anchor">a</a><a href="no-such-page/">b</a>'
    "<script>undefinedFunction()</script></body></html>"
)
HITS = "JSON.stringify([...document.querySelectorAll('.md-search-result__link')].map(a => a.href))"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("docs") / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    mkdocs = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(where)]
    done = subprocess.run(
        mkdocs, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return where


def pages(site: Path) -> list[str]:
    """The site's pages as URL paths (`servers/tools/`), the 404 page left out."""
    found = [p.parent.relative_to(site).as_posix() for p in site.rglob("index.html")]
    return sorted("" if f == "." else f + "/" for f in found)


@pytest.mark.slow
def test_the_site_builds_strictly_with_every_section(site: Path) -> None:
    built = pages(site)
    for section in ("getting-started", "servers", "clients", "generated", "maintainers"):
        assert any(p.startswith(section + "/") for p in built), section
    for page in ("", "inspector/", "benchmarks/", "changelog/", "reference/mcpio/"):
        assert page in built
    for policy in ("versioning", "python-and-dependencies", "roadmap", "triage"):
        assert f"policies/{policy}/" in built
    changelog = (site / "changelog" / "index.html").read_text(encoding="utf-8")
    headings = [
        line[4:] for line in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("### ")
    ]  # fmt: skip
    assert len(headings) > 10
    missing = [h for h in headings if html.escape(h, quote=False).split(" (")[0] not in changelog]
    assert missing == []  # the whole file, included from CHANGELOG.md (not a copy)


async def crawl(tab: Tab, base: str, paths: list[str]) -> dict[str, Any]:
    """Every page loaded: its console errors, links and element ids, by URL path."""
    seen: dict[str, Any] = {}
    for path in paths:
        await tab.load(base + path)
        links, ids = json.loads(await tab.eval(LINKS)), set(json.loads(await tab.eval(IDS)))
        seen[path] = {"errors": list(tab.errors), "links": links, "ids": ids}
    return seen


def broken_links(site: Path, base: str, seen: dict[str, Any]) -> list[str]:
    broken = []
    for page, facts in seen.items():
        for link in facts["links"]:
            if not link.startswith(base):
                continue  # another site (the changelog's references, ...)
            url, fragment = urldefrag(link)
            path = unquote(urlparse(url).path).lstrip("/")
            target = site / path / "index.html" if path == "" or path.endswith("/") else site / path
            if not target.is_file():
                broken.append(f"{page or '/'} -> {link}: no such page")
            elif fragment and path in seen and unquote(fragment) not in seen[path]["ids"]:
                broken.append(f"{page or '/'} -> {link}: no such anchor")
    return broken


async def search(tab: Tab, base: str, words: str) -> list[str]:
    """The result links the search box shows for `words`, typed into it on the home page."""
    await tab.load(base)
    await tab.eval("document.querySelector('.md-search__input').focus()")
    await tab.send("Input.insertText", text=words)
    for _ in range(100):  # the index loads in a web worker: results come a little later
        hits: list[str] = json.loads(await tab.eval(HITS))
        if hits:
            return hits
        await asyncio.sleep(0.1)
    return []


async def screenshot(tab: Tab, base: str, path: str, name: str) -> tuple[Path, str]:
    """A screenshot of the page at `path`, saved as SHOTS/name; and its header's colour."""
    await tab.load(base + path, settle=0.5)
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / name).write_bytes(await tab.screenshot())
    return SHOTS / name, await tab.eval(HEADER)


async def drive(devtools: str, base: str, paths: list[str]) -> dict[str, Any]:
    async with aiohttp.ClientSession() as http, http.ws_connect(devtools, max_msg_size=0) as ws:
        tab = Tab(ws)
        await tab.open()
        return {
            "seen": await crawl(tab, base, paths),
            "broken": await crawl(tab, base, [BROKEN]),
            "hits": await search(tab, base, "tool"),
            "shots": [
                await screenshot(tab, base, "", "home.png"),
                await screenshot(tab, base, "reference/mcpio-server/", "reference.png"),
            ],
        }


def assert_themed(png: Path) -> None:
    """Material's header colour across the top, and a page (text, code) below it."""
    width, height, rows = png_pixels(png.read_bytes())
    channels = len(rows[0]) // width
    top = rows[10][(width // 2) * channels : (width // 2) * channels + 3]
    assert all(
        abs(a - b) <= 6 for a, b in zip(top, INDIGO, strict=True)
    ), f"{png}: header {tuple(top)}"
    below = {row[x : x + 3] for row in rows[100:height:7] for x in range(0, len(row), channels * 5)}
    assert len(below) > 20, f"{png}: {len(below)} colours below the header (a blank page?)"


@pytest.mark.services
def test_every_page_works_in_headless_chromium(site: Path, tmp_path: Path) -> None:
    paths = pages(site)
    (site / BROKEN).write_text(BROKEN_PAGE, encoding="utf-8")
    with static_server(site) as base, chromium(tmp_path / "profile") as devtools:
        facts = asyncio.run(drive(devtools, base, paths))
    # The checks themselves: the broken page's script error and both its links are caught.
    assert facts["broken"][BROKEN]["errors"] != []
    assert len(broken_links(site, base, {**facts["broken"], **facts["seen"]})) == 2
    seen = facts["seen"]
    assert len(seen) >= 40
    assert {page: f["errors"] for page, f in seen.items() if f["errors"]} == {}
    assert broken_links(site, base, seen) == []
    assert any(urlparse(hit).path == "/servers/tools/" for hit in facts["hits"]), facts["hits"]
    for png, header in facts["shots"]:
        print(f"screenshot: {png}")
        assert header == "rgb({}, {}, {})".format(*INDIGO), header
        assert_themed(png)


def test_every_public_module_is_in_the_reference() -> None:
    """Each public module of `mcpio` (and `mcp_wire`) is rendered on a reference page (a
    `::: module` line under docs/reference/): a new module needs its line there."""
    from tests.support.surface import api_surface

    rendered = set()
    for page in (ROOT / "docs" / "reference").glob("*.md"):
        rendered |= set(re.findall(r"^::: (\S+)$", page.read_text(encoding="utf-8"), re.MULTILINE))
    assert set(api_surface().public_modules()) - rendered == set()


def test_the_readme_links_to_pages_that_exist() -> None:
    """The README's links into the documentation (and to the policies) lead to files there."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#\s]+)\)", readme)
    local = [link for link in links if "://" not in link]
    assert len(local) >= 30
    assert [link for link in local if not (ROOT / link).exists()] == []
    for policy in ("versioning", "python-and-dependencies", "roadmap", "triage"):
        assert f"docs/policies/{policy}.md" in local
    assert "SECURITY.md" in local  # how to report a vulnerability


FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
INCLUDE = re.compile(r'--8<-- "examples/([^":]+)(?::([\w-]+))?"\n')


def test_every_python_block_of_a_feature_page_is_run_or_compiled() -> None:
    """Each Python block of the server and client pages is a part of an example file (which
    tests/test_examples.py runs, its output checked: a whole file, or a `--8<--` section of one
    that is there) or, written on the page, compiles (top-level `await` allowed)."""
    import ast

    included, inline = 0, Counter[str]()
    for page in sorted([*DOCS.glob("servers/*.md"), *DOCS.glob("clients/*.md")]):
        for block in FENCE.findall(page.read_text(encoding="utf-8")):
            found = INCLUDE.fullmatch(block)
            if found is None:
                compile(block, str(page), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
                inline[page.name] += 1
                continue
            name, section = found.groups()
            source = (ROOT / "examples" / name).read_text(encoding="utf-8")
            if section is not None:
                assert f"# --8<-- [start:{section}]" in source, f"{page.name}: {name}:{section}"
                assert f"# --8<-- [end:{section}]" in source, f"{page.name}: {name}:{section}"
            included += 1
    assert included >= 160  # issue 51: a snippet for each option of the server and client pages
    # fragments written on the page: the OAuth proxy's MultiAuth line; a sample of the module
    # `mcp-codegen openapi` writes
    assert inline == {"oauth-proxy.md": 1, "openapi.md": 1}
