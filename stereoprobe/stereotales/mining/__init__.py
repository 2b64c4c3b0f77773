"""StereoTales association mining, from stories to tables and report.

In the order the data flows: :mod:`.stories` (+ :mod:`.stories_logs`, :mod:`.stories_release`) read eval
logs or the public release into the stories frame; :mod:`.associations` runs the paper's two-step
statistics (:mod:`.config` its constants, :mod:`.pvalues` the step-1 p-values, :mod:`.aggregate` the
cross-model and cross-language views); :mod:`.tables` shapes the published tables; :mod:`.report` writes the
HTML report; :mod:`.api` ties them together for the ``stereoprobe associations`` command;
:mod:`.synthetic` makes stories with known truth for tests and benchmarks.

The probe's skeleton: the contract is :mod:`stereoprobe.stereotales.contract` (shared with the task and the
judge), the reader :mod:`.stories`, the Python API :mod:`.api` (:func:`analyze` = read + compute with
:class:`AssociationOptions`, :func:`write`), the descriptor :mod:`.probe` and its leaderboard figures
:mod:`.leaderboard`::

    from stereoprobe.stereotales.mining import AssociationOptions, analyze, write
    write(analyze(["logs/stereotales"], AssociationOptions(by_language=True)), "results/st")
"""


# The Python API (:mod:`stereoprobe.stereotales.mining.api`), imported on first use so that importing a submodule (the contract, the
# descriptor) stays cheap.
__all__ = ['AssociationOptions', 'AssociationsResult', 'analyze', 'write']


def __getattr__(name: str) -> object:
    if name in __all__:
        import importlib

        return getattr(importlib.import_module("stereoprobe.stereotales.mining.api"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
