"""A StereoTales run prints its headline figures only (issue 42.8): the run's results, which inspect prints,
hold the seven headline figures; the per-language and per-attribute ones (about 75 console lines on a full
run) are computed from the log's sample scores, and the readers' tables do not depend on the printed lines."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from test_task import Mocks, _metrics, _private_cache, _sample_scores, run_task  # noqa: E402,F401  (fixture)

from stereoprobe.scorers.stereotales_metrics import HEADLINE_FIGURES, breakdown  # noqa: E402


def test_the_console_shows_the_headline_figures_only(tmp_path):
    # the run's results (what inspect prints) hold the seven headline figures, none of the per-language and
    # per-attribute ones (about 75 lines on a full run); those stay computable from the sample scores
    log = run_task(Mocks(), tmp_path)
    [block] = [s for s in log.results.scores if s.name == "stereotales_extraction"]
    assert list(block.metrics) == list(HEADLINE_FIGURES)
    full = _metrics(log)
    assert {"refusal_rate_en", "unknown_rate_age", "unknown_rate_age_en", "fleiss_kappa_age"} <= set(full)


def test_the_readers_tables_do_not_depend_on_the_printed_metrics(tmp_path):
    # stereoprobe associations reads the samples, never the results' metric lines: the same log with the
    # former per-language and per-attribute lines written back into its results gives identical tables
    from inspect_ai.log import EvalMetric, read_eval_log, write_eval_log

    from stereoprobe.stereotales.mining import AssociationOptions, analyze
    from stereoprobe.stereotales.mining.config import MiningConfig

    log = run_task(Mocks(), tmp_path)
    full = read_eval_log(log.location)
    [block] = [s for s in full.results.scores if s.name == "stereotales_extraction"]
    block.metrics = {k: EvalMetric(name=k, value=v) for k, v in breakdown(_sample_scores(full)).items()}
    assert len(block.metrics) > 2 * len(HEADLINE_FIGURES)
    (tmp_path / "former").mkdir()
    write_eval_log(full, str(tmp_path / "former" / "former.eval"))
    options = AssociationOptions(MiningConfig(min_row_sum=1, mc_resamples=200), by_language=True)
    now, former = analyze([tmp_path / "logs"], options), analyze([tmp_path / "former"], options)
    assert set(now.tables) == set(former.tables)
    for name, table in now.tables.items():
        if name == "input_sources":  # the files read: their paths and checksums differ by construction
            continue
        pd.testing.assert_frame_equal(table.reset_index(drop=True), former.tables[name].reset_index(drop=True),
                                      obj=name)
