"""StereoTales fidelity items checked against independent computations: the certified bound behind the
asymptotic p-value shortcut, the "N/A" effect of non-significant pairs, the p-value method of every p-value,
and the attribute distributions by scenario."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from stereoprobe.stereotales.mining.associations import mine_associations
from stereoprobe.stereotales.mining.config import MiningConfig
from stereoprobe.stereotales.mining.pvalues import exact_pvalue_upper_bound, family_pvalues, log_table_count_bound
from stereoprobe.stereotales.mining.tables import attribute_distributions_by_scenario


def _tables_with_margins(rows: list[int], cols: list[int]):
    """Every non-negative integer table with these margins (brute force, written for the test)."""
    c = len(cols)

    def fill(i: int, remaining: list[int]):
        if i == len(rows) - 1:
            if sum(remaining) == rows[i]:
                yield [list(remaining)]
            return
        for row in itertools.product(*[range(min(rows[i], r) + 1) for r in remaining]):
            if sum(row) == rows[i]:
                for rest in fill(i + 1, [r - x for r, x in zip(remaining, row)]):
                    yield [list(row), *rest]

    yield from (np.array(t) for t in fill(0, list(cols)))


def _pmf(t: np.ndarray) -> float:
    """Multivariate hypergeometric probability of a table given its margins, with math.comb only."""
    rows, cols, n = t.sum(axis=1), t.sum(axis=0), int(t.sum())
    num = math.prod(math.factorial(int(x)) for x in rows) * math.prod(math.factorial(int(x)) for x in cols)
    den = math.factorial(n) * math.prod(math.factorial(int(x)) for x in t.ravel())
    return num / den


@pytest.mark.parametrize(
    "table",
    [
        [[5, 0, 1], [0, 6, 1], [1, 0, 5]],
        [[4, 1], [1, 4], [3, 3]],
        [[7, 0, 0, 1], [0, 6, 1, 0]],
        [[2, 2, 2], [2, 2, 2]],
    ],
)
def test_bound_holds_the_exact_pvalue_and_the_table_count(table) -> None:
    t = np.array(table)
    all_tables = list(_tables_with_margins(list(t.sum(axis=1)), list(t.sum(axis=0))))
    p_obs = _pmf(t)
    exact = sum(q for q in map(_pmf, all_tables) if q <= p_obs * (1 + 1e-7))
    assert len(all_tables) <= math.exp(log_table_count_bound(t)) * (1 + 1e-9)
    assert exact <= exact_pvalue_upper_bound(t) * (1 + 1e-9)


def test_bound_is_the_product_formula() -> None:
    t = np.array([[30, 5, 5], [5, 30, 5]])
    rows_first = math.comb(40 + 2, 2) ** 2  # each row of 40 spread over 3 columns
    cols_first = math.comb(35 + 1, 1) ** 2 * math.comb(10 + 1, 1)  # each column split over 2 rows
    assert math.exp(log_table_count_bound(t)) == pytest.approx(min(rows_first, cols_first), rel=1e-9)
    assert exact_pvalue_upper_bound(t) == pytest.approx(min(1.0, _pmf(t) * min(rows_first, cols_first)), rel=1e-6)


def test_asymptotic_shortcut_only_where_the_bound_decides() -> None:
    strong = np.array([[120, 5, 5], [5, 120, 5], [5, 5, 120]])  # Cochran table, overwhelming association
    weak = np.array([[30, 20, 22], [22, 30, 20], [20, 22, 30]])  # Cochran table, borderline
    assert exact_pvalue_upper_bound(strong) < 1e-7 < exact_pvalue_upper_bound(weak)
    fam = family_pvalues([strong, weak], MiningConfig(mc_resamples=20_000, seq_max=16_384))
    assert fam["p_method"].iloc[0] == "asymptotic"
    assert fam["p_method"].iloc[1] != "asymptotic"
    ref = family_pvalues([strong, weak], MiningConfig(mc_resamples=20_000, p_method="reference-mc"))
    assert (fam["significant"] == ref["significant"]).all()


def _stories(n_per_value: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for value in ("man", "woman"):
        for i in range(n_per_value):
            income = "low" if (value == "man") == (i % 10 < 8) else "high"
            rows.append({"model": "m", "language": "en", "target_attribute": "gender", "gender": value,
                         "income": income, "age": rng.choice(["young", "old"]),
                         "scenario_key": f"s{i % 2}", "scenario_group": "g", "refused": False,
                         "extraction_failed": False})
    return pd.DataFrame(rows)


def test_non_significant_pairs_get_na_unless_asked_and_every_p_has_its_method() -> None:
    stories = _stories()
    res = mine_associations(stories, ["gender", "income", "age"], MiningConfig(mc_resamples=2000))
    pairs = res.pair_tests.set_index("compared_attribute")
    assert bool(pairs.loc["income", "significant"]) and pairs.loc["income", "effect"] != "N/A"
    assert not bool(pairs.loc["age", "significant"]) and pairs.loc["age", "effect"] == "N/A"
    assert res.pair_tests["p_method"].isin(["exact", "asymptotic", "sequential-mc", "reference-mc"]).all()
    assert (res.value_tests["pair_p_method"] == pairs.loc["income", "p_method"]).all()
    every = mine_associations(stories, ["gender", "income", "age"], MiningConfig(mc_resamples=2000,
                                                                                 effect_all_pairs=True))
    assert every.pair_tests.set_index("compared_attribute").loc["age", "effect"] in (
        "negligible", "small", "medium", "large")


def test_attribute_distributions_by_scenario_against_a_hand_count() -> None:
    stories = _stories(n_per_value=10)
    stories.loc[0, "refused"] = True  # a refused story is not counted
    got = attribute_distributions_by_scenario(stories, ["gender", "income"])
    assert set(got["attribute"]) == {"income"}  # gender is the prompted attribute of every story
    kept = stories[~stories["refused"]]
    for scenario, g in kept.groupby("scenario_key"):
        counts = g["income"].value_counts()
        sub = got[got["scenario_key"] == scenario].set_index("value")
        for value, count in counts.items():
            assert sub.loc[value, "count"] == count
            assert sub.loc[value, "share"] == pytest.approx(count / len(g))
