"""``stereoprobe dbb`` on logs of the fake model: files, columns and numbers."""

from __future__ import annotations

import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval

from fake_model import fake_model
from stereoprobe.cli import main
from stereoprobe.dbb import data as D
from stereoprobe.tasks.dbb import dbb, dbb_sg

# the bundled demo templates with the fixed expansion (the defaults run the upstream benchmark)
BUNDLED = {"source": "bundled", "faithful": False, "prompt": "stereoprobe"}

P = {"poor": 0.9, "rich": 0.2}


def test_cli_end_to_end(tmp_path):
    qs = D.expand(D.bundled_templates(), categories=["ses"])
    ctx_p = {q.context: P[q.group] for q in qs}
    a_texts = {q.option_a for q in qs}
    logs = tmp_path / "logs"
    model = fake_model(p_a=lambda c: ctx_p[c], is_a=lambda o: o in a_texts)
    inspect_eval([dbb(**BUNDLED, categories="ses", limit_templates=3, mode="logprob"),
                  dbb_sg(**BUNDLED, scoring="raw", categories="ses", limit_templates=3)],
                 model=model, display="none", log_dir=str(logs), log_realtime=False)
    out = tmp_path / "out"
    assert main(["dbb", str(logs), "--out", str(out), "--n-boot", "200"]) == 0
    for f in ("instances.csv", "summary.csv", "report.html", "instances.parquet", "top_associations.csv"):
        assert (out / f).is_file(), f
    inst = pd.read_csv(out / "instances.csv")
    assert {"category", "descriptor_type", "group_1", "group_2", "p_a_1", "p_a_2", "s"} <= set(inst.columns)
    mcq = inst[inst["variant"] == "mcq-logprob"]
    assert len(mcq) == 3 * 2 and (mcq["s"] - 70).abs().max() < 1e-6  # |90 - 20|
    summ = pd.read_csv(out / "summary.csv")
    assert {"n", "count_s_ge_20", "mean_s_biased", "refusal_rate"} <= set(summ.columns)
    row = summ[(summ["variant"] == "mcq-logprob") & (summ["category"] == "ALL")].iloc[0]
    assert row["count_s_ge_20"] == 6 and row["mean_s_biased"] == pytest.approx(70)
    assert set(summ["variant"]) == {"mcq-logprob", "sg"}
    html = (out / "report.html").read_text()
    assert "Top biased associations" in html and "data:image/png;base64" in html


def test_cli_no_dbb_logs(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["dbb", str(tmp_path / "empty"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_default_mode_is_reported_as_sampled(tmp_path):
    """A run without -T mode is the sampled protocol and its tables say so (no fallback to logprob)."""
    logs = tmp_path / "logs"
    inspect_eval(dbb(**BUNDLED, categories="ses", limit_templates=1), model=fake_model(always_first=True),
                 display="none", log_dir=str(logs), log_realtime=False)
    out = tmp_path / "out"
    assert main(["dbb", str(logs), "--out", str(out), "--n-boot", "50", "-q"]) == 0
    assert set(pd.read_csv(out / "summary.csv")["variant"]) == {"mcq-sampled"}
