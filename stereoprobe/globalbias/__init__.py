"""GlobalBias (Siddique et al., EMNLP 2024): name x descriptor sentences, APX bias scores, character profiles.

One skeleton, as every probe package: :mod:`.contract` (names shared by the tasks, scorers and readers),
:mod:`.inputs` / :mod:`.profiles_report` (the readers), :mod:`.apx` / :mod:`.profiles` (the statistics;
:mod:`.compute` / :mod:`.profiles_compute` apply them to what was read),
:mod:`.report` / :mod:`.profiles_report` (tables and HTML), :mod:`.api` (the Python API: :func:`analyze` and
:func:`analyze_profiles` = read + compute, :func:`write`), :mod:`.probe` (the two descriptors the leaderboard,
planner, CLI and index read) and :mod:`.leaderboard` (their leaderboard figures)::

    from stereoprobe.globalbias import GlobalBiasOptions, analyze, write
    write(analyze(["logs/globalbias"], GlobalBiasOptions()), "results/globalbias")
"""


# The Python API (:mod:`stereoprobe.globalbias.api`), imported on first use so that importing a submodule (the contract, the
# descriptor) stays cheap.
__all__ = ['GlobalBiasOptions', 'GlobalBiasResult', 'ProfilesOptions', 'ProfilesResult', 'analyze', 'analyze_profiles', 'write']


def __getattr__(name: str) -> object:
    if name in __all__:
        import importlib

        return getattr(importlib.import_module("stereoprobe.globalbias.api"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
