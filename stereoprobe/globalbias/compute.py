"""The computation of ``stereoprobe globalbias``: complete sentence rows in, every table out, no I/O.

:func:`compute` analyses each model (:func:`compute_model`: bias scores, the reference flags, the stricter test,
the associations and the validation, through :mod:`stereoprobe.globalbias.apx`) and returns a
:class:`GlobalBiasResult`, which :func:`stereoprobe.globalbias.report.write_globalbias` writes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from stereoprobe.errors import InputError
from stereoprobe.globalbias import apx as A
from stereoprobe.globalbias.data import validation_groups
from stereoprobe.globalbias.headline import HEADLINE_COLUMNS, headline_rows
from stereoprobe.globalbias.inputs import LoadReport
from stereoprobe.globalbias.options import GlobalBiasOptions
from stereoprobe.inputs import Progress, no_progress

__all__ = ["GlobalBiasResult", "compute", "compute_model"]


@dataclass
class GlobalBiasResult:
    """What :func:`compute` computed: the tables (name -> DataFrame, every model stacked), the read report and
    the incomplete group x descriptor units left out; ``sentences`` (the complete units' sentence rows),
    ``notes``, ``options`` and ``sources`` are what the writer puts into the report and ``run_info.json``;
    ``files``: the table files written."""

    tables: dict[str, pd.DataFrame]
    read: LoadReport
    incomplete: pd.DataFrame
    options: GlobalBiasOptions = field(default_factory=GlobalBiasOptions)
    files: list[Path] = field(default_factory=list)
    sentences: pd.DataFrame = field(default_factory=pd.DataFrame)
    notes: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    @property
    def settings(self) -> dict[str, object]:
        """The settings as ``run_info.json`` records them."""
        return self.options.run_settings()

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


def compute_model(sentences: pd.DataFrame, options: GlobalBiasOptions = GlobalBiasOptions()) -> dict[str, pd.DataFrame]:
    """All GlobalBias tables for one model's sentences (complete units only)."""
    value = "apx" if "apx" in sentences.columns and sentences["apx"].notna().all() else "ppl"
    d = sentences.drop(columns=[c for c in ("ppl", "apx", "source") if c != value and c in sentences.columns])
    if d["name"].isna().all():
        d = d.drop(columns="name")
    rounding = options.faithful_rounding
    scores = A.score_table(d, value=value, options=options)
    dd = d if value == "apx" else A.apx(d, value, 3 if rounding else None)
    means = A.group_descriptor_means(dd, "apx", 2 if rounding else None)
    out = {
        "bias_scores": scores,
        "associations": A.associations(scores, "flagged"),
        "associations_strict": A.associations(scores, "significant"),
        "min_groups": A.min_groups(means),
        "headline": pd.DataFrame(headline_rows(scores, options.alpha, seed=options.seed),
                                 columns=HEADLINE_COLUMNS),
    }
    if value == "ppl":
        reason = _validation_candidates(d, options.validation_templates)
        if reason is None:
            mapping, excluded = validation_groups()
            out["validation"], out["validation_detail"] = A.validation(
                d, mapping, tuple(excluded), "ppl", options.validation_templates, rounding)
        else:
            out["validation_note"] = pd.DataFrame({"note": [reason]})
    return out


def compute(sentences: pd.DataFrame, incomplete: pd.DataFrame, read: LoadReport,
            options: GlobalBiasOptions = GlobalBiasOptions(), sources: Iterable[str | Path] = (),
            progress: Progress = no_progress) -> GlobalBiasResult:
    """The tables ``bias_scores``, ``associations``, ``associations_strict``, ``min_groups``, ``validation``,
    ``validation_detail`` (per model, stacked) and ``incomplete_units`` from the complete units' ``sentences``
    (nothing is read or written). ``progress``: reports the models (:data:`stereoprobe.inputs.Progress`)."""
    if sentences.empty:
        raise InputError(f"no complete group x descriptor unit in the inputs ({len(incomplete)} incomplete): "
                         "every name of a group under every template is needed")
    tables: dict[str, list[pd.DataFrame]] = {}
    notes: list[str] = []
    for model in progress(sorted(sentences["model"].unique()), "GlobalBias: analysing models"):
        for name, df in compute_model(sentences[sentences["model"] == model], options).items():
            if name == "validation_note":
                notes.append(f"{model}: {df['note'].iloc[0]}")
                continue
            df = df.copy()
            df.insert(0, "model", model)
            tables.setdefault(name, []).append(df)
    combined = {k: pd.concat(v, ignore_index=True) for k, v in tables.items()}
    combined["incomplete_units"] = incomplete
    return GlobalBiasResult(tables=combined, read=read, incomplete=incomplete, options=options, sentences=sentences,
                            notes=notes, sources=[str(i) for i in sources])
