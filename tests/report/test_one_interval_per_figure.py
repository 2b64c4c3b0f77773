"""One interval per headline figure on every page (issue 42.4): the probe's own table, its report, the
leaderboard's ``metrics.csv``, the results index and the reference's generated docs show the same interval.

Two results folders are built small here, as the project's commands build them:

- demo-shaped: ``stereoprobe dbb`` on a logprob DBB run whose fake model gives every group the same P(A) (so
  no instance is biased: the bootstrap's interval is [0, 0]), ``stereoprobe globalbias`` on a GlobalBias run of
  the fake model, then ``stereoprobe leaderboard`` and ``stereoprobe index``;
- reference-shaped: ``stereoprobe reference`` on the tiny hand-written files in the layout of GlobalBias'
  published outputs (``tests/reference/upstream_fixture.py``).

The count of 0 biased instances must read Garwood's exact interval [0, chi2.ppf(0.975, 2)/2 = 3.689] (scipy)
everywhere, never [0, 0] on one page and [0, 3.7] on another.
"""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval
from scipy.stats import chi2

from stereoprobe.cli import main

sys.path.insert(0, str(Path(__file__).parents[1]))
from fake_model import fake_model  # noqa: E402
from page_tables import assert_tables_scroll  # noqa: E402

pytestmark = pytest.mark.slow  # two small inspect runs and five commands (about a minute of CPU)

GARWOOD_0 = chi2.ppf(0.975, 2) / 2  # upper bound of the exact 95 % interval of a count of 0


def _index_figures(index: Path) -> dict[tuple[str, str], tuple[float, float, float]]:
    """(report folder, "<model>: <figure title>") -> (estimate, low, high) as the index's headline cells show
    them."""
    tables = pd.read_html(io.StringIO(index.read_text(encoding="utf-8")), attrs={"id": "index-reports"})
    found: dict[tuple[str, str], tuple[float, float, float]] = {}
    num = r"(-?[\d.]+)"
    for row in tables[0].itertuples(index=False):
        folder = str(row[0]).rsplit("/", 1)[0]
        for per_model in str(row[2]).split(" | "):
            if ": " not in per_model:
                continue
            model, cells = per_model.split(": ", 1)
            for cell in cells.split("; "):
                m = re.fullmatch(rf"(.+?) {num} \[{num}, {num}\]", cell.strip())
                if m:
                    found[(folder, f"{model}: {m.group(1)}")] = tuple(float(m.group(i)) for i in (2, 3, 4))
    return found


def _titles() -> dict[tuple[str, str], str]:
    from stereoprobe.probes import registered

    return {(b.name, m.name): f"{b.title.split(':')[0].strip()} {m.title}"
            for d in registered() for b in d.boards for m in b.headline}


def _close(a: float, b: float, shown: float = 0.051) -> bool:
    """Equal up to the rounding of the page that shows it (one decimal on the index)."""
    return abs(a - b) <= shown


def _same_on_index(index_figs: dict, folder: str, metrics: pd.DataFrame) -> int:
    """Every leaderboard row the index shows for ``folder`` has its estimate and interval; returns how many."""
    titles, checked = _titles(), 0
    for r in metrics.itertuples(index=False):
        key = (folder, f"{r.model}: {titles.get((r.probe, r.metric), '?')}")
        if key not in index_figs:
            continue
        est, low, high = index_figs[key]
        assert _close(est, r.estimate) and _close(low, r.ci_low) and _close(high, r.ci_high), (
            f"{key}: index {est} [{low}, {high}] vs leaderboard {r.estimate} [{r.ci_low}, {r.ci_high}]")
        checked += 1
    return checked


def _report_rows(report: Path, table_columns: list[str]) -> list[pd.DataFrame]:
    """The report's HTML tables that hold all of ``table_columns``."""
    frames = pd.read_html(io.StringIO(report.read_text(encoding="utf-8")))
    return [f for f in frames if set(table_columns) <= set(map(str, f.columns))]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from stereoprobe.tasks.dbb import dbb
    from stereoprobe.tasks.globalbias import globalbias

    base = tmp_path_factory.mktemp("demo")
    logs, root = base / "logs", base / "results"
    task = dbb(source="bundled", faithful=False, prompt="stereoprobe", categories="ses", limit_templates=2,
               mode="logprob")
    [log] = inspect_eval(task, model=fake_model(p_a=lambda context: 0.7, is_a=lambda option: True, seed=1),
                         log_dir=str(logs / "dbb"), display="none")
    assert log.status == "success"
    gb = globalbias(source="bundled", groups=["CHINESE", "ARAB", "ENGLISH", "HISPANIC"], templates=[1])
    [log] = inspect_eval(gb, model=fake_model(), log_dir=str(logs / "globalbias"), display="none")
    assert log.status == "success"
    assert main(["dbb", str(logs / "dbb"), "--out", str(root / "dbb"), "--quiet"]) == 0
    assert main(["globalbias", str(logs / "globalbias"), "--out", str(root / "globalbias"), "--quiet"]) == 0
    assert main(["leaderboard", str(root / "dbb"), str(root / "globalbias"), "--out", str(root / "leaderboard"),
                 "--quiet"]) == 0
    assert main(["index", str(root)]) == 0
    return root


