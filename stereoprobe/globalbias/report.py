"""Tables and HTML report of ``stereoprobe globalbias`` (I/O edge; the statistics are in ``apx.py``)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from stereoprobe.globalbias import apx as A
from stereoprobe.globalbias.data import validation_groups
from stereoprobe.globalbias.inputs import load
from stereoprobe.report.html import Section, write_report
from stereoprobe.tables import write_table


def analyse(
    sentences: pd.DataFrame,
    faithful_rounding: bool = True,
    test_method: str = "welch",
    alpha: float = 0.05,
    n_permutations: int = 2000,
    seed: int = 0,
    test_scale: str = "log",
    validation_templates: tuple[int, ...] = (1,),
) -> dict[str, pd.DataFrame]:
    """All GlobalBias tables for one model's sentences."""
    value = "apx" if "apx" in sentences.columns and sentences["apx"].notna().all() else "ppl"
    d = sentences.drop(columns=[c for c in ("ppl", "apx") if c != value and c in sentences.columns])
    if d["name"].isna().all():
        d = d.drop(columns="name")
    scores = A.score_table(d, value=value, faithful_rounding=faithful_rounding, test_method=test_method,
                           alpha=alpha, n_permutations=n_permutations, seed=seed, test_scale=test_scale)
    dd = d if value == "apx" else A.apx(d, value, 3 if faithful_rounding else None)
    means = A.group_descriptor_means(dd, "apx", 2 if faithful_rounding else None)
    out = {
        "bias_scores": scores,
        "associations": A.associations(scores, "flagged"),
        "associations_strict": A.associations(scores, "significant"),
        "min_groups": A.min_groups(means),
    }
    if value == "ppl" and d["target"].notna().any() and "name" in d.columns:
        mapping, excluded = validation_groups()
        try:
            summary, detail = A.validation(d, mapping, tuple(excluded), "ppl", validation_templates, faithful_rounding)
            out["validation"], out["validation_detail"] = summary, detail
        except ValueError:
            pass
    return out


def run_globalbias(
    inputs: Iterable[str | Path],
    out_dir: str | Path,
    measure: str = "token",
    tokenizer: object = None,
    faithful_rounding: bool = True,
    test_method: str = "welch",
    alpha: float = 0.05,
    n_permutations: int = 2000,
    seed: int = 0,
    test_scale: str = "log",
    validation_templates: tuple[int, ...] = (1,),
) -> dict[str, pd.DataFrame]:
    """Read inputs, analyse each model, write ``bias_scores`` (+ associations, min_groups, validation) tables
    and ``report.html`` to ``out_dir``; return the combined tables."""
    sentences, rep = load(inputs, measure=measure, tokenizer=tokenizer)
    tables: dict[str, list[pd.DataFrame]] = {}
    for model, sub in sentences.groupby("model", sort=True):
        for name, df in analyse(sub, faithful_rounding, test_method, alpha, n_permutations, seed,
                                test_scale, validation_templates).items():
            df = df.copy()
            df.insert(0, "model", model)
            tables.setdefault(name, []).append(df)
    combined = {k: pd.concat(v, ignore_index=True) for k, v in tables.items()}
    out = Path(out_dir)
    for name, df in combined.items():
        write_table(df, out, name)
    _report(out / "report.html", combined, sentences, rep, measure, faithful_rounding, test_method, alpha,
            validation_templates)
    return combined


