"""Release hygiene: SECURITY.md says how to report a vulnerability (privately, through GitHub's
private vulnerability reporting) and which versions get fixes (the latest release); the docs
site shows it (a page of its Policies section including the file, not a copy) and names where
it is published (`site_url`)."""

from __future__ import annotations

import re

import yaml

from tests.support import ROOT


def test_security_md_says_how_to_report_and_what_is_supported() -> None:
    text = " ".join((ROOT / "SECURITY.md").read_text(encoding="utf-8").split())
    assert "privately, to the maintainers" in text
    assert "GitHub's private vulnerability reporting of this repository" in text
    assert "**Security** tab and choose **Report a vulnerability**" in text
    assert "Do not open a public issue" in text
    assert "Security fixes go into the **latest release** only" in text


def test_the_docs_site_shows_it_and_names_its_address() -> None:
    page = (ROOT / "docs" / "policies" / "security.md").read_text(encoding="utf-8")
    assert re.search(r'^--8<-- "SECURITY\.md(:\d+:)?"$', page, re.M), page
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    policies = next(entry["Policies"] for entry in config["nav"] if "Policies" in entry)
    assert "policies/security.md" in policies
    assert re.fullmatch(r"https://[a-z0-9.-]+/", config["site_url"]), config["site_url"]
    triage = (ROOT / "docs" / "policies" / "triage.md").read_text(encoding="utf-8")
    assert "[security policy](security.md)" in triage
