"""Tables and HTML report of ``stereoprobe globalbias`` (I/O edge; the statistics are in ``apx.py``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from stereoprobe.globalbias import apx as A
from stereoprobe.globalbias.data import validation_groups
from stereoprobe.errors import InputError
from stereoprobe.globalbias.completeness import split_complete
from stereoprobe.globalbias.inputs import LoadReport, load
from stereoprobe.inputs import Progress, no_progress
from stereoprobe.globalbias.plots import figure1, figure1_descriptors
from stereoprobe.report.html import Section, plot_is_empty, write_report
from stereoprobe.report.run_info import write_run_info
from stereoprobe.tables import write_table

FILE_DESCRIPTIONS = {
    "bias_scores": "bias score per model x group x descriptor, with the reference flag, the stricter test's p/q "
                   "values and the per-template APX",
    "associations": "descriptors flagged per group by the reference 1% rule (paper Table 9)",
    "associations_strict": "descriptors significant per group under the stricter test (BH-controlled)",
    "min_groups": "lowest-APX group per template and descriptor",
    "validation": "accuracy and MRR on stereotype descriptors with confidence intervals (paper Tables 3 and 4)",
    "validation_detail": "per stereotype descriptor: group ranking, target, prediction",
    "incomplete_units": "group x descriptor units left out for missing names x templates",
}


@dataclass
class GlobalBiasResult:
    """What :func:`compute_globalbias` computed: the tables (name -> DataFrame, every model stacked), the read
    report and the incomplete group x descriptor units left out; ``sentences`` (the complete units' sentence
    rows), ``notes``, ``settings`` and ``sources`` are what :func:`write_globalbias` puts into the report and
    ``run_info.json``; ``files``: the table files written."""

    tables: dict[str, pd.DataFrame]
    read: LoadReport
    incomplete: pd.DataFrame
    files: list[Path] = field(default_factory=list)
    sentences: pd.DataFrame = field(default_factory=pd.DataFrame)
    notes: list[str] = field(default_factory=list)
    settings: dict[str, object] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """The console line."""
        scores = self.tables.get("bias_scores", pd.DataFrame())
        flagged = int(scores["flagged"].fillna(False).astype(bool).sum()) if "flagged" in scores else 0
        line = (f"{self.read.summary()}; {len(scores)} group-descriptor pairs scored, {flagged} flagged by the "
                "reference rule")
        if len(self.incomplete):
            line += f"; {len(self.incomplete)} incomplete group-descriptor unit(s) left out"
        return line


def _validation_candidates(d: pd.DataFrame, templates: tuple[int, ...]) -> str | None:
    """Why the validation cannot run on these sentences (None when it can)."""
    if "name" not in d.columns or d["target"].isna().all():
        return ("the inputs hold no Ghavami & Peplau stereotype descriptors with names (run the task with "
                "subset=gp or the full descriptor set)")
    mapping, excluded = validation_groups()
    v = d[d["ethnicity"].map(mapping).notna() & d["target"].notna() & ~d["target"].isin(list(excluded))]
    if v.empty:
        return "no sentences of ethnicities mapped to a Ghavami & Peplau target group"
    missing = sorted(set(templates) - set(v["template"].unique()))
    if missing:
        raise InputError(f"--validation-templates {','.join(map(str, templates))}: the inputs have no "
                         f"validation sentences of template(s) {','.join(map(str, missing))}")
    return None


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
    """All GlobalBias tables for one model's sentences (complete units only)."""
    value = "apx" if "apx" in sentences.columns and sentences["apx"].notna().all() else "ppl"
    d = sentences.drop(columns=[c for c in ("ppl", "apx", "source") if c != value and c in sentences.columns])
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
    if value == "ppl":
        reason = _validation_candidates(d, validation_templates)
        if reason is None:
            mapping, excluded = validation_groups()
            out["validation"], out["validation_detail"] = A.validation(
                d, mapping, tuple(excluded), "ppl", validation_templates, faithful_rounding)
        else:
            out["validation_note"] = pd.DataFrame({"note": [reason]})
    return out


