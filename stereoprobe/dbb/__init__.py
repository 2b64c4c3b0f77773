"""DBB (Description-based Bias Benchmark; Pan et al., Findings of EMNLP 2025): data expansion, builder,
scoring and bias statistics.

One skeleton, as every probe package: :mod:`.contract` (names shared by the tasks, scorers and readers),
:mod:`.results` (the reader and the per-run tables), :mod:`.stats` (the statistics), :mod:`.report` (HTML),
:mod:`.api` (the Python API: :func:`analyze` = read + compute, :func:`write`), :mod:`.probe` (the descriptor
the leaderboard, planner, CLI and index read) and :mod:`.leaderboard` (its leaderboard figures)::

    from stereoprobe.dbb import DBBOptions, analyze, write
    write(analyze(["logs/dbb"], DBBOptions()), "results/dbb")
"""


# The Python API (:mod:`stereoprobe.dbb.api`), imported on first use so that importing a submodule (the contract, the
# descriptor) stays cheap.
__all__ = ['DBBOptions', 'DBBResult', 'analyze', 'write']


def __getattr__(name: str) -> object:
    if name in __all__:
        import importlib

        return getattr(importlib.import_module("stereoprobe.dbb.api"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
