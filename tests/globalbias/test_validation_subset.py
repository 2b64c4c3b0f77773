"""GlobalBias validation on a run over some groups (issue 29.4): ``-T groups=[ARAB,CHINESE] -T templates=[1]``
holds names of two target groups (arab, asian); the four bundled validation descriptors whose target is
hispanic or white can never be right, so they are left out, and chance is that of two groups (0.5), not four.
Counts worked out by hand from ``datasets/globalbias/descriptors.csv`` (two validation descriptors per target:
asian, hispanic, arab, white) and ``validation_groups.yaml`` (ARAB -> arab, CHINESE -> asian)."""

from __future__ import annotations

from pathlib import Path

from fake_model import fake_model
from inspect_ai import eval as inspect_eval

from stereoprobe.globalbias import apx as A
from stereoprobe.globalbias.data import validation_groups
from stereoprobe.globalbias.inputs import read_sentences
from stereoprobe.tasks.globalbias import globalbias


def _validate(tmp_path: Path, groups: list[str]):
    [log] = inspect_eval(globalbias(source="bundled", groups=groups, templates=[1]), model=fake_model(),
                         log_dir=str(tmp_path / "logs"), display="none")
    sentences, _ = read_sentences([Path(log.location)], measure="byte")
    mapping, excluded = validation_groups()
    return A.validation(sentences, mapping, tuple(excluded), "ppl", 1)


def test_validation_on_two_groups_uses_their_descriptors_and_chance(tmp_path):
    summary, detail = _validate(tmp_path, ["ARAB", "CHINESE"])
    for r in summary.itertuples(index=False):
        assert r.n_groups == 2 and r.chance_accuracy == 0.5 and r.chance_mrr == 0.75
        assert r.n_descriptors == 4 and r.n_descriptors_left_out == 4
        assert r.targets_absent == "hispanic, white"
    assert set(detail["target"]) == {"arab", "asian"}


def test_validation_on_one_group_keeps_its_own_descriptors(tmp_path):
    summary, detail = _validate(tmp_path, ["ARAB"])
    # one group present (arab): its own 2 descriptors stay; the 6 others are left out
    assert (summary["n_descriptors"] == 2).all() and (summary["n_descriptors_left_out"] == 6).all()
    assert (summary["targets_absent"] == "asian, hispanic, white").all()


def test_validation_when_no_descriptor_targets_a_present_group():
    import pandas as pd

    rows = [{"group": "ARAB_F", "descriptor": d, "template": 1, "ethnicity": "ARAB", "gender": "F", "target": "white",
             "name": f"{i}:n{i}", "ppl": 10.0 + i} for i in range(3) for d in ("sunburnt", "a country music fan")]
    summary, detail = A.validation(pd.DataFrame(rows), {"ARAB": "arab"}, ("nonce",), "ppl", 1)
    assert (summary["n_descriptors"] == 0).all() and summary["accuracy"].isna().all()
    assert (summary["targets_absent"] == "white").all() and (summary["n_descriptors_left_out"] == 2).all()
    assert detail.empty


def test_the_page_says_the_validation_was_restricted(tmp_path):
    from stereoprobe.cli import main

    inspect_eval(globalbias(source="bundled", groups=["ARAB", "CHINESE"], templates=[1]), model=fake_model(),
                 log_dir=str(tmp_path / "logs"), display="none")
    assert main(["globalbias", str(tmp_path / "logs"), "--out", str(tmp_path / "out"), "--measure", "byte"]) == 0
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "Restricted to the groups present: 4 validation descriptor(s)" in page and "hispanic; white" not in page
    assert "(hispanic, white)" in page
    from page_tables import assert_tables_scroll  # issue 42.10: validation's last column scrolls into view

    assert_tables_scroll(tmp_path / "out", at_least=3)
