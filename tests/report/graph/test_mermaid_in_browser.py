"""The Mermaid text as GitHub shows it: parsed and drawn by Mermaid itself in a headless
browser, with Mermaid's strict security. Every golden flow draws without a syntax
error, and hostile labels come out as the text they are: no element, handler or
directive of theirs. Needs Chromium and Mermaid's script (`CATALYST_MERMAID_JS`, the
path of `mermaid.min.js`; .ci/run installs both); skipped, saying which is missing, without."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from catalyst_dsl.report.graph.mermaid import to_mermaid
from catalyst_dsl.report.graph.model import shown
from tests.report.graph.test_escaping import HOSTILE, _graph

TESTS = Path(__file__).parents[2]
BROWSER = next(
    (found for name in ("chromium", "chromium-browser", "google-chrome") if (found := shutil.which(name))), None
)
SCRIPT = os.environ.get("CATALYST_MERMAID_JS", "")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(BROWSER is None, reason="no Chromium on this machine (.ci/run installs it)"),
    pytest.mark.skipif(
        not os.path.isfile(SCRIPT),
        reason="CATALYST_MERMAID_JS names no mermaid.min.js (.ci/run installs Mermaid with npm and sets it)",
    ),
]

PAGE = """<!doctype html><html><body><pre id="results"></pre>
<script src="%s"></script>
<script>
mermaid.initialize({startOnLoad: false, securityLevel: 'strict'});
(async () => {
  const results = {};
  for (const [name, text] of Object.entries(%s)) {
    try {
      const drawn = await mermaid.render('chart' + Object.keys(results).length, text);
      const svg = new DOMParser().parseFromString(drawn.svg, 'image/svg+xml');
      const hostile = svg.querySelectorAll('script, img, iframe, a, [onerror], [onclick], [onload]').length;
      results[name] = {ok: true, hostile: hostile, text: svg.documentElement.textContent};
    } catch (error) {
      results[name] = {ok: false, error: String(error.message || error)};
    }
  }
  document.getElementById('results').textContent = JSON.stringify(results);
})();
</script></body></html>"""


def test_mermaid_draws_every_flow_and_keeps_hostile_labels_text(tmp_path: Path) -> None:
    charts = {
        path.name: path.read_text(encoding="utf-8") for path in sorted((TESTS / "golden" / "graph").glob("*.mmd"))
    }
    charts["hostile"] = to_mermaid(_graph())
    page = tmp_path / "charts.html"
    page.write_text(PAGE % (Path(SCRIPT).as_uri(), json.dumps(charts)), encoding="utf-8")
    done = subprocess.run(
        [
            BROWSER,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--allow-file-access-from-files",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--virtual-time-budget=30000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    found = re.search(r'<pre id="results">(.*?)</pre>', done.stdout, re.DOTALL)
    assert found and found.group(1), done.stdout[-2000:] + done.stderr[-2000:]
    results = json.loads(html.unescape(found.group(1)))
    assert set(results) == set(charts)
    for name, result in results.items():
        assert result["ok"], (name, result.get("error"))
        assert result["hostile"] == 0, name
    text = " ".join(results["hostile"]["text"].split())
    for label in HOSTILE:
        # Mermaid wraps long labels; the words of each, as they were, are all there.
        for word in shown(label).split():
            assert word in text, (label, word)