def test_demo_figures_show_one_interval_on_every_page(demo: Path) -> None:
    metrics = pd.read_csv(demo / "leaderboard" / "metrics.csv")
    index_figs = _index_figures(demo / "index.html")
    # DBB: the ALL row of summary.csv, the leaderboard and the index agree; a count of 0 reads [0, 3.689]
    summary = pd.read_csv(demo / "dbb" / "summary.csv")
    total = summary[summary["category"] == "ALL"].iloc[0]
    assert total["count_s_ge_20"] == 0
    assert (total["count_ci_low"], total["count_ci_high"]) == (0, pytest.approx(GARWOOD_0))
    row = metrics[(metrics["probe"] == "dbb") & (metrics["metric"] == "count_s_ge_20")].iloc[0]
    assert (row["ci_low"], row["ci_high"]) == (0, pytest.approx(GARWOOD_0))
    # the per-category figures are the summary's category totals
    for r in summary[(summary["category"] != "ALL") & (summary["descriptor_type"] == "ALL")].itertuples():
        m = metrics[(metrics["probe"] == "dbb") & (metrics["metric"] == f"count_s_ge_20_{r.category}")].iloc[0]
        assert (m["ci_low"], m["ci_high"]) == (pytest.approx(r.count_ci_low), pytest.approx(r.count_ci_high))
    # the DBB report's summary table shows the same interval (rounded to 2 decimals there)
    shown = [f for f in _report_rows(demo / "dbb" / "report.html", ["count_ci_low", "count_ci_high", "variant"])]
    assert shown and all(f["count_ci_high"].astype(float).round(2).eq(round(GARWOOD_0, 2)).any() for f in shown)
    # GlobalBias: headline.csv, its report, the leaderboard and the index agree
    head = pd.read_csv(demo / "globalbias" / "headline.csv")
    for r in head.itertuples(index=False):
        m = metrics[(metrics["probe"] == "globalbias") & (metrics["metric"] == r.metric)].iloc[0]
        assert (m["estimate"], m["ci_low"], m["ci_high"]) == (r.estimate, pytest.approx(r.ci_low),
                                                              pytest.approx(r.ci_high))
    [table] = _report_rows(demo / "globalbias" / "report.html", ["metric", "estimate", "ci_low", "ci_high", "method"])
    assert table[["metric", "ci_low", "ci_high"]].astype({"ci_low": float, "ci_high": float}).round(3).values.tolist() \
        == head[["metric", "ci_low", "ci_high"]].round(3).values.tolist()
    assert set(table["method"]) == set(head["method"]) and head["method"].nunique() == len(head)  # each named
    # every figure the index shows for dbb/ and globalbias/ is the leaderboard's, interval and all
    assert _same_on_index(index_figs, "dbb", metrics) >= 2
    assert _same_on_index(index_figs, "globalbias", metrics) >= 2
    assert "Benjamini-Hochberg re-applied in each draw" in (demo / "index.html").read_text(encoding="utf-8")


def test_reference_figures_show_one_interval_on_every_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sys.path.insert(0, str(Path(__file__).parents[1] / "reference"))
    from test_run import _pin
    from upstream_fixture import write_upstream

    root = tmp_path / "mirror"
    _pin(monkeypatch, write_upstream(root))
    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(root))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("STEREOPROBE_ALLOW_DOWNLOAD", raising=False)
    monkeypatch.setenv("STEREOPROBE_CACHE", str(tmp_path / "cache"))
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("globalbias.md", "dbb.md", "stereotales.md"):
        (docs / name).write_text(f"# {name}\n", encoding="utf-8")
    out = tmp_path / "ref"
    assert main(["reference", "--out", str(out), "--docs", str(docs), "--permutations", "2", "--folds", "2",
                 "--n-boot", "50", "--quiet"]) == 0
    metrics = pd.read_csv(out / "leaderboard" / "metrics.csv")
    head = pd.read_csv(out / "globalbias" / "headline.csv")
    flagged = head[head["metric"] == "flagged"].iloc[0]
    assert flagged["estimate"] >= 1  # the fixture flags CHINESE_F for "good at math"
    m = metrics[(metrics["probe"] == "globalbias") & (metrics["metric"] == "flagged")].iloc[0]
    assert (m["ci_low"], m["ci_high"]) == (pytest.approx(flagged["ci_low"]), pytest.approx(flagged["ci_high"]))
    # the generated docs' row of the flagged count shows the same interval
    text = (docs / "globalbias.md").read_text(encoding="utf-8")
    row = re.search(rf"\| {re.escape(str(m['model']))} \| globalbias\.flagged \| (\S+) \| \[(\S+), (\S+)\] \|", text)
    assert row, "no flagged row in the generated docs"
    assert [float(x) for x in row.groups()] == [pytest.approx(v, abs=0.0005) for v in
                                                (flagged["estimate"], flagged["ci_low"], flagged["ci_high"])]
    # the index shows the globalbias folder's flagged count with the same interval
    index_figs = _index_figures(out / "index.html")
    assert _same_on_index(index_figs, "globalbias", metrics) >= 1
    assert_tables_scroll(out, at_least=10)  # issue 42.10: the reference's pages, validation's table among them


def test_every_table_of_the_demo_shaped_pages_scrolls(demo: Path) -> None:
    """Issue 42.10: the DBB, GlobalBias, leaderboard and index pages put each table in a horizontally scrolling
    wrapper (tests/page_tables.py reads the page's own stylesheet)."""
    assert_tables_scroll(demo, at_least=10)
