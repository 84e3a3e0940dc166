"""`--report FILE.html`: one static HTML file (no external resources) with the session's
timeline, each frame with its direction, time, method and id, findings marked; filters by method
and by severity run in the page's own small script."""

from __future__ import annotations

import html
import json
from datetime import UTC, datetime
from pathlib import Path

from mcpio.inspect._escape import printable
from mcpio.inspect._transcript import Entry, summary_table

SHOWN_BYTES = 4096  # of each frame, in the page

STYLE = """
body{font:14px system-ui,sans-serif;margin:1em;color:#222}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:4px;
vertical-align:top;text-align:left}pre{margin:0;white-space:pre-wrap;word-break:break-all;
font-size:12px;max-height:12em;overflow:auto}.error{background:#fde2e2}.warning{background:#fff4d6}
.finding{font-weight:600}.c2s td.dir{color:#05a}.s2c td.dir{color:#070}#summary{white-space:pre}
"""

SCRIPT = """
function applyFilters(){
  var m=document.getElementById('method').value, s=document.getElementById('severity').value;
  var shown=0;
  document.querySelectorAll('tr.frame').forEach(function(row){
    var ok=(!m||row.dataset.method===m)&&(!s||(s==='any'?row.dataset.severity!=='':row.dataset.severity.split(' ').indexOf(s)>=0));
    row.style.display=ok?'':'none'; if(ok){shown++;}
  });
  document.getElementById('shown').textContent=shown;
}
document.getElementById('method').addEventListener('change',applyFilters);
document.getElementById('severity').addEventListener('change',applyFilters);
applyFilters();
"""


def methods_of(entries: list[Entry]) -> list[str]:
    """Each frame's method for the filter: a response's is the method of the request it
    answers (same id, other direction, same session), so request and answer filter together."""
    asked: dict[tuple[str | None, str, str], str] = {}
    out: list[str] = []
    for entry in entries:
        info = entry.summary()
        key = (entry.session, entry.direction, json.dumps(info.get("id")))
        method = info.get("method")
        if type(method) is str:
            if "id" in info:
                asked[key] = method
            out.append(method)
            continue
        sender = "server->client" if entry.direction == "client->server" else "client->server"
        out.append(asked.get((entry.session, sender, key[2]), "") if "id" in info else "")
    return out


def _row(entry: Entry, start: float, method: str) -> str:
    info = entry.summary()
    severities = " ".join(sorted({f.severity for f in entry.findings}))
    worst = "error" if "error" in severities else severities
    text = entry.frame[:SHOWN_BYTES].decode("utf-8", "replace")
    text = "\n".join(printable(line) for line in text.split("\n"))
    if entry.size > SHOWN_BYTES:
        text += f" ... ({entry.size} bytes)"
    findings = "".join(
        f'<div class="finding {html.escape(f.severity)}">[{html.escape(f.severity)}] '
        f"{html.escape(f.rule)} at <code>{html.escape(printable(f.path))}</code>: "
        f"{html.escape(printable(f.message))} <small>(spec: {html.escape(f.spec)})</small></div>"
        for f in entry.findings
    )
    css = "c2s" if entry.direction == "client->server" else "s2c"
    return (
        f'<tr class="frame {css} {worst}" data-method="{html.escape(method)}" '
        f'data-severity="{html.escape(severities)}" id="f{entry.index}">'
        f"<td>#{entry.index}</td><td>+{entry.time - start:.3f}s</td>"
        f'<td class="dir">{html.escape(entry.direction)}</td>'
        f"<td>{html.escape(printable(str(info.get('method', ''))))}</td>"
        f"<td>{html.escape(json.dumps(info.get('id', '')))}</td>"
        f"<td>{findings}<pre>{html.escape(text)}</pre></td></tr>"
    )


def render(entries: list[Entry], summary: str | None = None) -> str:
    """The page of these frames; `summary`: the table of the whole session, when `entries`
    are only its latest frames (`Recorder.max_frames`)."""
    start = entries[0].time if entries else 0.0
    filters = [printable(m) for m in methods_of(entries)]
    methods = sorted({m for m in filters if m})
    options = "".join(
        f'<option value="{html.escape(m)}">{html.escape(m)}</option>' for m in methods
    )
    began = datetime.fromtimestamp(start, UTC).isoformat(timespec="seconds") if entries else "-"
    rows = "\n".join(_row(e, start, m) for e, m in zip(entries, filters, strict=True))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>mcpio inspect report</title>
<style>{STYLE}</style></head><body>
<h1>mcpio inspect report</h1>
<p>Session started {began}; {len(entries)} frames, <span id="shown">{len(entries)}</span> shown.</p>
<pre id="summary">{html.escape(summary or summary_table(entries))}</pre>
<p><label>Method <select id="method"><option value="">all</option>{options}</select></label>
<label>Severity <select id="severity"><option value="">all frames</option>
<option value="any">with findings</option><option value="error">error</option>
<option value="warning">warning</option></select></label></p>
<table><thead><tr><th>#</th><th>time</th><th>direction</th><th>method</th><th>id</th>
<th>findings and frame</th></tr></thead><tbody>
{rows}
</tbody></table>
<script>{SCRIPT}</script>
</body></html>
"""


def write_report(path: Path, entries: list[Entry], summary: str | None = None) -> None:
    """Write the HTML report of `entries` (and the summary table) to `path`."""
    path.write_text(render(entries, summary), encoding="utf-8")
