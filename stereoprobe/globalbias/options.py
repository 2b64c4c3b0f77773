"""The settings of ``stereoprobe globalbias`` (:class:`GlobalBiasOptions`) and ``stereoprobe profiles``
(:class:`ProfilesOptions`): one frozen object each, checked once when it is made and passed whole to the
computation (:mod:`stereoprobe.globalbias.compute`, :func:`stereoprobe.globalbias.apx.score_table`)."""

from __future__ import annotations

from dataclasses import dataclass

from stereoprobe.errors import InputError

__all__ = ["GlobalBiasOptions", "ProfilesOptions"]


@dataclass(frozen=True)
class GlobalBiasOptions:
    """Settings of ``stereoprobe globalbias``: the perplexity ``measure`` (``token``, the paper's, or ``byte``),
    the reference rounding, the stricter test (``welch`` or ``permutation``, its FDR level ``alpha``,
    permutations, seed, ``test_scale``) and the templates of the validation."""

    measure: str = "token"
    faithful_rounding: bool = True
    test_method: str = "welch"
    alpha: float = 0.05
    n_permutations: int = 2000
    seed: int = 0
    test_scale: str = "log"
    validation_templates: tuple[int, ...] = (1,)

    def run_settings(self) -> dict[str, object]:
        """The settings as ``run_info.json`` records them (the leaderboard re-reads ``alpha``)."""
        return {"measure": self.measure, "faithful_rounding": self.faithful_rounding, "test": self.test_method,
                "alpha": self.alpha, "permutations": self.n_permutations, "seed": self.seed,
                "test_scale": self.test_scale, "validation_templates": list(self.validation_templates)}

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise InputError(f"alpha must lie strictly between 0 and 1, got {self.alpha}")
        if self.n_permutations < 1:
            raise InputError(f"the number of permutations must be at least 1, got {self.n_permutations}")


@dataclass(frozen=True)
class ProfilesOptions:
    """Settings of ``stereoprobe profiles``: label permutations, cross-validation folds, the feature ablation,
    seed, classifier (``svc`` as the reference code, or ``linear-ovr``), top words' direction, the reference's
    rounding (``faithful``) and duplicate handling."""

    n_permutations: int = 100
    folds: int = 5
    ablation: bool = True
    seed: int = 42
    classifier: str = "svc"
    over_represented_only: bool = False
    faithful: bool = True
    keep_duplicates: bool = False

    def __post_init__(self) -> None:
        if self.n_permutations < 1:
            raise InputError(f"the number of permutations must be at least 1, got {self.n_permutations}")
        if self.folds < 2:
            raise InputError(f"cross-validation needs at least 2 folds, got {self.folds}")
