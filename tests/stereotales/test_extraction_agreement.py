"""Fleiss' kappa between a story's extractors per attribute (``stereoprobe.stereotales.extraction.agreement``):
a hand-worked table, statsmodels on random ratings, the stories left out, and the ``extractor_agreement`` table
``stereoprobe associations`` writes from eval logs (issue 42: the per-attribute kappa was in no table)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

sys.path.insert(0, str(Path(__file__).parent))
from _stories_fixtures import ATTRS, story_sample, write_log  # noqa: E402

from stereoprobe.cli import main  # noqa: E402
from stereoprobe.stereotales.extraction.agreement import RatingCodes, extractor_agreement_table  # noqa: E402

# gender labels of two extractors over four stories: (m, m), (f, f), (m, f), (f, f). By hand (Fleiss 1971):
# P_i = 1, 1, 0, 1 -> P_bar = 3/4; p_m = 3/8, p_f = 5/8 -> P_e = 9/64 + 25/64 = 17/32;
# kappa = (3/4 - 17/32) / (1 - 17/32) = (7/32) / (15/32) = 7/15
PAIRS = [("man", "man"), ("woman", "woman"), ("man", "woman"), ("woman", "woman")]
LANGS = ["en", "en", "fr", "fr"]
HAND_KAPPA = 7 / 15
# per language: en (m, m), (f, f): P_bar = 1, P_e = 1/2 -> 1; fr (m, f), (f, f): P_bar = 1/2, p_m = 1/4,
# P_e = 1/16 + 9/16 = 5/8 -> (1/2 - 5/8) / (3/8) = -1/3
HAND_BY_LANG = {"en": 1.0, "fr": -1 / 3}


def extraction_meta(labels: tuple[str, ...], *, refused: bool = False, status: str = "ok") -> dict:
    """An extraction scorer's metadata: one extractor per label, the first extractor's status ``status``."""
    return {"refused": refused, "extractions": [
        {"model": f"x{i}", "status": status if i == 0 else "ok", "values": {"gender": g, "education": "basic"}}
        for i, g in enumerate(labels)]}


def test_the_hand_worked_table_overall_and_per_language() -> None:
    codes = RatingCodes(["gender", "education"])
    for lang, pair in zip(LANGS, PAIRS):
        codes.add(lang, extraction_meta(pair))
    k = codes.kappas()
    assert k[("gender", "all")].kappa == pytest.approx(HAND_KAPPA, abs=1e-12)
    assert (k[("gender", "all")].stories, k[("gender", "all")].extractors) == (4, 2)
    for lang, expected in HAND_BY_LANG.items():
        assert k[("gender", lang)].kappa == pytest.approx(expected, abs=1e-12) and k[("gender", lang)].stories == 2
    assert math.isnan(k[("education", "all")].kappa)  # every label the same: chance agreement is already 1


def test_random_ratings_against_statsmodels() -> None:
    rng = np.random.default_rng(7)
    labels = rng.choice(["a", "b", "c", "unknown"], size=(40, 3), p=[0.5, 0.2, 0.2, 0.1])
    codes = RatingCodes(["gender"])
    for row in labels:
        codes.add("en", extraction_meta(tuple(row)))
    table, _ = aggregate_raters(np.unique(labels, return_inverse=True)[1].reshape(labels.shape))
    assert codes.kappas()[("gender", "all")].kappa == pytest.approx(sm_fleiss_kappa(table, method="fleiss"), abs=1e-12)


def test_refused_failed_and_other_ensemble_sizes_are_left_out() -> None:
    codes = RatingCodes(["gender"])
    for pair in PAIRS:
        codes.add("en", extraction_meta(pair))
    codes.add("en", extraction_meta(("man", "woman"), refused=True))
    codes.add("en", extraction_meta(("man", "woman"), status="parse_error"))
    codes.add("en", extraction_meta(("man", "woman", "woman")))  # three extractors: not the first size seen
    k = codes.kappas()[("gender", "all")]
    assert k.stories == 4 and k.kappa == pytest.approx(HAND_KAPPA, abs=1e-12)
    one = RatingCodes(["gender"])
    one.add("en", extraction_meta(("man",)))
    assert one.kappas() == {}  # one extractor: no kappa at all


def _log_samples() -> list:
    samples = []
    for i, (lang, pair) in enumerate(zip(LANGS, PAIRS)):
        profile = {a: "unknown" for a in ATTRS} | {"gender": pair[0]}
        s = story_sample(f"{lang}:income_level:{i}", attribute="income_level", value="low income", profile=profile,
                         language=lang)
        s.scores["stereotales_extraction"].metadata["extractions"] = extraction_meta(pair)["extractions"]
        samples.append(s)
    return samples


def test_associations_writes_the_extractor_agreement_table(tmp_path: Path) -> None:
    write_log(tmp_path / "logs" / "run.eval", _log_samples())
    out = tmp_path / "out"
    assert main(["associations", str(tmp_path / "logs"), "--out", str(out), "--min-row-sum", "2"]) == 0
    table = pd.read_csv(out / "extractor_agreement.csv")
    assert list(table.columns) == ["model", "language", "attribute", "stories", "extractors", "fleiss_kappa"]
    gender = table[table.attribute == "gender"].set_index("language")
    assert list(gender.index) == ["all", "en", "fr"] and set(gender.model) == {"mockllm/a"}
    assert gender.loc["all", "fleiss_kappa"] == pytest.approx(HAND_KAPPA, abs=1e-9)
    for lang, expected in HAND_BY_LANG.items():
        assert gender.loc[lang, "fleiss_kappa"] == pytest.approx(expected, abs=1e-9)
    assert gender.loc["all", "stories"] == 4 and gender.loc["all", "extractors"] == 2
    assert pd.read_parquet(out / "extractor_agreement.parquet").shape == table.shape


def test_the_table_and_the_live_metric_agree(tmp_path: Path) -> None:
    """The scorer's per-attribute figures (``breakdown``) are the table's, being one computation."""
    from inspect_ai.scorer import SampleScore

    from stereoprobe.scorers.stereotales_metrics import agreement

    samples = _log_samples()
    for s in samples:
        s.scores["stereotales_extraction"].value = {"refused": 0.0, "unknown_gender": 0.0}
    scores = [SampleScore(score=s.scores["stereotales_extraction"], sample_id=s.id, sample_metadata=s.metadata)
              for s in samples]
    live = agreement(scores)
    table = extractor_agreement_table([write_log(tmp_path / "run.eval", samples)], ["gender"]).set_index("language")
    assert live["fleiss_kappa_gender"] == pytest.approx(table.loc["all", "fleiss_kappa"], abs=1e-12)
    assert live["fleiss_kappa_gender_fr"] == pytest.approx(table.loc["fr", "fleiss_kappa"], abs=1e-12)
    assert live["fleiss_kappa_mean"] == pytest.approx(HAND_KAPPA, abs=1e-12)


def test_release_tables_give_an_empty_table_with_its_columns(tmp_path: Path) -> None:
    """The public release holds the consensus only: the table is written, empty, with its columns."""
    from _stories_fixtures import planted_stories, release_rows

    release_rows(planted_stories(models=("prov1/m1",), languages=("en",), per_cell=5), ATTRS).to_parquet(
        tmp_path / "stories.parquet")
    out = tmp_path / "out"
    assert main(["associations", str(tmp_path / "stories.parquet"), "--out", str(out), "--min-row-sum", "2"]) == 0
    table = pd.read_csv(out / "extractor_agreement.csv")
    assert table.empty and list(table.columns) == ["model", "language", "attribute", "stories", "extractors",
                                                   "fleiss_kappa"]
