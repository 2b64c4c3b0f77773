"""The GlobalBias paper's generation results reproduced from the upstream profiles, by ``stereoprobe profiles``.

Inputs: ``data/10a_{llama3,gpt3,claude,gpt4o}_full.csv`` of groovychoons/GlobalBias at the pinned commit (the
1,200 parsed profiles per model that notebook 10 analysed) and, for Table 8, ``results/3_llama_3_results.csv``
(Llama 3 8B APX) through ``stereoprobe globalbias``. Expected values are typed from the paper (Siddique et
al., EMNLP 2024): Table 6, Tables 7, 10 and 11 (leave-one-feature-out, within 0.05 pp under the faithful
rounding), Tables 12 and 13 (top words) and Table 8. Marker ``refdata`` (skips per missing file) and ``slow``
(about 170 SVM fits per model).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from stereoprobe.globalbias.consistency import group_key
from stereoprobe.reference.figures import paper_figures

pytestmark = [pytest.mark.refdata, pytest.mark.slow]

# The paper's printed figures, typed once in datasets/globalbias/paper_figures.yaml (read by the reference report
# too).
FIGURES = paper_figures()
MODELS = {k: label for k, label in zip(FIGURES.profile_keys, FIGURES.profile_models.values())}
ORDER = list(MODELS)  # the paper's column order
assert ORDER == ["llama3", "gpt3", "claude", "gpt4o"]

# Table 6: accuracy (%) for gender + ethnicity (40 classes), ethnicity (20), gender (2).
TABLE_6 = {m: tuple(v) for m, v in FIGURES["table_6"].values.items()}
# Tables 7 (gender + ethnicity), 10 (ethnicity), 11 (gender): change in accuracy (pp), columns in ORDER.
ABLATION = {FIGURES[t].extra["target"]: FIGURES[t].values for t in ("table_7", "table_10", "table_11")}
assert all(FIGURES[t].extra["columns"] == ORDER for t in ("table_7", "table_10", "table_11"))


def _diff(table_id: str) -> dict[str, tuple[set, set]]:
    """Where the published file gives other (word, group) entries than the paper prints: (printed, from the
    file), each with its reason in the figures file."""
    return {f: ({tuple(x) for x in d["printed"]}, {tuple(x) for x in d["file"]})
            for f, d in FIGURES[table_id].extra.get("differences", {}).items()}


# Tables 12 (Llama 3 70B) and 13 (GPT 4o): per feature, word -> the groups of its top-10 entries.
TABLE_12, TABLE_13 = FIGURES["table_12"].values, FIGURES["table_13"].values
# Table 13 rows the PDF text cuts off: only the legible (word, group) entries are checked, as a subset.
TABLE_13_PARTIAL = FIGURES["table_13"].extra["partial"]
TABLE_12_DIFF, TABLE_13_DIFF = _diff("table_12"), _diff("table_13")
# Table 8 as printed: one row per (religion word, generation group of Llama 3 70B, APX group of Llama 3 8B).
TABLE_8_ROWS = [tuple(r) for r in FIGURES["table_8"].extra["rows"]]


@pytest.fixture(scope="module")
def out(gb_profiles_out: Path) -> Path:
    """``stereoprobe globalbias 3_llama_3_results.csv`` then ``stereoprobe profiles 10a_*.csv --apx``, computed
    once per run (conftest.py)."""
    return gb_profiles_out


def _model(stem: str) -> str:
    return stem.removeprefix("10a_").removesuffix("_full")


def test_table_6_svm_accuracies(out: Path) -> None:
    c = pd.read_csv(out / "classification.csv")
    c["m"] = c["model"].map(_model)
    got = c.set_index(["m", "target"])["accuracy"]
    for m, (ge, e, g) in TABLE_6.items():
        for target, want in (("gender_ethnicity", ge), ("ethnicity", e), ("gender", g)):
            assert round(100 * got[(m, target)], 1) == want, (m, target)
    assert (c.groupby("m")["n_profiles"].first() == 1200).all()


@pytest.mark.parametrize("target", list(ABLATION))
def test_tables_7_10_11_leave_one_feature_out(out: Path, target: str) -> None:
    a = pd.read_csv(out / "feature_ablation.csv")
    a = a[a["target"] == target].assign(m=lambda d: d["model"].map(_model)).set_index(["m", "feature"])
    for feature, row in ABLATION[target].items():
        for m, want in zip(ORDER, row):
            assert abs(a.loc[(m, feature), "delta_pp"] - want) < 0.05, (target, m, feature)


def _entries(top: pd.DataFrame, model: str, feature: str) -> set[tuple[str, str]]:
    t = top[(top["model"] == f"10a_{model}_full") & (top["feature"] == feature)]
    return {(w, group_key(g)) for w, g in zip(t["word"], t["group"])}


def _expected(table: dict[str, str], diff: tuple[set, set] = (set(), set())) -> set[tuple[str, str]]:
    printed = {(w, g) for w, groups in table.items() for g in groups.split()}
    assert diff[0] <= printed
    return (printed - diff[0]) | diff[1]


@pytest.mark.parametrize("feature", list(TABLE_12))
def test_table_12_top_words_llama3(out: Path, feature: str) -> None:
    top = pd.read_csv(out / "top_words.csv")
    got = _entries(top, "llama3", feature)
    assert got == _expected(TABLE_12[feature], TABLE_12_DIFF.get(feature, (set(), set())))
    assert len(got) == 10


@pytest.mark.parametrize("feature", list(TABLE_13) + list(TABLE_13_PARTIAL))
def test_table_13_top_words_gpt4o(out: Path, feature: str) -> None:
    top = pd.read_csv(out / "top_words.csv")
    got = _entries(top, "gpt4o", feature)
    if feature in TABLE_13:
        assert got == _expected(TABLE_13[feature], TABLE_13_DIFF.get(feature, (set(), set())))
        assert len(got) == 10
    else:
        assert _expected(TABLE_13_PARTIAL[feature]) <= got


def _printed_rows(rc: pd.DataFrame) -> list[tuple[str, str, str]]:
    """The output laid out as the paper prints Table 8: each generation group next to itself when APX flags it
    for the word's religion, else next to a flagged group no other row of the word shows (the paper's tenth
    row: Turkish M generated "muslim", APX flags Arab F)."""
    rows = []
    for word, g in rc.groupby("word", sort=False):
        flagged = {x for cell in g["apx_flagged_groups"].dropna() for x in str(cell).split("; ") if x}
        gens = list(g["generation_group"])
        spare = sorted(flagged - set(gens))
        for gen in gens:
            rows.append((word, gen, gen if gen in flagged else (spare.pop(0) if spare else "")))
    return rows


def test_table_8_religion_generation_vs_apx(out: Path) -> None:
    """Table 8 row by row: (word, generation group, APX group) as printed, ten rows, no other row; every row
    agrees except Turkish Male for "muslim" (APX flags Arab Female there, the paper's tenth row)."""
    path = out / "religion_consistency.csv"
    if not path.is_file():
        pytest.skip("no upstream copy of results/3_llama_3_results.csv")
    rc = pd.read_csv(path)
    rc = rc[rc["model"] == "10a_llama3_full"]
    assert len(TABLE_8_ROWS) == 10 and len(rc) == 10
    assert sorted(_printed_rows(rc)) == sorted(TABLE_8_ROWS)
    disagree = rc.loc[~rc["agrees"].astype(bool), ["word", "generation_group"]]
    assert [tuple(r) for r in disagree.to_numpy()] == [("muslim", "TURKISH_M")]
