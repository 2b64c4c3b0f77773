"""Integer options with both bounds: counts of resamples, seeds, workers (argparse types).

Every numeric option of the command line has an upper bound checked before any work starts, so that a typo
(``--n-boot 1e12``) is one line and exit code 2 instead of exhausted memory or a run that never ends. The
bounds, shown in each option's help:

- :data:`MAX_SEED` = 2**32 - 1: seeds are 32-bit, as numpy's legacy generator and most references take them;
- :data:`MAX_COUNT` = 100,000: bootstrap draws, permutations and other resampling counts (50 times the
  usual 2,000; the papers use at most 10,000);
- :data:`MAX_MC_RESAMPLES` = 10,000,000: Monte Carlo resamples of StereoTales' step-1 test (20 times the
  paper's 500,000);
- :data:`MAX_JOBS` = 256 worker processes.
"""

from __future__ import annotations

import argparse

MAX_SEED = 2**32 - 1
MAX_COUNT = 100_000
MAX_MC_RESAMPLES = 10_000_000
MAX_JOBS = 256


class IntBetween:
    """An argparse type: an integer in the closed range [low, high] (``1e3`` and ``3.0`` are not integers)."""

    def __init__(self, low: int, high: int, doc: str | None = None) -> None:
        self.low, self.high = low, high
        self.__name__ = f"integer from {low:,} to {high:,}"
        self.__doc__ = doc or f"An integer from {low:,} to {high:,}."

    def __call__(self, text: str) -> int:
        try:
            value = int(text)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if not self.low <= value <= self.high:
            raise argparse.ArgumentTypeError(f"{text!r} must be an integer from {self.low:,} to {self.high:,}")
        return value

    def __repr__(self) -> str:
        return f"int_between({self.low}, {self.high})"


def int_between(low: int, high: int) -> IntBetween:
    """An argparse type: an integer in the closed range [low, high]."""
    return IntBetween(low, high)


seed = IntBetween(0, MAX_SEED, "A seed: an integer from 0 to 2**32 - 1.")
bootstrap_count = IntBetween(1, MAX_COUNT, "Bootstrap draws or permutations: 1 to 100,000.")
resample_count = IntBetween(0, MAX_COUNT, "Resamples where 0 means off: 0 to 100,000.")
mc_resamples = IntBetween(1, MAX_MC_RESAMPLES, "Monte Carlo resamples: 1 to 10,000,000.")
jobs = IntBetween(1, MAX_JOBS, "Worker processes: 1 to 256.")