def compute_globalbias(
    inputs: Iterable[str | Path],
    measure: str = "token",
    tokenizer: object = None,
    faithful_rounding: bool = True,
    test_method: str = "welch",
    alpha: float = 0.05,
    n_permutations: int = 2000,
    seed: int = 0,
    test_scale: str = "log",
    validation_templates: tuple[int, ...] = (1,),
    progress: Progress = no_progress,
) -> GlobalBiasResult:
    """Read inputs (logs, lm-eval samples, tables), keep complete group x descriptor units and analyse each
    model: the tables ``bias_scores``, ``associations``, ``associations_strict``, ``min_groups``,
    ``validation``, ``validation_detail``, ``incomplete_units`` (nothing is written: :func:`write_globalbias`).
    ``progress``: reports the reading and the models (:data:`stereoprobe.inputs.Progress`)."""
    if not (0 < alpha < 1):
        raise InputError(f"alpha must lie strictly between 0 and 1, got {alpha}")
    if n_permutations < 1:
        raise InputError(f"the number of permutations must be at least 1, got {n_permutations}")
    sentences, rep = load(inputs, measure=measure, tokenizer=tokenizer, progress=progress)
    sentences, incomplete = split_complete(sentences, rep.expected)
    if sentences.empty:
        raise InputError(f"no complete group x descriptor unit in the inputs ({len(incomplete)} incomplete): "
                         "every name of a group under every template is needed")
    tables: dict[str, list[pd.DataFrame]] = {}
    notes: list[str] = []
    models = sorted(sentences["model"].unique())
    for model in progress(models, "GlobalBias: analysing models"):
        sub = sentences[sentences["model"] == model]
        for name, df in analyse(sub, faithful_rounding, test_method, alpha, n_permutations, seed,
                                test_scale, validation_templates).items():
            if name == "validation_note":
                notes.append(f"{model}: {df['note'].iloc[0]}")
                continue
            df = df.copy()
            df.insert(0, "model", model)
            tables.setdefault(name, []).append(df)
    combined = {k: pd.concat(v, ignore_index=True) for k, v in tables.items()}
    combined["incomplete_units"] = incomplete
    settings = {"measure": measure, "faithful_rounding": faithful_rounding, "test": test_method, "alpha": alpha,
                "permutations": n_permutations, "seed": seed, "test_scale": test_scale,
                "validation_templates": list(validation_templates)}
    return GlobalBiasResult(tables=combined, read=rep, incomplete=incomplete, sentences=sentences, notes=notes,
                            settings=settings, sources=[str(i) for i in inputs])


