"""The settings of ``stereoprobe reference`` (:class:`ReferenceOptions`), shared by the run
(:mod:`stereoprobe.reference.run`) and the page that records them (:mod:`stereoprobe.reference.page`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ReferenceOptions"]


@dataclass(frozen=True)
class ReferenceOptions:
    """Settings of the steps: ``permutations`` and ``folds`` of ``stereoprobe profiles`` (label permutations of
    the test against chance, folds of the cross-validated interval), ``n_boot`` and ``seed`` of the leaderboard's
    bootstrap intervals."""

    permutations: int = 100
    folds: int = 5
    n_boot: int = 2000
    seed: int = 0

    def settings(self) -> dict[str, int]:
        """The settings recorded in the page's ``run_info.json``."""
        return {"permutations": self.permutations, "folds": self.folds, "n_boot": self.n_boot, "seed": self.seed}
