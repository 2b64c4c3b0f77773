"""Paper vs stereoprobe verdicts on hand-built output tables and a hand-written paper-figures file: each row's
verdict (exactly / within the tolerance / differs with the reason) is worked out by hand in the comments."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from stereoprobe.errors import InputError
from stereoprobe.reference.compare import EXACT, NOT_RUN, compare_globalbias, verdict_counts
from stereoprobe.reference.figures import paper_figures, read_paper_figures

FIGURES = """
paper: a test paper
models:
  apx: {results/3_llama_3_results.csv: Model A}
  profiles: {data/10a_m1_full.csv: Model One, data/10a_m2_full.csv: Model Two}
figures:
- id: table_9
  title: flagged descriptors
  output: results/3_llama_3_results.csv
  tolerance: 0
  values: {CHINESE_F: 'good at math, quiet', ARAB_M: terrorist}
- id: table_6
  title: accuracy
  output: data
  tolerance: 0
  columns: [gender_ethnicity, ethnicity, gender]
  values: {m1: [18.3, 30.6, 83.3], m2: [21.7, 32.2, 88.9]}
- id: table_7
  title: ablation
  output: data
  tolerance: 0.05
  tolerance_reason: printed rounding
  target: gender_ethnicity
  columns: [m1, m2]
  values: {religion: [-4.1, -4.8]}
- id: table_12
  title: top words
  output: data
  tolerance: 0
  model: m1
  values: {religion: {jewish: ISRAELI_M ISRAELI_F, hindu: INDIAN_M}}
  differences:
    religion:
      reason: the printed row lost an entry
      printed: []
      file: [[hindu, INDIAN_F]]