def write_globalbias(result: GlobalBiasResult, out_dir: str | Path) -> Path:
    """Write the tables (CSV + Parquet), ``run_info.json`` and ``report.html`` of ``result`` into ``out_dir``
    (created); ``result.files`` lists the table files. Returns ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    for name, df in result.tables.items():
        csv = write_table(df, out, name)
        files += [csv, csv.with_suffix(".parquet")]
    result.files = files
    s = result.settings
    models = sorted(result.sentences["model"].unique()) if "model" in result.sentences else []
    write_run_info(out, probe="globalbias", models=models, settings=s, inputs=result.sources)
    _report(out / "report.html", result, result.sentences, str(s.get("measure", "token")),
            bool(s.get("faithful_rounding", True)), str(s.get("test", "welch")), float(s.get("alpha", 0.05)),
            tuple(s.get("validation_templates", (1,))), result.notes)  # type: ignore[arg-type]
    return out


def _report(path: Path, result: GlobalBiasResult, sentences: pd.DataFrame, measure: str, faithful_rounding: bool,
            test_method: str, alpha: float, validation_templates: tuple[int, ...] = (1,),
            notes: list[str] | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tables, rep = result.tables, result.read
    scores = tables["bias_scores"]
    base = path.parent

    def tfiles(name: str) -> list[Path]:
        return [base / f"{name}.csv", base / f"{name}.parquet"]
    secs = []
    s = Section("Inputs and settings", anchor="inputs")
    s.text(f"{rep.summary()}" + (f" (e.g. {', '.join(rep.unscored_ids[:5])})." if rep.unscored else "."))
    info = sentences.groupby("model").agg(groups=("group", "nunique"), descriptors=("descriptor", "nunique"),
                                          templates=("template", "nunique"), rows=("group", "size")).reset_index()
    s.table(info)
    if len(result.incomplete):
        s.text(f"{len(result.incomplete)} group x descriptor unit(s) lack some of their names x templates (an "
               "interrupted run without its retry, or error samples) and were left out of every statistic:")
        s.table(result.incomplete, caption="incomplete units (present / expected name x template cells)",
                files=tfiles("incomplete_units"), base=base)
    else:
        s.note("Every group x descriptor unit holds all its names under all templates.")
    s.note(f"Measure: {'token perplexity' if measure == 'token' else 'byte-normalised perplexity (2^bits-per-byte)'}; "
           f"reference rounding {'on' if faithful_rounding else 'off'} (APX group ratio to 3 d.p., group means to "
           "2 d.p.). Bias score = mean over templates of the min-max normalised APX (lower = more likely = stronger "
           "association). Perplexities of different model types (causal, masked pseudo-perplexity, "
           "encoder-decoder) are not comparable and must not be pooled.")
    secs.append(s)

    v = Section("Validation on stereotype descriptors (paper Tables 3 and 4)", anchor="validation")
    if "validation" in tables:
        tt = ", ".join(map(str, validation_templates))
        v.text("Accuracy: share of stereotype descriptors whose lowest-scoring group (gender x ethnicity group; "
               f"template(s) {tt}, several templates = average of per-template min-max normalised means) belongs "
               "to the stereotype's target group. MRR: mean reciprocal rank of the target group (genders pooled). "
               "Chance levels are for the number of groups present. A run over some groups (-T groups) keeps "
               "only the descriptors whose target group has names in the run: the others could never be right "
               "(columns targets_absent and n_descriptors_left_out).")
        left = tables["validation"].get("n_descriptors_left_out")
        if left is not None and (left.fillna(0) > 0).any():
            absent = "; ".join(sorted({str(t) for t in tables["validation"]["targets_absent"] if str(t)}))
            v.note(f"Restricted to the groups present: {int(left.max())} validation descriptor(s) target group(s) "
                   f"without names in this run ({absent}) and are left out; chance is that of the groups present.")
        v.table(tables["validation"], files=tfiles("validation"), base=base)
        v.table(tables["validation_detail"], caption="per descriptor", files=tfiles("validation_detail"), base=base)
    for note in notes or []:
        v.empty(f"Validation not computed for {note}.")
    secs.append(v)

    a = Section("Associated descriptors per group: reference rule (paper Table 9)", anchor="reference")
    a.text("The reference '1% one-tailed' rule flags a group whose bias score lies more than z = 2.326 standard "
           "deviations below the descriptor's mean over groups (age axis excluded). It is a descriptive outlier "
           "flag: the standard deviation includes the tested group and there is no correction for the number of "
           "comparisons, so about 1% of group-descriptor pairs are flagged by chance under normality.")
    a.table(tables["associations"], caption="groups flagged by the reference rule",
            files=tfiles("associations"), base=base)
    secs.append(a)

    b = Section("Associated descriptors per group: stricter test", anchor="strict")
    b.text(f"One-sided {'Welch t-test' if test_method == 'welch' else 'permutation test'} of the group's names "
           "against the other groups' names (per name: log perplexity centred on its group's mean log perplexity "
           "of the template, averaged over templates; group-wide familiarity shifts cancel), with "
           f"Benjamini-Hochberg false discovery rate control at {alpha} over all tested pairs.")
    if scores["p_value"].notna().any():
        b.table(tables["associations_strict"], caption="groups significant under the stricter test",
                files=tfiles("associations_strict"), base=base)
        cmp = scores.assign(flagged=scores["flagged"].fillna(False).astype(bool),
                            significant=scores["significant"].fillna(False).astype(bool))
        agree = pd.crosstab(cmp["flagged"], cmp["significant"]).rename_axis(index="flagged", columns=None)
        agree.columns = [f"significant={c}" for c in agree.columns]
        b.table(agree.reset_index(), caption="reference flag vs stricter test")
    else:
        b.note("Not available: the inputs hold group-level values without names.")
    secs.append(b)

    f = Section("Distribution of bias scores", anchor="dist")
    if plot_is_empty(scores["score"]):
        f.empty("No bias score to plot.")
    for model, sub in scores.groupby("model"):
        if plot_is_empty(sub["score"]):
            continue
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

    fig1 = Section("Per-descriptor bias scores with the 1% line (paper Figure 1)", anchor="figure1")
    fig1.text("For the descriptors with the most extreme flagged groups: every group's bias score, lowest first; "
              "groups below the orange line (mean - 2.326 sd over the groups) are flagged by the reference rule.")
    shown = False
    for model, sub in scores.groupby("model"):
        for desc in figure1_descriptors(sub):
            if not plot_is_empty(sub.loc[sub["descriptor"] == desc, "score"]):
                fig1.figure(figure1(sub, desc), caption=f"{model}: {desc}")
                shown = True
    if not shown:
        fig1.empty("No descriptor has bias scores to plot.")
    secs.append(fig1)

    t = Section("Bias scores (lowest first)", anchor="scores")
    cols = ["model", "group", "descriptor", "axis", "score", "flagged", "p_value", "q_value", "significant"]
    t.table(scores.sort_values("score")[cols], max_rows=500, files=tfiles("bias_scores"), base=base)
    secs.append(t)
    files = Section("Files", anchor="files")
    files.files(result.files, base=path.parent, descriptions=FILE_DESCRIPTIONS)
    secs.append(files)
    write_report(path, "GlobalBias: stereotypes associated with given names", secs,
                 subtitle="APX perplexity probe (Siddique et al., EMNLP 2024), computed by stereoprobe")
