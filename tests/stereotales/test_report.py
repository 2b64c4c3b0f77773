from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pandas as pd
import pytest

from stereoprobe.report.html import Section
from stereoprobe.stereotales.mining.tables import association_id
from stereoprobe.stereotales.mining.report import write_associations_report
from stereoprobe.tables import write_table

BASIC = "basic (e.g. less than high school, or high school)"
ROWS = [
    ("income_level", "low income", "education", BASIC),
    ("gender", "non-binary", "professional_field", "arts and creative industries"),
]


def hand_made_outputs(d: Path, with_languages: bool = True) -> None:
    """Tables as `stereoprobe associations` writes them, built by hand (no statistics run)."""
    assoc = []
    for model in ("p1/a", "p2/b"):
        for slc in ("all", "en", "fr"):
            for k, (A, a, B, b) in enumerate(ROWS):
                if model == "p2/b" and k == 1:
                    continue
                assoc.append({"model": model, "slice": slc, "base_attribute": A, "base_value": a,
                              "compared_attribute": B, "compared_value": b, "n": 200, "fraction": 0.6 + 0.1 * k,
                              "lift": 2.5 + k, "lift_ci_low": 2.1, "lift_ci_high": 3.9, "p_by": 1e-5,
                              "cramers_v": 0.4, "effect": "large", "association_id": association_id(A, a, B, b)})
    assoc = pd.DataFrame(assoc)
    write_table(assoc, d, "associations")
    across = pd.DataFrame([{"slice": "all", "base_attribute": A, "base_value": a, "compared_attribute": B,
                            "compared_value": b, "models_count": 2 - k, "models_total": 2, "mean_percentage": 60.0,
                            "mean_lift": 2.5, "association_id": association_id(A, a, B, b)}
                           for k, (A, a, B, b) in enumerate(ROWS)])
    write_table(across, d, "associations_across_models")
    ex = []
    for A, a, B, b in ROWS:
        ex.append({"association_id": association_id(A, a, B, b), "model": "p1/a", "slice": "all", "base_attribute": A,
                   "base_value": a, "compared_attribute": B, "compared_value": b, "language": "en",
                   "sample_id": f"en:{A}:0:g:1", "epoch": 1, "excerpt": f"<script>alert(1)</script> story for {a}"})
    write_table(pd.DataFrame(ex), d, "association_examples")
    dist = pd.DataFrame([{"model": m, "language": "all", "attribute": "gender", "value": v, "count": c,
                          "share": c / 10, "share_known": c / 9} for m in ("p1/a", "p2/b")
                         for v, c in (("man", 4), ("woman", 5), ("unknown", 1))])
    write_table(dist, d, "attribute_distributions")
    write_table(pd.DataFrame([{"model": m, "language": L, "attribute": "gender", "n": 10, "unknown": 1, "other": 0,
                               "unknown_rate": 0.1, "other_rate": 0.0} for m in ("p1/a", "p2/b") for L in ("all", "en")]),
                d, "unknown_rates")
    write_table(pd.DataFrame([{"model": "p1/a", "language": L, "target_attribute": "all", "stories": 10,
                               "refused": 1, "errored": 2, "no_profile": 0, "refusal_rate": 0.1, "error_rate": 2 / 12}
                              for L in ("all", "en", "fr")]),
                d, "refusal_rates")
    if with_languages:
        jac = pd.DataFrame({"language": ["en", "fr"], "en": [1.0, 0.5], "fr": [0.5, 1.0]})
        write_table(jac, d, "language_jaccard")
        write_table(across.drop(columns=["slice"]).assign(languages_count=2, languages="en;fr"), d, "associations_by_language")
    (d / "run_info.json").write_text(json.dumps({"stories": 10, "models": ["p1/a", "p2/b"], "languages": ["en", "fr"],
                                                 "refused": 1, "issues": {"error": 2}, "config": {"min_row_sum": 10},
                                                 "p_methods": {"asymptotic": 3}, "subtitle": "hand-made"}))


