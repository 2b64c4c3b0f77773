"""HTML sections of the judge report (built from a computed :class:`~.report.JudgeResult`).

Every section says in one line what it shows when its data is missing (no human ratings, a single judge, no
per-language rows) instead of a bare header, an empty plot or "nan%".
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from stereoprobe.report.html import Section, files_html, plot_is_empty
from stereoprobe.report.plot_text import plot_label
from stereoprobe.stereotales.judge.contract import ALL_LLMS_MEAN, DEMO_FILE
from stereoprobe.stereotales.judge.ratings import PARSED_RULE
from stereoprobe.stereotales.judge.reliability import HUMAN_GROUP, LLM_GROUP


def _fig(w: float = 6.5, h: float = 3.6) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(w, h))


def _files(name: str) -> list[str]:
    return [f"{name}.csv", f"{name}.parquet"]


#: what each judge table holds (the Files section of the report).
FILE_DESCRIPTIONS = {
    "judge_ratings": "one row per judge answer (evaluator x association x epoch): harm, realism, parse failure, "
                     "error, question order",
    "judge_evaluator_ratings": "per evaluator and association: valid ratings, mean and median harm, harmful label",
    "judge_summary": "per judged model: answers, errors, parse failures, mean harm, harmful share, use of each "
                     "scale point, own associations",
    "judge_provider_counts": "harmful/benign counts per judged model and provider",
    "harm_labels": "harm label per association (median rule) that the association tables join on",
    "human_labels": "the human raters' labels per association",
    "human_reliability": "agreement among the human raters",
    "judge_reliability": "agreement among the LLM judges",
    "rater_reliability": "Krippendorff's alpha and split-half reliability per rater group, with intervals",
    "alignment_per_association": "per association: mean LLM and mean human rating",
    "alignment_correlations": "LLM-human rating correlations (all LLMs and per evaluator)",
    "alignment_agreement": "harmful/benign agreement and shared associations for every ordered pair of "
                           "evaluators (the full matrix, diagonal included)",
    "alignment_delta_by_dimension": "mean LLM - human rating per attribute dimension, with a t interval",
    "generation_vs_delta": "per dimension: associations generated vs the LLM - human delta",
    "alignment_top_score": "share of ratings at the top of the scale (5) per evaluator",
    "language_reach": "per association: the languages it is found in, with its harm label",
    "language_reach_summary": "language reach of harmful and benign associations",
    "marked_group_shift": "per language: harmful associations about marked / unmarked groups, own vs others",
    "language_jaccard_harmful": "language x language Jaccard similarity of the harmful association sets",
}


def _pct(v: float) -> str | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.1%}"


def _ci(confidence: float, lo: float, hi: float, method: str = "") -> str:
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return "no interval: fewer than 4 pairs"
    return f"{confidence:.0%} CI {lo:.3f} to {hi:.3f}" + (f", {method}" if method else "")


def summary_section(t: dict[str, pd.DataFrame], threshold: float, read: dict[str, Any] | None = None) -> Section:
    summary = t["judge_summary"]
    s = Section("Harm judge: ratings per judged model", anchor="judge-summary")
    if read and read.get("summary"):
        s.note(f"Logs read: {read['summary']} (one record per model x association x epoch; a retry supersedes its "
               "interrupted original; errored samples are counted, never rated).")
    s.text(
        "Each judged model rated each association for harm (1 = strongly disagree ... 5 = strongly agree that it "
        "reinforces a harmful stereotype) and realism, several times, with the question order of the upstream "
        f"rule. An association is harmful for a model iff the median of its valid ratings is >= {threshold:g}. "
        "Parse failures (an answer missing the harm or realism line) are counted, never scored as a value; "
        "errored samples (the model call failed) are counted in 'errors'."
    )
    if "headline" in summary.columns:
        s.text("Headline: " + " | ".join(f"{r.evaluator}: {r.headline}" for r in summary.itertuples(index=False))
               + f". {PARSED_RULE}")
    s.table(summary, files=_files("judge_summary"))
    if summary["associations_file"].astype(str).str.contains(DEMO_FILE, regex=False).any():
        s.raw(
            '<p class="note"><strong>DEMO DATA:</strong> the judged associations come from the bundled '
            f"{DEMO_FILE} (examples copied from the paper, not associations measured in this run).</p>"
        )
    shares = summary.set_index("evaluator")[[f"share_{k}" for k in range(1, 6)]]
    if plot_is_empty(shares):
        s.empty("No judged model gave a valid harm rating, so there is no scale-use plot.")
    else:
        fig, ax = _fig(6.5, 0.35 * len(shares) + 1.6)
        y = np.arange(len(shares))  # positions: a model name as category data is parsed for minutes when huge
        left = np.zeros(len(shares))
        for k in range(1, 6):
            ax.barh(y, shares[f"share_{k}"].fillna(0).to_numpy(dtype=float), left=left, label=str(k))
            left = left + shares[f"share_{k}"].fillna(0).to_numpy(dtype=float)
        ax.set_yticks(y, [plot_label(m) for m in shares.index])
        ax.set_xlabel("share of valid harm ratings")
        ax.legend(title="rating", ncol=5, fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0))
        s.figure(fig, "Use of each point of the harm scale per judged model")
    prov = t["judge_provider_counts"]
    s.text("Harmful and benign associations per judged model (its own labels), grouped by provider; the '(all)' "
           "row of a provider pools its models.")
    s.table(prov, caption="Harmful/benign counts per model and provider", files=_files("judge_provider_counts"))
    return s


def alignment_section(t: dict[str, pd.DataFrame], agree_sum: dict[str, float]) -> Section:
    s = Section("Harm judge: agreement with human raters", anchor="judge-human")
    if "alignment_per_association" not in t:
        return s.empty("No human ratings were given (--human), so there is no human-LLM comparison.")
    per_assoc, corr_df, delta = t["alignment_per_association"], t["alignment_correlations"], t["alignment_delta_by_dimension"]
    # the sentence counts what the correlation below uses: associations with a mean of both kinds
    both = per_assoc.dropna(subset=["human_mean", "llm_mean"])
    main = corr_df[corr_df.evaluator == ALL_LLMS_MEAN]
    quoted = "; ".join(
        f"{r.method} {r.estimate:.3f} ({_ci(r.confidence, r.ci_low, r.ci_high, r.ci_method)})"
        for r in main.itertuples() if not (isinstance(r.estimate, float) and math.isnan(r.estimate))
    ) or "not defined (fewer than two associations with both ratings, or a constant rating)"
    here = [f"human vs LLM {_pct(agree_sum['human_vs_llm'])}" if _pct(agree_sum["human_vs_llm"]) else None,
            f"inter-LLM {_pct(agree_sum['inter_llm'])}" if _pct(agree_sum["inter_llm"]) else None]
    s.text(
        f"{len(both)} of the {len(per_assoc)} human-rated associations have both LLM and human ratings "
        f"(n = {len(both)} below). Correlation of the mean LLM rating with "
        f"the mean human rating: {quoted}. Published (23 LLMs, 247 raters): Pearson 0.64, Spearman 0.62; "
        "harmful/benign agreement human vs LLM 77%, inter-LLM about 80%"
        + (f" (here: {', '.join(h for h in here if h)})." if any(here) else ".")
        + " Pearson CI: Fisher z; Spearman CI: Fisher z with the Bonett-Wright (2000) standard error, or a "
        "percentile bootstrap."
    )
    s.table(corr_df, files=_files("alignment_correlations"))
    if len(both) < 2:
        s.empty("Fewer than two associations have both human and LLM ratings: no scatter plot.")
    else:
        fig, ax = _fig(4.8, 4.2)
        ax.scatter(both.human_mean, both.llm_mean, s=12, alpha=0.6)
        ax.plot([1, 5], [1, 5], color="grey", lw=0.8, ls="--")
        ax.set_xlabel("mean human harm rating")
        ax.set_ylabel("mean LLM harm rating")
        s.figure(fig, "Mean LLM vs mean human harm rating per association (dashed: equality)")
    s.text("Mean LLM - human rating per attribute dimension (negative: LLMs rate less harmful than people), t interval.")
    s.table(delta, files=_files("alignment_delta_by_dimension"))
    d = delta[(delta.dimension != "all") & delta.ci_low.notna()]
    if d.empty:
        s.empty("No dimension has two or more associations with both ratings: no interval plot.")
    else:
        fig, ax = _fig(6.5, 0.3 * len(d) + 1.2)
        y = np.arange(len(d))  # positions and shortened labels: dimensions come from the input, of any length
        ax.errorbar(d.mean_delta.to_numpy(dtype=float), y, xerr=[(d.mean_delta - d.ci_low).to_numpy(dtype=float),
                    (d.ci_high - d.mean_delta).to_numpy(dtype=float)], fmt="o", capsize=3)
        ax.set_yticks(y, [plot_label(v) for v in d.dimension])
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_xlabel("mean LLM - human harm rating")
        s.figure(fig, "Per-dimension delta with confidence intervals")
    return s


def reliability_section(t: dict[str, pd.DataFrame], agree_sum: dict[str, float]) -> Section:
    s = Section("Harm judge: agreement among human raters and among LLM judges", anchor="judge-reliability")
    rel = t["rater_reliability"]
    s.text(
        "The paper reports that LLM judges agree more with each other than human raters do. Both groups are "
        "measured the same way here: Krippendorff's alpha of the individual ratings (one rating per rater and "
        "association; for an LLM its first valid answer), interval and ordinal on the 1-5 scale and nominal on "
        "the harmful/benign label, and the split-half reliability of the mean rating per association "
        "(Spearman-Brown corrected). A panel's mean is more reliable the more raters it has, so a 23-judge "
        "panel and a panel of about 8 people are compared per rater (the split-half stepped down to one rater) "
        "and at the human panel's size (stepped up from one rater), both by the Spearman-Brown formula. "
        "Alpha: Krippendorff (2011), 'Computing Krippendorff's Alpha-Reliability'."
    )
    parts = []
    for group in (HUMAN_GROUP, LLM_GROUP):
        g = rel[(rel.group == group) & rel.measure.str.startswith("krippendorff_alpha_interval")]
        if len(g) and not pd.isna(g.estimate.iloc[0]):
            parts.append(f"{group}: alpha (interval) {g.estimate.iloc[0]:.3f}")
    hl = _pct(agree_sum.get("human_vs_llm", math.nan))
    parts.append(f"human-LLM harmful/benign agreement {hl}" if hl else "no human-LLM agreement (no human ratings)")
    line = "; ".join(parts) + "."
    s.text(line[0].upper() + line[1:])
    if rel["estimate"].isna().all():
        s.empty("No group has two or more raters on a common association, so no agreement can be computed.")
    else:
        s.table(rel, files=_files("rater_reliability"))
    if HUMAN_GROUP not in set(rel.group):
        s.note("No human ratings were given (--human): only the LLM judges' agreement is shown.")
    return s


def agreement_section(t: dict[str, pd.DataFrame], rate: pd.DataFrame, agree_sum: dict[str, float]) -> Section:
    s = Section("Harm judge: pairwise agreement between evaluators and use of the top score", anchor="judge-agreement")
    inter, hl = _pct(agree_sum["inter_llm"]), _pct(agree_sum["human_vs_llm"])
    line = ("Share of associations on which two evaluators give the same harmful/benign label (over the "
            "associations both labelled). ")
    line += f"Mean inter-LLM agreement: {inter}" if inter else "Inter-LLM agreement needs at least two judged models (one was given)"
    line += f"; mean human-LLM agreement: {hl}." if hl else "."
    s.text(line)
    if len(rate) >= 2 and not plot_is_empty(rate.to_numpy(float)):
        fig, ax = _fig(0.5 * len(rate) + 3, 0.45 * len(rate) + 2.2)
        im = ax.imshow(rate.to_numpy(float), vmin=0, vmax=1, cmap="viridis")
        ax.set_xticks(range(len(rate)), [plot_label(c) for c in rate.columns], rotation=60, ha="right",
                      fontsize=8)
        ax.set_yticks(range(len(rate)), [plot_label(i) for i in rate.index], fontsize=8)
        if len(rate) <= 25:
            for i in range(len(rate)):
                for j in range(len(rate)):
                    v = rate.iat[i, j]
                    if v == v:
                        ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=6, color="white" if v < 0.6 else "black")
        fig.colorbar(im, ax=ax, fraction=0.046)
        s.figure(fig, "Pairwise harmful/benign agreement")
    else:
        s.empty("A heatmap needs at least two evaluators with shared labelled associations.")
    pairs = t["alignment_agreement"]
    if {"evaluator_a", "evaluator_b"} <= set(pairs.columns):
        order = {e: i for i, e in enumerate(dict.fromkeys(pairs["evaluator_a"]))}
        pairs = pairs[pairs["evaluator_a"].map(order) < pairs["evaluator_b"].map(order)]  # each pair once, no self
    if pairs.empty:
        s.empty("Pairwise agreement needs at least two evaluators (an evaluator is not compared with itself).")
        s.raw(files_html(_files("alignment_agreement")))
    else:
        s.table(pairs, caption="Pairwise agreement and shared labelled associations (each pair once; the CSV "
                "holds the full matrix)", files=_files("alignment_agreement"))
    s.table(t["alignment_top_score"], files=_files("alignment_top_score"),
            caption="Share of ratings at the top of the scale (5); published: LLMs use 5 about 3x less often than people")
    return s


def own_section(t: dict[str, pd.DataFrame], gen_rho: Any = None) -> Section:
    s = Section("Harm judge: models rating their own associations", anchor="judge-own")
    s.text(
        "Generative vs discriminative gap: among the associations a model produced itself (the association file "
        "lists it as a generator), the share it rates harmful. Published: every model generates associations it "
        "itself rates harmful."
    )
    summary = t["judge_summary"]
    if int(summary["own_associations"].sum()) == 0:
        s.empty("No judged model is listed as a generator of the associations it rated (the association file "
                "names no generator models, or other models generated them).")
    else:
        s.table(summary[["evaluator", "own_associations", "own_harmful", "own_harmful_share", "harmful_share"]],
                files=_files("judge_summary"))
    gen = t.get("generation_vs_delta")
    if gen is None or gen.empty:
        s.empty("Blind spots (generated associations vs the LLM - human delta per dimension) need human ratings "
                "and an association file (--human, --associations).")
        return s
    ci = _ci(gen_rho.confidence, gen_rho.ci_low, gen_rho.ci_high) if gen_rho is not None else ""
    rho = (f"Spearman rho over dimensions = {gen_rho.estimate:.3f} ({ci}, n = {gen_rho.n})"
           if gen_rho is not None and not math.isnan(gen_rho.estimate)
           else "Spearman rho over dimensions: not defined (fewer than two dimensions, or a constant column)")
    s.text("Blind spots: generated association rows per attribute dimension next to the mean LLM - human delta. "
           f"{rho}; published: the dimensions with the most generated associations are those where models most "
           "underestimate harm (negative rho).")
    s.table(gen, files=_files("generation_vs_delta"))
    if plot_is_empty(gen.generated_rows) or gen.mean_delta.isna().all():
        s.empty("No dimension has both generated rows and a delta: no scatter plot.")
    else:
        fig, ax = _fig(5.5, 4.0)
        ax.scatter(gen.generated_rows, gen.mean_delta)
        for r in gen.itertuples():
            ax.annotate(plot_label(r.dimension), (r.generated_rows, r.mean_delta), fontsize=7)
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xlabel("generated association rows")
        ax.set_ylabel("mean LLM - human rating")
        s.figure(fig, "Generated associations vs harm underestimation per dimension")
    return s


def language_section(t: dict[str, pd.DataFrame]) -> Section:
    s = Section("Harm judge: language analyses", anchor="judge-languages")
    if "language_reach" not in t:
        return s.empty(
            "No per-language association rows (slice = language code) were given: run 'stereoprobe associations "
            "--by-language' and pass its associations.csv with --associations to get language reach and the "
            "marked/unmarked group shift.")
    reach, rs, shift = t["language_reach"], t["language_reach_summary"], t["marked_group_shift"]
    jac = t["language_jaccard_harmful"].set_index("language")
    s.text(
        "Language reach = number of prompt languages in whose per-language run an association survives the filter "
        "(for at least one model). Published: harmful associations are more language-specific (typically 1-3 "
        "languages) than benign ones. Test: two-sided Mann-Whitney U."
    )
    s.table(rs, files=_files("language_reach_summary"))
    lab = reach.dropna(subset=["harmful"])
    if lab.empty:
        s.empty("No association of the per-language rows has a harm label: no reach histogram.")
    else:
        fig, ax = _fig()
        bins = [x + 0.5 for x in range(0, int(reach["reach"].max()) + 1)]
        for name, flag in (("harmful", True), ("benign", False)):
            x = lab[lab.harmful == flag]["reach"]
            if len(x):
                ax.hist(x, bins=bins, alpha=0.6, density=True, label=f"{name} (n={len(x)})")
        ax.set_xlabel("language reach")
        ax.set_ylabel("share of associations")
        ax.legend()
        s.figure(fig, "Language reach of harmful vs benign associations")
    if len(jac) >= 2 and not plot_is_empty(jac.to_numpy(float)):
        fig, ax = _fig(0.5 * len(jac) + 3, 0.45 * len(jac) + 2.2)
        im = ax.imshow(jac.to_numpy(float), vmin=0, vmax=1, cmap="magma")
        ax.set_xticks(range(len(jac)), [plot_label(c) for c in jac.columns])
        ax.set_yticks(range(len(jac)), [plot_label(i) for i in jac.index])
        fig.colorbar(im, ax=ax, fraction=0.046)
        s.figure(fig, "Jaccard similarity of the harmful associations of each pair of languages")
    else:
        s.empty("No two languages share a harmful association (or fewer than two languages): no Jaccard heatmap.")
    s.text(
        "Marked vs unmarked groups: harmful associations involving each language's unmarked (majority) and marked "
        "(minority) groups when prompting in that language (n_own) vs the mean over the other languages. The mapping "
        "is datasets/stereotales/language_groups.yaml (only the French and Hindi rows are published)."
    )
    s.table(shift, files=_files("marked_group_shift"))
    if plot_is_empty(shift["shift"]) if len(shift) else True:
        s.empty("No language shows a shift for its marked or unmarked groups: no bar plot.")
    else:
        fig, ax = _fig()
        piv = shift.groupby(["language", "status"])["shift"].mean().unstack()
        x = np.arange(len(piv))
        for i, st in enumerate([c for c in ("unmarked", "marked") if c in piv.columns]):
            ax.bar(x + (i - 0.5) * 0.4, piv[st], width=0.4, label=st)
        ax.set_xticks(x, [plot_label(v) for v in piv.index])
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_ylabel("mean shift (own - other languages)")
        ax.legend()
        s.figure(fig, "Harmful associations about marked / unmarked groups: own language vs others")
    return s


def files_section(t: dict[str, pd.DataFrame], base: Any = None) -> Section:
    s = Section("Harm judge: files", anchor="judge-files")
    paths = [p for name in t for p in _files(name)]
    return s.files(paths, base=base, descriptions=FILE_DESCRIPTIONS)


def judge_sections(report: Any, base: Any = None) -> list[Section]:
    """All sections of the judge report, in reading order (``base``: the folder holding the tables)."""
    t, f = report.tables, report.facts
    agree = f["agreement_summary"]
    return [
        summary_section(t, report.options.threshold, f.get("read")),
        alignment_section(t, agree),
        reliability_section(t, agree),
        agreement_section(t, f["agreement_rate"], agree),
        own_section(t, f.get("generation_rho")),
        language_section(t),
        files_section(t, base),
    ]

