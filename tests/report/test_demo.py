"""Pages built from demo settings (the bundled default model transformers/default) carry a DEMO banner and no
best/worst badges (issue 29.5); pages of other models carry neither banner nor demo wording."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from eval_edit import edit_eval, set_path
from test_inputs_structure import _log

from stereoprobe.leaderboard.headline import METRIC_COLUMNS
from stereoprobe.leaderboard.pairwise import PAIRWISE_COLUMNS
from stereoprobe.leaderboard.report import write_leaderboard_report
from stereoprobe.report.demo import demo_reason, demo_reason_of_folder
from stereoprobe.report.html import Section, write_report
from stereoprobe.report.run_info import write_run_info


@pytest.fixture(scope="module")
def real_log(tmp_path_factory) -> Path:
    return _log(tmp_path_factory.mktemp("real"))


def _page(tmp_path: Path, log: Path) -> str:
    out = tmp_path / "out"
    write_run_info(out, "tiny", inputs=[log.parent])
    s = Section("Figures")
    s.text("numbers")
    return write_report(out / "report.html", "A probe", [s]).read_text(encoding="utf-8")


@pytest.mark.parametrize("where,value", [("eval.model", "transformers/default"),
                                         ("eval.model_roles", {"judge": {"model": "transformers/default"}})])
def test_a_page_from_the_default_model_says_demo(real_log, tmp_path, where, value):
    log = edit_eval(real_log, tmp_path / "logs" / "a.eval", header=lambda h: set_path(h, where, value))
    page = _page(tmp_path, log)
    assert 'class="demo-banner"' in page and "<b>DEMO</b>" in page
    assert page.index('class="demo-banner"') < page.index("<section")  # on top, before any figure


def test_a_page_from_another_model_has_no_banner(real_log, tmp_path):
    log = edit_eval(real_log, tmp_path / "logs" / "a.eval",
                    header=lambda h: set_path(h, "eval.model", "transformers/HuggingFaceTB/SmolLM2-1.7B"))
    assert 'class="demo-banner"' not in _page(tmp_path, log)
    assert demo_reason_of_folder(tmp_path / "nowhere") is None


def test_demo_reason_reads_runs_models_and_flag():
    assert demo_reason({"runs": [{"model": "default", "logged_model": "transformers/default"}]})
    assert demo_reason({"models": ["transformers/default"]})
    assert demo_reason({"models": 3}) is None  # a malformed field is not a demo (and no traceback)
    assert demo_reason({"demo": True})
    assert demo_reason({"runs": [{"model": "openai/gpt-4o", "model_roles": '{"judge": "openai/gpt-4o"}'}]}) is None


def _metrics() -> pd.DataFrame:
    rows = [("a", "dbb", "count_s_ge_20", 1.0, 0.5, 1.5, 100, "lower", ""),
            ("b", "dbb", "count_s_ge_20", 8.0, 6.0, 10.0, 100, "lower", "")]
    return pd.DataFrame([dict(zip(METRIC_COLUMNS, r)) for r in rows], columns=METRIC_COLUMNS)


@pytest.mark.parametrize("logged,demo", [("transformers/default", True), ("openai/gpt-4o", False)])
def test_leaderboard_demo_page_has_banner_and_no_badges(tmp_path, logged, demo):
    runs = pd.DataFrame([{"probe": "dbb", "folder": "f", "model": m, "logged_model": logged, "task": "dbb",
                          "settings": "provider defaults", "model_args": "{}", "model_roles": "{}",
                          "generate_config": "{}"} for m in ("a", "b")])
    metrics = _metrics()
    wide = pd.DataFrame({"model": ["a", "b"]})
    path = write_leaderboard_report(tmp_path / "leaderboard.html", wide, metrics,
                                    pd.DataFrame(columns=PAIRWISE_COLUMNS), [("dbb", "f")], 0.95, [], runs=runs)
    page = path.read_text(encoding="utf-8")
    assert ('class="demo-banner"' in page) == demo
    assert ('class="badge best"' in page) == (not demo)  # a is separated from b: best, unless a demo
