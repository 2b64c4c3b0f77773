"""The index page shows each report's headline figures, read from the tables it wrote, leads with the
reference's paper-vs-stereoprobe comparison, and says DEMO when a report was built from demo settings (issue
29.9, 29.5). Figures are checked against the tables written here by hand."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from stereoprobe.report.headlines import headline_text
from stereoprobe.report.index import build_index
from stereoprobe.tables import write_table

sys.path.insert(0, str(Path(__file__).parents[1]))
from leaderboard.conftest import dbb_folder  # noqa: E402


def _report(folder: Path, probe: str, model: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.html").write_text("<html><body>report</body></html>", encoding="utf-8")
    (folder / "run_info.json").write_text(json.dumps({"probe": probe, "models": [model],
                                                      "runs": [{"model": model, "model_roles": {}}]}),
                                          encoding="utf-8")


def _results(tmp_path: Path, model: str) -> Path:
    root = tmp_path / "results"
    s = np.array([30.0, 5.0, 25.0, 0.0, 40.0, 10.0, 22.0, 1.0, 2.0, 3.0])  # 4 instances with S >= 20
    _report(dbb_folder(root, {model: s}), "dbb", model)
    ref = root / "reference"
    write_table(pd.DataFrame({"figure": ["T3"] * 4, "item": list("abcd"), "paper": ["1"] * 4,
                              "stereoprobe": ["1"] * 4, "verdict": ["reproduced exactly", "reproduced exactly",
                                                                     "within 0.01", "differs"],
                              "reason": [""] * 4}), ref, "comparison")
    _report(ref, "reference", "Llama-3-8B")
    return root


def test_index_shows_headline_figures_and_the_reference_first(tmp_path):
    root = _results(tmp_path, "openai/gpt-4o")
    page = build_index(root).read_text(encoding="utf-8")
    rows = page[page.index("<tbody>"):page.index("</tbody>")].split("<tr>")[1:]
    assert "reference/report.html" in rows[0] and "dbb/report.html" in rows[1]  # the comparison leads
    assert ("paper vs stereoprobe: 4 printed items, 2 reproduced exactly, 1 within the stated tolerance, 1 differ, "
            "0 not run") in rows[0]
    # the DBB ALL row: 4 biased instances, their interval the exact Poisson one as it is wider than the written
    # [3, 5] (Garwood: chi2.ppf(0.025, 8)/2 = 1.09, chi2.ppf(0.975, 10)/2 = 10.24); mean S of them
    # (30+25+40+22)/4 = 29.25 [20, 40] as written
    assert "openai/gpt-4o: " in rows[1] and "4 [1.1, 10.2]" in rows[1] and "29.2 [20, 40]" in rows[1]
    assert 'class="demo-banner"' not in page and "<b>DEMO</b>" not in page


def test_index_of_a_demo_says_demo(tmp_path):
    root = _results(tmp_path, "transformers/default")
    page = build_index(root).read_text(encoding="utf-8")
    assert 'class="demo-banner"' in page and "<b>DEMO</b>" in page


def test_headline_of_a_leaderboard_folder_and_of_an_unreadable_one(tmp_path):
    lb = tmp_path / "lb"
    write_table(pd.DataFrame({"model": ["a", "b", "c"]}), lb, "leaderboard")
    write_table(pd.DataFrame({"p_value": [0.001, 0.5, float("nan")], "q_value": [0.002, 0.5, float("nan")]}), lb,
                "pairwise")
    assert headline_text(lb) == "3 models compared; 1 of 2 paired differences with q < 0.05"
    other = tmp_path / "other"
    other.mkdir()
    assert headline_text(other).startswith("no headline figures (")


def test_index_tells_runs_apart_by_their_model_args(tmp_path):
    """Two reports of one model run with different -M (the demo's GlobalBias with and without
    score_first_token) differ on the index; only numbers and booleans are shown, any other value is ***."""
    root = tmp_path / "results"
    for name, args in (("globalbias", {}), ("globalbias_first_token", {"score_first_token": True,
                                                                        "api_key": "sk-live-abcdef123456"})):
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "report.html").write_text("<html><body>report</body></html>", encoding="utf-8")
        (folder / "run_info.json").write_text(json.dumps({"probe": "globalbias", "models": ["transformers/default"],
                                                          "runs": [{"model": "transformers/default",
                                                                    "model_args": args}]}), encoding="utf-8")
    page = build_index(root).read_text(encoding="utf-8")
    rows = page[page.index("<tbody>"):page.index("</tbody>")].split("<tr>")[1:]
    first_token = next(r for r in rows if "globalbias_<wbr>first_<wbr>token/" in r or "first_token/report" in r)
    plain = next(r for r in rows if r is not first_token)
    assert "runs: -M api_key=***; -M score_first_token=true" in first_token
    assert "score_first_token" not in plain and "sk-live" not in page
