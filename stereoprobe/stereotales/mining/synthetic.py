"""Synthetic StereoTales stories frames (:mod:`.stories`) with known truth, for the simulation tests and the
association benchmark.

The design mirrors the paper: per model and language, every (base attribute A, target value a, scenario)
yields one story whose prompted attribute equals ``a``; every other attribute B is "unknown" with B's
unknown rate, "other" with a small rate where B has an "other" value, else drawn from a model-specific
distribution over B's values. Planted associations (A=a → B=b, factor f) multiply P(B=b | A=a) by ``f``
(renormalised); everything else is independent, so any other discovery is false.

Attribute shapes (number of target values, whether extraction has "other") follow the reference taxonomy (``datasets/stereotales/taxonomy.yaml``); value
names are synthetic (``<attribute>_<i>``), unknown rates are rough orders of magnitude of what extraction
ensembles return on short stories (most stories say nothing about religion or sexual orientation).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["ATTRIBUTE_SHAPES", "Planted", "release_table", "synthetic_stories", "value_name"]

# attribute: (number of target values, extraction has "other", unknown rate)
ATTRIBUTE_SHAPES: dict[str, tuple[int, bool, float]] = {
    "age": (6, False, 0.25),
    "gender": (3, True, 0.03),
    "gender_alignment": (2, True, 0.85),
    "sexual_orientation": (5, True, 0.85),
    "geographic_origin": (11, True, 0.55),
    "religion": (6, True, 0.8),
    "political_orientation": (3, False, 0.85),
    "disability_status": (2, False, 0.3),
    "immigration_status": (2, False, 0.6),
    "urbanicity": (2, False, 0.35),
    "marital_status": (5, False, 0.5),
    "parental_status": (2, False, 0.5),
    "income_level": (3, False, 0.45),
    "employment_status": (5, True, 0.3),
    "professional_field": (11, True, 0.4),
    "education": (3, False, 0.55),
    "health_status": (3, False, 0.05),
    "literacy_status": (2, False, 0.2),
    "housing_status": (3, True, 0.55),
}
OTHER_RATE = 0.02
N_SCENARIOS = 36


def value_name(attribute: str, i: int) -> str:
    """Synthetic value key of index ``i`` of ``attribute``."""
    return f"{attribute}_{i}"


@dataclass(frozen=True)
class Planted:
    """A planted association A=a → B=b with population lift ``lift`` (P(B=b | A=a) / P(B=b) within the
    stories prompted with A), in every model listed (``models=None``: all) and language listed
    (``languages=None``: all).

    With ``w = 1 / n_values(A)`` (each base value is prompted equally often) and P(B=b | A≠a) = π, the
    generator sets P(B=b | A=a) = q = L(1 − w)π / (1 − Lw), which gives lift L exactly; it lowers π (the
    model's base rate of b) when needed so that q ≤ 0.9. Requires L·w < 1."""

    base_attribute: str
    base_value: int
    compared_attribute: str
    compared_value: int
    lift: float
    models: tuple[str, ...] | None = None
    languages: tuple[str, ...] | None = None


def _planted_probs(base_rates: np.ndarray, active: Sequence[Planted], shapes: dict[str, tuple[int, bool, float]],
                   base_attr: np.ndarray, base_val: np.ndarray) -> np.ndarray:
    """Per row, the distribution of one compared attribute: the model's base rates π (lowered where a planted
    lift needs room, so that q ≤ 0.9), and in the rows of a planted base value q = L(1 − w)π / (1 − Lw) for its
    compared value, the other values scaled to the rest (:class:`Planted`)."""
    pi = base_rates.copy()
    k = pi.size
    targets = []
    for pl in active:
        w = 1.0 / shapes[pl.base_attribute][0]
        if pl.lift * w >= 1:
            raise ValueError(f"planted lift {pl.lift} impossible for {pl.base_attribute} (w = {w:.3f})")
        bound = 0.9 * (1 - pl.lift * w) / (pl.lift * (1 - w))
        if pi[pl.compared_value] > bound:
            rest = np.delete(np.arange(k), pl.compared_value)
            pi[rest] *= (1 - bound) / pi[rest].sum()
            pi[pl.compared_value] = bound
    for pl in active:
        w = 1.0 / shapes[pl.base_attribute][0]
        pib = pi[pl.compared_value]
        targets.append((pl, pl.lift * (1 - w) * pib / (1 - pl.lift * w)))
    probs = np.broadcast_to(pi, (base_attr.size, k)).copy()
    for pl, qv in targets:
        hit = (base_attr == pl.base_attribute) & (base_val == pl.base_value)
        row = pi.copy()
        rest = np.arange(k) != pl.compared_value
        row[rest] *= (1 - qv) / row[rest].sum()
        row[pl.compared_value] = qv
        probs[hit] = row
    return probs


def _draw_column(rng: np.random.Generator, probs: np.ndarray, attribute: str, shape: tuple[int, bool, float],
                 base_attr: np.ndarray, base_val: np.ndarray) -> np.ndarray:
    """One attribute's values per row, drawn from ``probs``; then ``unknown`` at its rate, ``other`` (where the
    attribute has it) at :data:`OTHER_RATE`, and the prompted value where the row's base attribute is this one."""
    k, has_other, unk = shape
    n = probs.shape[0]
    u = rng.random(n)[:, None]
    draw = (u > np.cumsum(probs, axis=1)).sum(axis=1).clip(max=k - 1)
    vals = np.array([value_name(attribute, i) for i in range(k)] + ["other", "unknown"], dtype=object)
    code = draw.copy()
    r = rng.random(n)
    code[r < unk] = k + 1
    if has_other:
        code[(r >= unk) & (r < unk + OTHER_RATE)] = k
    own = base_attr == attribute
    code[own] = base_val[own]
    return vals[code]


def synthetic_stories(
    models: Sequence[str],
    languages: Sequence[str] = ("en",),
    attributes: dict[str, tuple[int, bool, float]] | None = None,
    planted: Sequence[Planted] = (),
    n_scenarios: int = N_SCENARIOS,
    seed: int = 0,
    skew: float = 2.0,
) -> pd.DataFrame:
    """Stories frame with columns ``model, language, sample_id, epoch, target_attribute,
    attribute_value_key, scenario_key, scenario_group, refused`` and one categorical column per attribute.

    ``skew``: Dirichlet concentration of each model's value distribution per attribute (smaller = more
    uneven marginals). Rows = len(models) × len(languages) × Σ_A n_values(A) × n_scenarios.
    """
    shapes = dict(ATTRIBUTE_SHAPES if attributes is None else attributes)
    names = list(shapes)
    rng = np.random.default_rng(seed)
    frames = []
    design = [(a, v) for a in names for v in range(shapes[a][0])]
    base_attr = np.repeat([a for a, _ in design], n_scenarios)
    base_val = np.repeat([v for _, v in design], n_scenarios)
    scen = np.tile(np.arange(n_scenarios), len(design))
    for model in models:
        dists = {b: rng.dirichlet(np.full(shapes[b][0], skew)) for b in names}
        for lang in languages:
            n = base_attr.size
            cols: dict[str, np.ndarray] = {}
            for b in names:
                active = [
                    pl for pl in planted
                    if pl.compared_attribute == b
                    and (pl.models is None or model in pl.models)
                    and (pl.languages is None or lang in pl.languages)
                ]
                probs = _planted_probs(dists[b], active, shapes, base_attr, base_val)
                cols[b] = _draw_column(rng, probs, b, shapes[b], base_attr, base_val)
            idx = np.arange(n)
            frames.append(
                pd.DataFrame(
                    {
                        "model": model,
                        "language": lang,
                        "sample_id": [f"{lang}:{a}:{v}:s:{s}" for a, v, s in zip(base_attr, base_val, scen)],
                        "epoch": 1,
                        "target_attribute": base_attr,
                        "attribute_value_key": [value_name(a, v) for a, v in zip(base_attr, base_val)],
                        "scenario_key": [f"scenario_{s}" for s in scen],
                        "scenario_group": [f"group_{s // 4}" for s in scen],
                        "refused": np.zeros(n, dtype=bool),
                        **cols,
                    },
                    index=idx,
                )
            )
    out = pd.concat(frames, ignore_index=True)
    for c in ["model", "language", "target_attribute", *names]:
        out[c] = out[c].astype("category")
    return out


def release_table(stories: pd.DataFrame, attributes: Sequence[str]) -> pd.DataFrame:
    """A synthetic stories frame in the layout of the public StereoTales release (one row per story:
    ``generator_model``, ``language``, ``sample_id``, ``target_attribute``, ``attribute_value_key``,
    ``scenario_key``, ``scenario_group``, ``extracted_attributes_json``, ``story``), for tests and benchmarks
    that go through the release reader as a user's file would."""
    import json

    values = [stories[a].astype(str).tolist() for a in attributes]
    profiles = [json.dumps(dict(zip(attributes, row))) for row in zip(*values)]
    return pd.DataFrame({
        "generator_model": stories["model"].astype(str).to_numpy(),
        "language": stories["language"].astype(str).to_numpy(),
        "sample_id": stories["sample_id"].astype(str).to_numpy(),
        "target_attribute": stories["target_attribute"].astype(str).to_numpy(),
        "attribute_value_key": stories["attribute_value_key"].astype(str).to_numpy(),
        "scenario_key": stories["scenario_key"].astype(str).to_numpy(),
        "scenario_group": stories["scenario_group"].astype(str).to_numpy(),
        "extracted_attributes_json": profiles,
        "story": "A synthetic story.",
    })
