"""The constants of StereoTales association mining (:class:`MiningConfig`), with the paper's defaults."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

PMethod = Literal["auto", "reference-mc", "sequential-mc", "asymptotic"]
P_METHODS: tuple[str, ...] = ("auto", "reference-mc", "sequential-mc", "asymptotic")


@dataclass(frozen=True)
class MiningConfig:
    """Every constant of the association statistics, with the paper's defaults (Le Jeune et al. 2026,
    StereoTales, arXiv 2605.10442, association-mining section; upstream constants of
    Giskard-AI/stereotales-pipeline ``src/stereotales_pipeline/step_02_compute_associations.py``).

    Step 1 / step 2 (upstream constants): ``min_row_sum`` (10), ``mc_resamples`` (500,000), ``seed`` (42),
    ``alpha`` (BH level, 0.05), ``compared_drop`` (values of B dropped: unknown, other), ``base_drop``
    (values of A dropped: unknown). Filter (the paper's): ``filter_effects`` (medium, large), ``filter_p_by``
    (BY-adjusted cell p < 0.05), ``filter_min_lift`` (≥ 2).

    ``fdr_family``: "attribute" = BH over the B of one (model, slice, A) as upstream; "run" = one BH family
    over every pair test of the call (both adjusted values are always reported: ``p_bh``, ``p_bh_run``).

    ``p_method``: "reference-mc" = upstream exactly (scipy Monte Carlo, fresh ``default_rng(seed)`` per
    test); "auto" = exact p-value where cheap (tables with two rows or two columns and at most
    ``exact_max_tables`` tables with their margins, enumerated), asymptotic for decisively significant
    Cochran tables, sequential Monte Carlo otherwise, falling back to the reference where undecided;
    "sequential-mc" = "auto" without the exact and asymptotic shortcuts; "asymptotic" = FFH χ²
    approximation everywhere (exact for 2×2; fastest, no decision guarantee).

    Fast-path tuning: ``seq_delta`` (error budget per test for certifying a decision; split over the looks),
    ``seq_first``/``seq_max`` (first and last sequential batch totals, doubling), ``exact_max_tables``
    (0 = no enumeration), ``asymptotic_max_p`` (a Cochran table whose certified upper bound of the exact
    p-value, :func:`~stereoprobe.stereotales.mining.pvalues.exact_pvalue_upper_bound`, is at most this is
    decided without Monte Carlo and reported with its asymptotic p-value; 0 = off).

    ``effect_all_pairs``: False (upstream) writes the effect category "N/A" for pairs that are not
    significant; True gives every pair its category (Cramér's V is reported for every pair either way).

    Beyond the paper: ``lift_ci_level`` (Katz interval, 0.95), ``bootstrap_reps`` (stability, 0 = off),
    ``bootstrap_seed``, ``n_jobs`` (processes over (model, slice)).
    """

    min_row_sum: int = 10
    mc_resamples: int = 500_000
    seed: int = 42
    alpha: float = 0.05
    compared_drop: tuple[str, ...] = ("unknown", "other")
    base_drop: tuple[str, ...] = ("unknown",)
    fdr_family: Literal["attribute", "run"] = "attribute"
    p_method: PMethod = "auto"
    filter_effects: tuple[str, ...] = ("medium", "large")
    filter_p_by: float = 0.05
    filter_min_lift: float = 2.0
    effect_all_pairs: bool = False
    lift_ci_level: float = 0.95
    bootstrap_reps: int = 0
    bootstrap_seed: int = 12345
    n_jobs: int = 1
    seq_delta: float = 1e-6
    seq_first: int = 128
    seq_max: int = 262_144
    asymptotic_max_p: float = 1e-7
    exact_max_tables: int = 20_000

    def __post_init__(self) -> None:
        if self.p_method not in ("auto", "reference-mc", "sequential-mc", "asymptotic"):
            raise ValueError(f"MiningConfig.p_method: unknown method {self.p_method!r}")
        if self.fdr_family not in ("attribute", "run"):
            raise ValueError(f"MiningConfig.fdr_family: expected 'attribute' or 'run', got {self.fdr_family!r}")
        if self.min_row_sum < 1:
            raise ValueError("MiningConfig.min_row_sum must be >= 1")
        if self.mc_resamples < 1 or self.seq_first < 1 or self.seq_max < self.seq_first:
            raise ValueError("MiningConfig: mc_resamples >= 1 and 1 <= seq_first <= seq_max required")
        for name in ("alpha", "filter_p_by", "seq_delta"):
            v = getattr(self, name)
            if not 0 < v < 1:
                raise ValueError(f"MiningConfig.{name} must lie in (0, 1), got {v}")
        if not 0 < self.lift_ci_level < 1:
            raise ValueError("MiningConfig.lift_ci_level must lie in (0, 1)")
        if not 0 <= self.asymptotic_max_p < 1:
            raise ValueError("MiningConfig.asymptotic_max_p must lie in [0, 1)")
        if self.bootstrap_reps < 0 or self.n_jobs < 1:
            raise ValueError("MiningConfig: bootstrap_reps >= 0 and n_jobs >= 1 required")




def config_dict(config: MiningConfig) -> dict:
    """The configuration as a JSON-serialisable dict (for run manifests)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(config).items()}
