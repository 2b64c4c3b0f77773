"""The index of the demo's folder layout (``make demo``: stereotales, the judge's own DEMO folder, dbb, two
GlobalBias runs, profiles, leaderboard) shows a headline for every report and no error text (issue 35.4: the
judge-only folder read as 'its tables cannot be read: KeyError'); its tables column links the folder."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from stereoprobe.report.index import build_index
from stereoprobe.tables import write_table

sys.path.insert(0, str(Path(__file__).parents[1]))
from leaderboard.conftest import dbb_folder, globalbias_folder, profiles_folder, stereotales_folder  # noqa: E402

MODEL = "transformers/default"


def _report(folder: Path, probe: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.html").write_text("<html><body>report</body></html>", encoding="utf-8")
    (folder / "run_info.json").write_text(json.dumps({"probe": probe, "models": [MODEL]}), encoding="utf-8")


def _judge_folder(root: Path) -> Path:
    out = root / "stereotales_judge_demo"
    write_table(pd.DataFrame([{"association_id": f"a{i}", "harmful": i < 1, "source": "llm_panel", "n_ratings": 2,
                               "median_harm": h} for i, h in enumerate([4.0, 2.0, 1.0, 2.5])]), out, "harm_labels")
    write_table(pd.DataFrame([{"evaluator": MODEL, "associations_file": "demo_associations.csv", "associations": 4,
                               "answers": 8, "errors": 0, "parse_failure_rate": 0.0, "harm_unparsed_rate": 0.0,
                               "mean_harm": 2.375, "harmful_share": 0.25}]), out, "judge_summary")
    return out


def test_index_of_the_demo_layout_has_no_error_text(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    rng = np.random.default_rng(0)
    _report(stereotales_folder(root, {MODEL: np.array([[30, 20], [25, 25]])}), "stereotales")
    _report(_judge_folder(root), "stereotales_judge")
    _report(dbb_folder(root, {MODEL: rng.uniform(0, 40, 20)}), "dbb")
    _report(globalbias_folder(root, {MODEL: rng.uniform(0, 1, 16)}), "globalbias")
    first = globalbias_folder(root / "first", {MODEL: rng.uniform(0, 1, 16)})
    first.rename(root / "globalbias_first_token")
    _report(root / "globalbias_first_token", "globalbias")
    _report(profiles_folder(root, [MODEL]), "profiles")
    lb = root / "leaderboard"
    write_table(pd.DataFrame({"model": ["default", "first_token"]}), lb, "leaderboard")
    write_table(pd.DataFrame({"p_value": [0.5], "q_value": [0.5]}), lb, "pairwise")
    _report(lb, "leaderboard")

    page = build_index(root).read_text(encoding="utf-8")
    body = page[page.index("<tbody>"):page.index("</tbody>")]
    rows = body.split("<tr>")[1:]
    assert len(rows) == 7
    for text in ("no headline figures", "cannot be read", "KeyError", "Error", "Traceback"):
        assert text not in body, text
    judge = next(r for r in rows if "stereotales_judge_demo/report.html" in r)
    # the judge_summary written above: 1 of 4 labelled harmful, mean harm 2.375 (three significant digits)
    assert f"{MODEL}: harmful share 0.25; mean harm (1-5) 2.38 of 4 associations" in judge
    # the tables column links the folder (one line), not every file
    assert '<a href="stereotales_judge_demo/">' in judge and "(2 tables)" in judge and ".parquet" not in judge
