"""What a task's live metric hands inspect: defined values only (issue 42.8, "a quiet console").

inspect prints every entry of a metric's value in the results block of the console (``nan`` too:
``inspect_ai/_display/core/results.py`` ``task_scores``), and a metric returning a mapping gives one result per
key, so an empty mapping gives none (``inspect_ai/_eval/task/results.py`` ``scorer_for_metrics``). A metric
that may be undefined (no instance, no rated story, no response) therefore returns :func:`defined`'s mapping:
``{name: value}`` when the value is a number, ``{}`` when it is NaN or None. The log's results then
hold the defined figures under the same keys as before; where a figure is undefined it is absent, and the
post-processing tables, computed from the samples, still say why (e.g. DBB's summary ``–`` with
``n_instances``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["defined", "defined_metric", "defined_only", "live_figure", "live_name"]


def _is_defined(value: float | None) -> bool:
    return value is not None and not math.isnan(float(value))


def defined(name: str, value: float | None) -> dict[str, float]:
    """``{name: value}`` when ``value`` is a number, ``{}`` when it is NaN or None.

    >>> defined("mean_s_biased", 31.5), defined("mean_s_biased", float("nan")), defined("x", None)
    ({'mean_s_biased': 31.5}, {}, {})
    """
    return {name: float(value)} if _is_defined(value) else {}  # type: ignore[arg-type]


def defined_only(values: Mapping[str, float | None]) -> dict[str, float]:
    """The entries of ``values`` that are numbers (not NaN or None), in their order.

    >>> defined_only({"a": 1.0, "b": float("nan"), "c": 0.0})
    {'a': 1.0, 'c': 0.0}
    """
    return {k: float(v) for k, v in values.items() if _is_defined(v)}  # type: ignore[arg-type]


def live_name(name: str, scores: Sequence[Any]) -> str:
    """The key of figure ``name`` over ``scores``: ``name`` in the run's results; on inspect's live progress
    line ``name (n=N)``, N the scores it is over (issue 42.8, "the live and final figures agree").

    inspect recomputes the live line at most about once a second and not after the last sample, so a batch
    of samples that completes together leaves the line with a figure over the first of them (profiles'
    parse-failure rate 0.00 live over 1 response, 0.667 in the results over 3). Labelled with its N, the
    live figure is right at every moment: it states what it is computed over, and the results give the
    figure over every sample under the plain name.
    """
    from stereoprobe.inspect_internals import in_live_metrics_update

    return f"{name} (n={len(scores)})" if in_live_metrics_update() else name


def defined_metric(name: str, compute: Callable[[Sequence[Any]], float]) -> Callable[[Sequence[Any]], dict[str, float]]:
    """The metric function that hands inspect :func:`defined` ``(name, compute(scores))``: the figure under
    ``name`` (on the live progress line, :func:`live_name`'s) when it is defined, nothing when not."""

    def metric_value(scores: Sequence[Any]) -> dict[str, float]:
        return defined(live_name(name, scores), compute(scores))

    return metric_value


def live_figure(name: str, compute: Callable[[Sequence[Any]], float]) -> Callable[[Sequence[Any]], float | dict[str, float]]:
    """The metric function of a figure that is a plain number in the run's results (under the metric's own
    ``name``, NaN included): ``compute(scores)`` there, ``{live_name(name, scores): compute(scores)}`` on
    inspect's live progress line."""

    def metric_value(scores: Sequence[Any]) -> float | dict[str, float]:
        value = compute(scores)
        key = live_name(name, scores)
        return value if key == name else {key: value}

    return metric_value