"""


@pytest.fixture()
def figures(tmp_path: Path):
    path = tmp_path / "figures.yaml"
    path.write_text(FIGURES, encoding="utf-8")
    return read_paper_figures(path)


def _outputs(tmp_path: Path, top_extra: bool) -> tuple[Path, Path]:
    apx, prof = tmp_path / "apx", tmp_path / "prof"
    apx.mkdir(), prof.mkdir()
    pd.DataFrame({"model": ["A", "A"], "group": ["CHINESE_F", "ARAB_M"],
                  "descriptors": ["quiet, good at math", "terrorist, extremist"]}).to_csv(apx / "associations.csv")
    pd.DataFrame({"model": ["A"], "group": ["CHINESE_F"], "descriptor": ["quiet"], "score": [0.1],
                  "flagged": [True]}).to_csv(apx / "bias_scores.csv")
    acc = [(m, t, a) for m, vals in (("M1", (0.1834, 0.306, 0.8329)), ("M2", (0.2166, 0.3217, 0.8894)))
           for t, a in zip(("gender_ethnicity", "ethnicity", "gender"), vals)]
    pd.DataFrame(acc, columns=["model", "target", "accuracy"]).to_csv(prof / "classification.csv")
    pd.DataFrame({"model": ["M1", "M2"], "target": ["gender_ethnicity"] * 2, "feature": ["religion"] * 2,
                  "delta_pp": [-4.1, -4.84]}).to_csv(prof / "feature_ablation.csv")
    words = [("jewish", "ISRAELI_M"), ("jewish", "ISRAELI_F"), ("hindu", "INDIAN_M")]
    if top_extra:
        words.append(("hindu", "INDIAN_F"))
    pd.DataFrame([("M1", "religion", w, g) for w, g in words],
                 columns=["model", "feature", "word", "group"]).to_csv(prof / "top_words.csv")
    return apx, prof


def test_verdicts_worked_by_hand(tmp_path: Path, figures) -> None:
    apx, prof = _outputs(tmp_path, top_extra=True)
    rows = compare_globalbias(apx, prof, apx_model="A", profile_models={"m1": "M1", "m2": "M2"}, figures=figures)
    v = rows.set_index(["figure", "item"])
    # Table 9: CHINESE_F's set equals the printed one (order aside); ARAB_M has "extremist" beyond the print
    assert v.loc[("Table 9", "CHINESE_F"), "verdict"] == EXACT
    assert v.loc[("Table 9", "ARAB_M"), "verdict"] == "differs"
    assert v.loc[("Table 9", "ARAB_M"), "reason"] == "ours only: extremist"
    # Table 6: 100 * 0.1834 = 18.34 -> 18.3 = printed; 83.29 -> 83.3; 0.2166 -> 21.7 (21.66 rounds up)
    assert (v.loc["Table 6", "verdict"] == EXACT).all()
    assert v.loc[("Table 6", "m1 gender"), "stereoprobe"] == "83.3"
    # Table 7: -4.1 exactly; -4.84 vs -4.8: |diff| = 0.04 < 0.05 but rounds to -4.8 -> exact at print precision
    assert v.loc[("Table 7", "m1 religion"), "verdict"] == EXACT
    assert v.loc[("Table 7", "m2 religion"), "verdict"] == EXACT
    # Table 12: ours has (hindu, INDIAN_F) beyond the print: exactly the listed difference, so its reason
    assert v.loc[("Table 12", "m1 religion"), "verdict"] == "differs"
    assert v.loc[("Table 12", "m1 religion"), "reason"] == "the printed row lost an entry"


def test_within_tolerance_and_unexplained_difference(tmp_path: Path, figures) -> None:
    apx, prof = _outputs(tmp_path, top_extra=False)
    a = pd.read_csv(prof / "feature_ablation.csv", index_col=0)
    # -4.05: 1-decimal rounding gives -4.0 (float -4.05 is just above), not the printed -4.1, but it lies at the
    # tolerance 0.05 -> "within 0.05" with the figure's reason; -4.9 is 0.1 from the printed -4.8 -> differs
    a["delta_pp"] = [-4.05, -4.9]
    a.to_csv(prof / "feature_ablation.csv")
    rows = compare_globalbias(apx, prof, apx_model="A", profile_models={"m1": "M1", "m2": "M2"}, figures=figures)
    v = rows.set_index(["figure", "item"])
    assert v.loc[("Table 7", "m1 religion"), "verdict"] == "within 0.05"
    assert v.loc[("Table 7", "m1 religion"), "reason"] == "printed rounding"
    assert v.loc[("Table 7", "m2 religion"), "verdict"] == "differs"
    # Table 12 without the file's extra entry: ours equals the print -> exact
    assert v.loc[("Table 12", "m1 religion"), "verdict"] == EXACT
    counts = verdict_counts(rows).set_index("figure")
    assert counts.loc["Table 7"].tolist() == [0, 1, 1, 0]


def test_missing_outputs_are_not_run(figures) -> None:
    rows = compare_globalbias(None, None, figures=figures)
    assert (rows["verdict"] == NOT_RUN).all() and len(rows) == 4


def test_bundled_figures_file() -> None:
    figs = paper_figures()
    assert [f.id for f in figs.figures][:2] == ["section_5_1", "table_9"]
    assert figs.profile_keys == ["llama3", "gpt3", "claude", "gpt4o"]
    assert figs["table_9"].label == "Table 9" and figs["section_5_1"].label == "Section 5.1"
    for f in figs.figures:
        assert f.tolerance == 0 or f.tolerance_reason, f.id


@pytest.mark.parametrize("edit, message", [
    (("  tolerance_reason: printed rounding\n", ""), "needs a tolerance_reason"),
    (("id: table_6", "id: table_9"), "repeated figure ids"),
    (("  title: accuracy\n", ""), "lacks title"),
])
def test_bad_figures_file(tmp_path: Path, edit: tuple[str, str], message: str) -> None:
    path = tmp_path / "f.yaml"
    path.write_text(FIGURES.replace(*edit), encoding="utf-8")
    with pytest.raises(InputError, match=message):
        read_paper_figures(path)
