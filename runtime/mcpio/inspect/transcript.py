"""What the inspector keeps of a session: every frame with its time, direction and findings
(`Entry`), written as it happens to the findings log and, with `--jsonl`, to a transcript (one
JSON object per line), and the summary table printed when the session ends."""

from __future__ import annotations

import base64
import json
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from mcpio.inspect.rules import RULES, Direction, Finding

# A frame larger than this is kept in the transcript cut short (`truncated` says so).
KEEP_BYTES = 1 << 20


@dataclass
class Entry:
    index: int
    time: float  # seconds since the epoch
    direction: Direction
    size: int
    frame: bytes  # at most KEEP_BYTES of it
    findings: list[Finding] = field(default_factory=lambda: [])
    session: str | None = None  # HTTP: the legacy session id, or None
    http: dict[str, Any] | None = None  # HTTP: method, status, content type of the exchange

    @property
    def truncated(self) -> bool:
        return self.size > len(self.frame)

    def summary(self) -> dict[str, Any]:
        """method and id, read leniently (for the report and the summary)."""
        try:
            obj = json.loads(self.frame)
        except ValueError:
            return {}
        if type(obj) is not dict:
            return {"batch": len(obj)} if type(obj) is list else {}
        return {k: obj[k] for k in ("method", "id") if k in obj}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": self.index,
            "time": self.time,
            "direction": self.direction,
            "size": self.size,
        }
        try:
            out["frame"] = self.frame.decode("utf-8")
        except UnicodeDecodeError:
            out["frame_base64"] = base64.b64encode(self.frame).decode("ascii")
        if self.truncated:
            out["truncated"] = True
        if self.session is not None:
            out["session"] = self.session
        if self.http is not None:
            out["http"] = self.http
        out["findings"] = [f.to_json() for f in self.findings]
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Entry:
        if "frame_base64" in obj:
            frame = base64.b64decode(obj["frame_base64"])
        else:
            frame = str(obj.get("frame", "")).encode("utf-8")
        findings = [_finding(f) for f in obj.get("findings", []) if f.get("rule") in RULES]
        return cls(
            int(obj["index"]),
            float(obj["time"]),
            obj["direction"],
            int(obj.get("size", len(frame))),
            frame,
            findings,
            obj.get("session"),
            obj.get("http"),
        )


def excerpt(raw: bytes, size: int, limit: int = 200) -> str:
    """The beginning of a frame, on one line, for the findings log."""
    text = raw[:limit].decode("utf-8", "replace").replace("\n", " ").replace("\r", " ")
    return text + (f"... ({size} bytes)" if size > limit else "")


def _finding(obj: dict[str, Any]) -> Finding:
    return Finding(obj["rule"], obj["direction"], obj["path"], obj["message"], obj.get("frame", -1))


def read_transcript(path: Path) -> list[Entry]:
    """The entries of a `--jsonl` transcript (the findings of its closing `{"end": ...}` line
    on the frames they name); ValueError naming the line that is not one."""
    entries: list[Entry] = []
    with path.open(encoding="utf-8") as file:
        for number, line in enumerate(file, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                if "end" in obj:
                    for finding in map(_finding, obj["findings"]):
                        if finding.rule in RULES and 0 <= finding.frame < len(entries):
                            entries[finding.frame].findings.append(finding)
                    continue
                entries.append(Entry.from_json(obj))
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise ValueError(f"{path}:{number}: not a transcript entry ({exc})") from None
    return entries


class Recorder:
    """Numbers frames, writes each finding to `log` as it happens and each entry to the
    transcript, and keeps the entries for the summary and the report."""

    def __init__(self, log: IO[str], jsonl: IO[str] | None = None) -> None:
        self.log = log
        self.jsonl = jsonl
        self.entries: list[Entry] = []

    def record(
        self,
        direction: Direction,
        raw: bytes,
        findings: Iterable[Finding],
        *,
        session: str | None = None,
        http: dict[str, Any] | None = None,
        size: int | None = None,
    ) -> Entry:
        """`size`: the frame's full size, when `raw` is only its beginning."""
        index = len(self.entries)
        numbered = [replace(f, frame=index) for f in findings]
        size = len(raw) if size is None else size
        entry = Entry(
            index, time.time(), direction, size, raw[:KEEP_BYTES], numbered, session, http
        )
        self.entries.append(entry)
        for finding in numbered:
            self.log.write(finding.line() + "\n")
        if numbered:
            self.log.write(f"    frame #{index}: {excerpt(raw, size)}\n")
            self.log.flush()
        if self.jsonl is not None:
            self.jsonl.write(json.dumps(entry.to_json()) + "\n")
            self.jsonl.flush()
        return entry

    def finish(self, findings: Iterable[Finding]) -> None:
        """What the session's end shows (unanswered requests): each finding on the frame it
        names, written to the log and, as a closing `{"end": ...}` line, to the transcript."""
        found = [f for f in findings if 0 <= f.frame < len(self.entries)]
        for finding in found:
            self.entries[finding.frame].findings.append(finding)
            self.log.write(finding.line() + "\n")
        self.log.flush()
        if self.jsonl is not None and found:
            self.jsonl.write(json.dumps({"end": True, "findings": [f.to_json() for f in found]}))
            self.jsonl.write("\n")
            self.jsonl.flush()

    def findings(self) -> list[Finding]:
        return [f for entry in self.entries for f in entry.findings]

    def summary(self) -> str:
        return summary_table(self.entries)


def summary_table(entries: list[Entry]) -> str:
    """The table printed when a session ends: frames per direction, errors, warnings and
    unanswered requests (all, then per HTTP session when there are several), findings per
    rule."""
    directions = Counter(e.direction for e in entries)
    findings = [f for e in entries for f in e.findings]
    counts = Counter(f.rule for f in findings)
    first = {}
    for f in reversed(findings):
        first[f.rule] = f.frame
    lines = [
        f"mcpio inspect: {len(entries)} frames "
        f"({directions['client->server']} client->server, "
        f"{directions['server->client']} server->client), {_tally(findings)}",
    ]
    sessions = sorted({e.session for e in entries if e.session is not None})
    if sessions:
        for session in [*sessions, None]:
            of = [f for e in entries if e.session == session for f in e.findings]
            name = "no session (2026-07-28 exchanges)" if session is None else session
            lines.append(f"  session {name}: {_tally(of)}")
    if counts:
        width = max(len(rule) for rule in counts)
        lines.append(f"  {'severity':<8}  {'rule':<{width}}  {'count':>5}  first  spec")
        for rule, count in sorted(counts.items(), key=lambda kv: (RULES[kv[0]].severity, kv[0])):
            r = RULES[rule]
            lines.append(
                f"  {r.severity:<8}  {rule:<{width}}  {count:>5}  #{first[rule]:<4}  {r.spec}"
            )
    return "\n".join(lines) + "\n"


def _tally(findings: list[Finding]) -> str:
    errors = sum(1 for f in findings if f.severity == "error")
    unanswered = sum(1 for f in findings if f.rule == "request.unanswered")
    warnings = len(findings) - errors
    return f"{errors} errors, {warnings} warnings, {unanswered} unanswered requests (errors)"
