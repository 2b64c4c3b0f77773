"""Every statistic of stereoprobe, once, in scipy's manner: pure functions, formula and citation in the
docstring, result objects with ``confidence_interval(confidence_level=0.95)`` or a ``confidence_interval``
field, doctested examples, each checked against scipy / statsmodels or a hand-worked table in ``tests/stats``.

- :mod:`~stereoprobe.stats.common` — :class:`~stereoprobe.stats.common.ConfidenceInterval`, critical values,
  percentile intervals.
- :mod:`~stereoprobe.stats.proportion` — Wilson interval, Newcombe interval of a difference, pooled z-test.
- :mod:`~stereoprobe.stats.counts` — Garwood's exact Poisson interval; the one interval of every count column.
- :mod:`~stereoprobe.stats.bootstrap` — cluster bootstrap of sums and ratios; of the number of BH discoveries.
- :mod:`~stereoprobe.stats.paired` — Wilcoxon signed-rank, exact McNemar.
- :mod:`~stereoprobe.stats.correlation` — Pearson (Fisher z) and Spearman (Bonett–Wright, bootstrap).
- :mod:`~stereoprobe.stats.agreement` — Fleiss' kappa, Krippendorff's alpha, Jaccard.
- :mod:`~stereoprobe.stats.effect` — χ², bias-corrected Cramér's V, fraction and lift.
- :mod:`~stereoprobe.stats.intervals` — Katz risk-ratio interval and the lift interval.
- :mod:`~stereoprobe.stats.fisher` — Fisher exact and Fisher–Freeman–Halton tests, Clopper–Pearson.
- :mod:`~stereoprobe.stats.multiple_testing` — Benjamini–Hochberg and Benjamini–Yekutieli.
"""
