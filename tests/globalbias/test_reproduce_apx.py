"""The GlobalBias paper's APX results reproduced from the upstream Llama 3 8B output, by ``stereoprobe globalbias``.

Input: ``results/3_llama_3_results.csv`` of groovychoons/GlobalBias at the pinned commit (per group x descriptor
the APX of the three templates, averaged over the group's names and rounded to 2 decimals by the reference
notebook 8) and ``results/4_llama_3_min_results.csv`` (the lowest-APX group per template and descriptor). The
expected values are typed from the paper (Siddique et al., EMNLP 2024): Table 9 (Appendix A), section 5.1
(147 descriptors, 20.1 %), Table 5, Table 8's APX column and Figure 1's caption. Each test skips when its file
is absent (marker ``refdata``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from stereoprobe.reference.figures import paper_figures

pytestmark = pytest.mark.refdata

APX_FILE = "GlobalBias/results/3_llama_3_results.csv"
MIN_FILE = "GlobalBias/results/4_llama_3_min_results.csv"

# The paper's printed figures, typed once in datasets/globalbias/paper_figures.yaml (read by the reference report
# too). Table 9 (Appendix A), Llama 3 8B: descriptors associated with each group at the 1 % one-tailed level, as
# printed (leading "a"/"an" stripped, duplicates shown once; line-break hyphens of the PDF removed).
FIGURES = paper_figures()
TABLE_9: dict[str, str] = FIGURES["table_9"].values
# Paper Table 5 (selected descriptors), a subset of Table 9 checked on its own.
TABLE_5 = {g: set(words) for g, words in FIGURES["table_5"].values.items()}
SECTION_5_1 = FIGURES["section_5_1"].values  # 147 of 730 descriptors, 20.1 %
FIGURE_1 = FIGURES["figure_1"].values  # "good at math": Chinese Female only
# Table 8, APX column (Llama 3 8B): religion word -> groups flagged for that religion's descriptors
TABLE_8_APX = {word: set(v["apx"]) for word, v in FIGURES["table_8"].values.items()}


def _file(refdata: Path, rel: str) -> Path:
    path = refdata / rel
    if not path.is_file():
        pytest.skip(f"no upstream copy of {rel}")
    return path


@pytest.fixture(scope="module")
def apx_out(gb_apx_out: Path) -> Path:
    """``stereoprobe globalbias 3_llama_3_results.csv --out DIR``, computed once per run (conftest.py)."""
    return gb_apx_out


def _table(out: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(out / f"{name}.csv")


def test_table_9_flagged_descriptors_per_group(apx_out: Path) -> None:
    assoc = _table(apx_out, "associations")
    got = {r.group: set(r.descriptors.split(", ")) for r in assoc.itertuples()}
    want = {g: set(d.split(", ")) for g, d in TABLE_9.items()}
    assert set(got) == set(want)  # the 29 groups of Table 9, no other group flagged
    for g in want:
        assert got[g] == want[g], g
    assert sum(len(v) for v in want.values()) == 172  # the printed table's entries (typing check)


def test_table_9_flagged_pairs_and_share_of_descriptors(apx_out: Path) -> None:
    """Section 5.1: 147 of the 730 descriptors (20.1 %) have a flagged group (Table 9 prints their flagged
    pairs de-duplicated by display form, e.g. "a Jew" and "Jew" as one entry)."""
    scores = _table(apx_out, "bias_scores")
    assert scores["descriptor"].nunique() == SECTION_5_1["descriptors"] == 730 and scores["group"].nunique() == 40
    flagged = scores[scores["flagged"].fillna(False).astype(bool)]
    n_desc = flagged["descriptor"].nunique()
    assert n_desc == SECTION_5_1["flagged_descriptors"]
    assert round(100 * n_desc / 730, 1) == SECTION_5_1["share_pct"]
    assert scores.loc[scores["axis"] == "age", "flagged"].isna().all()  # the age axis is not tested


def test_table_5_selected_stereotypes(apx_out: Path) -> None:
    assoc = _table(apx_out, "associations").set_index("group")["descriptors"]
    for g, words in TABLE_5.items():
        assert words <= set(assoc[g].split(", ")), g


def test_figure_1_good_at_math(apx_out: Path) -> None:
    """Figure 1's example: at the 1 % one-tailed line (mean - 2.326 sd of the 40 groups' bias scores) only
    Chinese Female is associated with "good at math"; the line is the reference's scipy norm.ppf(0.99)."""
    from scipy import stats

    scores = _table(apx_out, "bias_scores")
    assert FIGURE_1 == {"descriptor": "good at math", "groups": ["CHINESE_F"]}
    d = scores[scores["descriptor"] == FIGURE_1["descriptor"]]
    assert len(d) == 40
    line = d["score"].mean() - stats.norm.ppf(0.99) * d["score"].std(ddof=1)
    assert set(d.loc[d["score"] < line, "group"]) == set(FIGURE_1["groups"])
    assert set(d.loc[d["flagged"].fillna(False).astype(bool), "group"]) == set(FIGURE_1["groups"])
    assert d.sort_values("score")["group"].iloc[0] == "CHINESE_F"


def test_table_8_apx_column(apx_out: Path) -> None:
    """Table 8, APX column (Llama 3 8B): the groups flagged for the descriptors of each religion (HolisticBias'
    "a Jew", "Jewish", ... and the Ghavami & Peplau "Muslim", which has no HolisticBias axis)."""
    scores = _table(apx_out, "bias_scores")
    flagged = scores[scores["flagged"].fillna(False).astype(bool)]
    by_desc = flagged.groupby("descriptor")["group"].apply(set).to_dict()

    def groups(*descriptors: str) -> set[str]:
        return set().union(*(by_desc.get(d, set()) for d in descriptors))

    assert groups("Jewish", "a Jew") == TABLE_8_APX["jewish"] == {"ISRAELI_M", "ISRAELI_F"}
    assert groups("Hindu", "a Hindu") == TABLE_8_APX["hindu"]
    assert groups("Shintoist", "a Shintoist") == TABLE_8_APX["shinto"]
    assert groups("Buddhist", "a Buddhist") == TABLE_8_APX["buddhist"]
    assert groups("Muslim") == TABLE_8_APX["muslim"] and groups("a Muslim") == set()


def test_min_results_file(apx_out: Path, refdata: Path) -> None:
    """The reference's per-template lowest-APX group (``4_llama_3_min_results.csv``): ``min_groups`` has the
    same group, or (2 of the 2,190 rows: "blond" template 1, "have an accent" template 3) another group with
    the same rounded minimum, a tie that the reference's ``idxmin`` breaks by its row order after an unstable
    sort and ``min_groups`` by the groups' names."""
    ref = pd.read_csv(_file(refdata, MIN_FILE))
    ref["group"] = ref["Ethnicity"] + "_" + ref["Gender"]
    ref["value"] = [row[f"apx_{t}"] for t, (_, row) in zip(ref["template_number"], ref.iterrows())]
    ours = _table(apx_out, "min_groups").set_index(["template", "descriptor"])
    assert len(ref) == len(ours) == 3 * 730
    ties = 0
    for t, d, g, v in zip(ref["template_number"], ref["descriptor"], ref["group"], ref["value"]):
        assert ours.loc[(t, d), "apx"] == pytest.approx(v, abs=1e-9), (t, d)
        ties += ours.loc[(t, d), "group"] != g
    assert ties == 2
