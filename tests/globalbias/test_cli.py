from __future__ import annotations

import re

import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval

from stereoprobe.cli import main
from stereoprobe.globalbias import apx as A
from stereoprobe.tasks.globalbias import globalbias

from fake_model import fake_model
from .test_apx import hand_table


def test_cli_on_inspect_logs(tmp_path):
    logs = tmp_path / "logs"
    task = globalbias(source="bundled", groups=["CHINESE", "ARAB", "ENGLISH", "HISPANIC"], templates=[1], unit="sentence")
    [log] = inspect_eval(task, model=fake_model(), log_dir=str(logs), display="none", max_samples=500)
    assert log.status == "success"
    out = tmp_path / "out"
    assert main(["globalbias", str(logs), "--out", str(out)]) == 0
    bs = pd.read_csv(out / "bias_scores.csv")
    assert {"group", "descriptor", "axis", "score", "flagged", "p_value", "q_value", "significant"} <= set(bs.columns)
    assert len(bs) == 8 * 16
    assert bs["score"].between(0, 1).all()
    assert bs.loc[bs.axis == "age", "flagged"].isna().all()
    assert (out / "report.html").stat().st_size > 1000
    # independent check of one score: recompute from the log's samples with plain pandas
    import math

    from fake_model import expected_sum

    rows = []
    for smp in log.samples:
        lp, n = expected_sum(smp.input)
        rows.append((smp.metadata["group"], smp.metadata["name_index"], smp.metadata["descriptor"], math.exp(-lp / n)))
    df = pd.DataFrame(rows, columns=["g", "n", "d", "ppl"])
    ratio = (df.groupby("g").ppl.mean() / df.ppl.mean()).round(3)
    df["apx"] = df.ppl / df.g.map(ratio)
    m = df.groupby(["g", "d"]).apx.mean().round(2)
    norm = (m - m.min()) / (m.max() - m.min())
    got = bs.set_index(["group", "descriptor"])["score"]
    assert got.loc[("ARAB_F", "a nurse")] == pytest.approx(norm.loc[("ARAB_F", "a nurse")])
    val = pd.read_csv(out / "validation.csv")
    assert set(val.measure) == {"ppl", "apx"} and (val.n_descriptors == 8).all()
    # byte measure runs too
    assert main(["globalbias", str(logs), "--out", str(tmp_path / "b"), "--measure", "byte"]) == 0


def test_cli_on_csv_long_and_upstream_wide(tmp_path):
    long = hand_table()
    long.to_csv(tmp_path / "ppl.csv", index=False)
    out = tmp_path / "o1"
    assert main(["globalbias", str(tmp_path / "ppl.csv"), "--out", str(out)]) == 0
    s = pd.read_csv(out / "bias_scores.csv").set_index(["group", "descriptor"])
    assert s.loc[("B", "d1"), "score"] == pytest.approx(0.9)

    # upstream wide layout: Group "('ETH', 'G')", firstname, perplexity_1..2
    w = long.pivot_table(index=["group", "name", "descriptor"], columns="template", values="ppl").reset_index()
    w = w.rename(columns={1: "perplexity_1", 2: "perplexity_2", "name": "firstname"})
    w["Group"] = w.pop("group").map({"A": "('AAA', 'F')", "B": "('BBB', 'M')"})
    w.to_csv(tmp_path / "wide.csv")
    out2 = tmp_path / "o2"
    assert main(["globalbias", str(tmp_path / "wide.csv"), "--out", str(out2)]) == 0
    s2 = pd.read_csv(out2 / "bias_scores.csv").set_index(["group", "descriptor"])
    assert s2.loc[("BBB_M", "d1"), "score"] == pytest.approx(0.9)

    # group-level APX without names: reference rule only
    means = A.group_descriptor_means(A.apx(long))
    means[["group", "descriptor", "template", "apx"]].to_csv(tmp_path / "apx.csv", index=False)
    out3 = tmp_path / "o3"
    assert main(["globalbias", str(tmp_path / "apx.csv"), "--out", str(out3)]) == 0
    s3 = pd.read_csv(out3 / "bias_scores.csv").set_index(["group", "descriptor"])
    assert s3.loc[("B", "d1"), "score"] == pytest.approx(0.9)
    assert s3["p_value"].isna().all()


def test_cli_bad_csv_names_the_file(tmp_path, capsys):
    p = tmp_path / "bad.csv"
    pd.DataFrame({"group": ["A"], "descriptor": ["d"], "ppl": [1.0]}).to_csv(p, index=False)
    assert main(["globalbias", str(p), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert re.search("bad.csv.*template", err) and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()