def test_report_renders_from_tables_alone(tmp_path: Path) -> None:
    hand_made_outputs(tmp_path)
    path = write_associations_report(tmp_path, extra_sections=[Section("Judge", anchor="judge").text("judge says hi")])
    text = path.read_text()
    assert path == tmp_path / "report.html"
    assert text.count("<img") == 5  # per-model bars, Jaccard heatmap, distributions, refusal and unknown rates
    # every examples link points at an anchor that exists, and the excerpts (model output) are escaped
    targets = set(re.findall(r'href="#(ex-[^"]+)"', text))
    assert targets == {f"ex-{association_id(*r)}" for r in ROWS}
    for t in targets:
        assert f"id='{t}'" in text
    assert re.findall(r'<a href="#ex-[^"]+">([^<]*)</a>', text) and set(re.findall(r'<a href="#ex-[^"]+">([^<]*)</a>', text)) == {"stories"}
    assert "<script>alert(1)" not in text and "&lt;script&gt;alert(1)" in text
    assert text.index('id="judge"') > text.index('id="examples"') and "judge says hi" in text
    assert "hand-made" in text and re.search(r'<table id="[^"]+" class="sortable', text)  # shared report markup
    # every table file is linked from the report (CSV and Parquet)
    assert 'href="associations.csv"' in text and 'href="associations.parquet"' in text


def test_harm_labels_split_the_per_model_plot(tmp_path: Path) -> None:
    hand_made_outputs(tmp_path, with_languages=False)
    A, a, B, b = ROWS[0]
    pd.DataFrame([{"base_attribute": A, "base_value": a, "compared_attribute": B, "compared_value": b,
                   "harmful": True, "source": "human"}]).to_csv(tmp_path / "harm_labels.csv", index=False)
    text = write_associations_report(tmp_path).read_text()
    assert "colour = harm label" in text
    assoc_table = text[text.index('id="associations"'):text.index('id="distributions"')]
    assert ">harmful<" in assoc_table and ">unlabelled<" in assoc_table
    assert 'id="languages"' not in text
    pd.DataFrame([{"base_attribute": A}]).to_csv(tmp_path / "harm_labels.csv", index=False)
    with pytest.raises(ValueError, match="harm_labels.csv: missing column"):
        write_associations_report(tmp_path)


def test_report_needs_the_associations_table(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no associations table"):
        write_associations_report(tmp_path)


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
CHECK_JS = """
<script>
(function(){
  var broken = 0;
  document.querySelectorAll('a[href^="#"]').forEach(function(a){
    if (!document.getElementById(a.getAttribute('href').slice(1))) broken++;
  });
  var t = document.querySelector('#associations table.sortable');
  var col = Array.prototype.findIndex.call(t.tHead.rows[0].cells, function(c){return c.textContent === 'lift';});
  t.tHead.rows[0].cells[col].click(); t.tHead.rows[0].cells[col].click();  // descending
  var lifts = Array.prototype.map.call(t.tBodies[0].rows, function(r){return parseFloat(r.cells[col].textContent);});
  var sorted = lifts.every(function(v, i){return i === 0 || lifts[i-1] >= v;});
  var imgs = Array.prototype.every.call(document.images, function(i){return i.complete && i.naturalWidth > 0;});
  console.log('REPORT-CHECK broken=' + broken + ' sorted=' + sorted + ' images=' + imgs + ' n=' + document.images.length);
})();
</script>
"""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (documented check: docs/stereotales_associations_report.md)")
def test_report_in_headless_chromium(tmp_path: Path) -> None:
    """Open the report in a real browser: no console errors, anchors resolve, sorting works, images decode."""
    hand_made_outputs(tmp_path)
    report = write_associations_report(tmp_path)
    checked = tmp_path / "checked.html"
    checked.write_text(report.read_text().replace("</body>", CHECK_JS + "</body>"))
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
             "--enable-logging=stderr", "--v=0", "--window-size=1280,2000",
             f"--screenshot={tmp_path / 'shot.png'}", checked.as_uri()],
            capture_output=True, text=True, timeout=600,
        )
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    assert any("REPORT-CHECK broken=0 sorted=true images=true" in line for line in console), proc.stderr[-3000:]
    errors = [line for line in console if "REPORT-CHECK" not in line]
    assert errors == []
    assert (tmp_path / "shot.png").stat().st_size > 10_000
