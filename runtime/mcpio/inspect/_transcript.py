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

from mcpio.inspect._escape import printable
from mcpio.inspect._rules import RULES, Direction, Finding

# A frame larger than this is kept in the transcript cut short (`truncated` says so).
KEEP_BYTES = 1 << 20
# Frames kept for the report (`--max-frames`), and the bytes they may hold in all.
MAX_FRAMES = 10_000
MAX_KEPT_BYTES = 64 << 20


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
        """Whether the frame was cut to the transcript's size limit."""
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
        """The entry as one transcript line's JSON data."""
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
        """An entry read back from a transcript line's JSON data."""
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
    """The beginning of a frame, on one line, for the findings log (escaped: `printable`)."""
    text = raw[:limit].decode("utf-8", "replace").replace("\n", " ").replace("\r", " ")
    return printable(text) + (f"... ({size} bytes)" if size > limit else "")


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
    transcript, and keeps the entries for the report: the latest `max_frames` at most, and no
    more than `max_kept_bytes` of frame bytes (the oldest go first); the summary counts every
    frame (`tally`)."""

    def __init__(
        self,
        log: IO[str],
        jsonl: IO[str] | None = None,
        *,
        max_frames: int = MAX_FRAMES,
        max_kept_bytes: int = MAX_KEPT_BYTES,
    ) -> None:
        self.log = log
        self.jsonl = jsonl
        self.entries: list[Entry] = []  # the latest frames (`count - len(entries)` dropped)
        self.count = 0  # frames numbered so far: the next frame's index
        self.tally = Tally()
        self.max_frames = max(1, max_frames)
        self.max_kept_bytes = max_kept_bytes
        self._kept_bytes = 0

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
        index = self.count
        self.count += 1
        numbered = [replace(f, frame=index) for f in findings]
        size = len(raw) if size is None else size
        entry = Entry(
            index, time.time(), direction, size, raw[:KEEP_BYTES], numbered, session, http
        )
        self._keep(entry)
        self.tally.frame(direction, session)
        self.tally.found(numbered, session)
        for finding in numbered:
            self.log.write(printable(finding.line()) + "\n")
        if numbered:
            self.log.write(f"    frame #{index}: {excerpt(raw, size)}\n")
            self.log.flush()
        if self.jsonl is not None:
            self.jsonl.write(json.dumps(entry.to_json()) + "\n")
            self.jsonl.flush()
        return entry

    def _keep(self, entry: Entry) -> None:
        self.entries.append(entry)
        self._kept_bytes += len(entry.frame)
        while len(self.entries) > 1 and (
            len(self.entries) > self.max_frames or self._kept_bytes > self.max_kept_bytes
        ):
            self._kept_bytes -= len(self.entries.pop(0).frame)

    def entry(self, index: int) -> Entry | None:
        """The frame numbered `index`, if it is still kept."""
        at = index - (self.count - len(self.entries))
        return self.entries[at] if 0 <= at < len(self.entries) else None

    def finish(self, findings: Iterable[Finding]) -> None:
        """What the session's end shows (unanswered requests): each finding on the frame it
        names, written to the log and, as a closing `{"end": ...}` line, to the transcript."""
        found = [f for f in findings if 0 <= f.frame < self.count]
        for finding in found:
            entry = self.entry(finding.frame)
            if entry is not None:
                entry.findings.append(finding)
            self.tally.found([finding], entry.session if entry is not None else None)
            self.log.write(printable(finding.line()) + "\n")
        self.log.flush()
        if self.jsonl is not None and found:
            self.jsonl.write(json.dumps({"end": True, "findings": [f.to_json() for f in found]}))
            self.jsonl.write("\n")
            self.jsonl.flush()

    def findings(self) -> list[Finding]:
        """The findings on the frames still kept."""
        return [f for entry in self.entries for f in entry.findings]

    def summary(self) -> str:
        """The summary table of everything recorded so far."""
        return self.tally.table()


class Tally:
    """What the summary table counts, frame by frame: frames per direction, findings per rule
    (and the first frame of each), and per HTTP session the errors, warnings and unanswered
    requests."""

    def __init__(self) -> None:
        self.directions: Counter[str] = Counter()
        self.rules: Counter[str] = Counter()
        self.first: dict[str, int] = {}
        self.sessions: dict[str | None, Counter[str]] = {}

    @classmethod
    def of(cls, entries: Iterable[Entry]) -> Tally:
        """The tally of a list of entries."""
        tally = cls()
        for entry in entries:
            tally.frame(entry.direction, entry.session)
            tally.found(entry.findings, entry.session)
        return tally

    def frame(self, direction: Direction, session: str | None) -> None:
        """Count one frame sent in `direction` (in HTTP `session`)."""
        self.directions[direction] += 1
        self.sessions.setdefault(session, Counter())

    def found(self, findings: Iterable[Finding], session: str | None) -> None:
        """Count a frame's findings (in HTTP `session`)."""
        kinds = self.sessions.setdefault(session, Counter())
        for f in findings:
            self.rules[f.rule] += 1
            self.first[f.rule] = min(self.first.get(f.rule, f.frame), f.frame)
            kinds[f.severity] += 1
            kinds["unanswered"] += f.rule == "request.unanswered"

    def table(self) -> str:
        """The table printed when a session ends: frames per direction, errors, warnings and
        unanswered requests (all, then per HTTP session when there are several), findings per
        rule."""
        total = sum(self.directions.values())
        every = sum(self.sessions.values(), Counter[str]())
        lines = [
            f"mcpio inspect: {total} frames "
            f"({self.directions['client->server']} client->server, "
            f"{self.directions['server->client']} server->client), {_tally(every)}",
        ]
        named = sorted(s for s in self.sessions if s is not None)
        if named:
            for session in [*named, None]:
                text = "no session (2026-07-28 exchanges)" if session is None else session
                kinds = self.sessions.get(session, Counter[str]())
                lines.append(f"  session {printable(text)}: {_tally(kinds)}")
        if self.rules:
            width = max(len(rule) for rule in self.rules)
            lines.append(f"  {'severity':<8}  {'rule':<{width}}  {'count':>5}  first  spec")
            ordered = sorted(self.rules.items(), key=lambda kv: (RULES[kv[0]].severity, kv[0]))
            for rule, count in ordered:
                r, first = RULES[rule], self.first[rule]
                lines.append(
                    f"  {r.severity:<8}  {rule:<{width}}  {count:>5}  #{first:<4}  {r.spec}"
                )
        return "\n".join(lines) + "\n"


def summary_table(entries: list[Entry]) -> str:
    """The summary table of these entries (`Tally.table`)."""
    return Tally.of(entries).table()


def _tally(kinds: Counter[str]) -> str:
    errors, warnings, unanswered = kinds["error"], kinds["warning"], kinds["unanswered"]
    return f"{errors} errors, {warnings} warnings, {unanswered} unanswered requests (errors)"