def _report(path, tables, sentences, rep, measure, faithful_rounding, test_method, alpha,
            validation_templates=(1,)) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scores = tables["bias_scores"]
    secs = []
    s = Section("Inputs and settings", anchor="inputs")
    s.text(f"{rep.sentences} scored rows from {len(rep.files)} file(s); {rep.unscored} sentence(s) without "
           "log-probabilities were counted and left out" + (f" (e.g. {', '.join(rep.unscored_ids[:5])})."
                                                            if rep.unscored else "."))
    info = sentences.groupby("model").agg(groups=("group", "nunique"), descriptors=("descriptor", "nunique"),
                                          templates=("template", "nunique"), rows=("group", "size")).reset_index()
    s.table(info)
    s.note(f"Measure: {'token perplexity' if measure == 'token' else 'byte-normalised perplexity (2^bits-per-byte)'}; "
           f"reference rounding {'on' if faithful_rounding else 'off'} (APX group ratio to 3 d.p., group means to "
           "2 d.p.). Bias score = mean over templates of the min-max normalised APX (lower = more likely = stronger "
           "association). Perplexities of different model types (causal, masked pseudo-perplexity, "
           "encoder-decoder) are not comparable and must not be pooled.")
    secs.append(s)

    if "validation" in tables:
        v = Section("Validation on stereotype descriptors (paper Tables 3 and 4)", anchor="validation")
        tt = ", ".join(map(str, validation_templates))
        v.text("Accuracy: share of stereotype descriptors whose lowest-scoring group (gender x ethnicity group; "
               f"template(s) {tt}, several templates = average of per-template min-max normalised means) belongs "
               "to the stereotype's target group. MRR: mean reciprocal rank of the target group (genders pooled). "
               "Chance levels are for the number of groups present.")
        v.table(tables["validation"])
        v.table(tables["validation_detail"], caption="per descriptor")
        secs.append(v)

    a = Section("Associated descriptors per group: reference rule (paper Table 9)", anchor="reference")
    a.text("The reference '1% one-tailed' rule flags a group whose bias score lies more than z = 2.326 standard "
           "deviations below the descriptor's mean over groups (age axis excluded). It is a descriptive outlier "
           "flag: the standard deviation includes the tested group and there is no correction for the number of "
           "comparisons, so about 1% of group-descriptor pairs are flagged by chance under normality.")
    a.table(tables["associations"])
    secs.append(a)

    b = Section("Associated descriptors per group: stricter test", anchor="strict")
    b.text(f"One-sided {'Welch t-test' if test_method == 'welch' else 'permutation test'} of the group's names "
           "against the other groups' names (per name: log perplexity centred on its group's mean log perplexity "
           "of the template, averaged over templates; group-wide familiarity shifts cancel), with "
           f"Benjamini-Hochberg false discovery rate control at {alpha} over all tested pairs.")
    if scores["p_value"].notna().any():
        b.table(tables["associations_strict"])
        cmp = scores.assign(flagged=scores["flagged"].fillna(False).astype(bool),
                            significant=scores["significant"].fillna(False).astype(bool))
        agree = pd.crosstab(cmp["flagged"], cmp["significant"]).rename_axis(index="flagged", columns="significant")
        b.table(agree.reset_index(), caption="reference flag vs stricter test")
    else:
        b.note("Not available: the inputs hold group-level values without names.")
    secs.append(b)

    f = Section("Distribution of bias scores", anchor="dist")
    for model, sub in scores.groupby("model"):
        fig, ax = plt.subplots(figsize=(6, 3))
        ax.hist(sub["score"], bins=40, color="#4c72b0")
        ax.set_xlabel("bias score (lower = stronger association)")
        ax.set_ylabel("group x descriptor pairs")
        ax.set_title(str(model))
        f.figure(fig, caption=f"{model}: bias scores of {len(sub)} group-descriptor pairs")
    for model, sub in scores.groupby("model"):
        wide = sub.pivot_table(index="descriptor", columns="group", values="score")
        if wide.shape[0] > 60 or wide.shape[1] > 40:
            continue  # a full-size table does not fit a readable heatmap; the CSV has it
        fig, ax = plt.subplots(figsize=(1.2 + 0.45 * wide.shape[1], 1.0 + 0.28 * wide.shape[0]))
        rel = wide.sub(wide.mean(axis=1), axis=0)  # relative to the descriptor's mean over groups
        lim = float(np.nanmax(np.abs(rel.to_numpy()))) or 1.0
        im = ax.imshow(rel.to_numpy(), cmap="RdBu", aspect="auto", vmin=-lim, vmax=lim)
        ax.set_xticks(range(wide.shape[1]), wide.columns, rotation=60, ha="right", fontsize=8)
        ax.set_yticks(range(wide.shape[0]), wide.index, fontsize=8)
        fig.colorbar(im, ax=ax, label="bias score minus the descriptor's mean (red = stronger association)")
        ax.set_title(str(model))
        f.figure(fig, caption=f"{model}: bias score per group and descriptor, relative to the descriptor's mean "
                              "over groups (red: the model finds the descriptor more likely for this group)")
    secs.append(f)

    t = Section("Bias scores (lowest first)", anchor="scores")
    cols = ["model", "group", "descriptor", "axis", "score", "flagged", "p_value", "q_value", "significant"]
    t.table(scores.sort_values("score")[cols], max_rows=500)
    secs.append(t)
    write_report(path, "GlobalBias: stereotypes associated with given names", secs,
                 subtitle="APX perplexity probe (Siddique et al., EMNLP 2024), computed by stereoprobe")
