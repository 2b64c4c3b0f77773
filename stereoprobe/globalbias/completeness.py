"""Complete units only: a group x descriptor pair is scored only when it holds every name of its group under
every template of the run (an interrupted run never contributes a part of a unit).

What a unit must hold comes from what the run was asked to score, not from what arrived: the log header
records every sample id of the dataset the task was built from (``dataset.sample_ids``; grouped samples are
``{GROUP}:t{template}``, per-sentence samples ``{GROUP}:{name index}:{descriptor index}:t{template}``,
:mod:`stereoprobe.globalbias.samples`), and each grouped sample lists its sentences (``texts``) and the run's
descriptors. :class:`ExpectedCells` collects them while the logs are read; a sample that never arrived (an
interrupted run, an error sample, a truncated score list) leaves its units incomplete and listed.
Inputs without a header (lm-eval samples, tables) fall back to what arrived: the names of the group seen
anywhere x the templates seen in the model's rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

UNIT = ["model", "group", "descriptor"]
COLUMNS = ["model", "group", "descriptor", "present", "expected"]
_GROUP_ID = re.compile(r"^(?P<group>.+):t(?P<template>\d+)$")
_SENTENCE_ID = re.compile(r"^(?P<group>.+):(?P<name>\d+):(?P<descriptor>\d+):t(?P<template>\d+)$")


@dataclass
class ExpectedCells:
    """The name x template cells each (model, group, descriptor) unit must hold, from the logs' headers and
    samples (see the module doc). ``cells``: (model, group, descriptor, name key, template) of sentences the
    run was asked to score; ``open``: (model, group, template) of grouped samples that never arrived (their
    names unknown: every descriptor of the group is incomplete); per-sentence ids that never arrived are
    cells with the name and descriptor known by index."""

    cells: set[tuple[str, str, str, str, int]] = field(default_factory=set)
    open: set[tuple[str, str, int]] = field(default_factory=set)
    descriptors: dict[str, dict[str, str]] = field(default_factory=dict)  # model -> descriptor index -> text
    names: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (model, group, name index) -> key
    wanted: dict[str, set[str]] = field(default_factory=dict)  # model -> sample ids of the run's dataset
    arrived: dict[str, set[str]] = field(default_factory=dict)  # model -> sample ids read

    def run(self, model: str, sample_ids: Iterable[Any]) -> None:
        """Record the sample ids of a log's dataset (``LogInfo.dataset["sample_ids"]``)."""
        self.wanted.setdefault(model, set()).update(str(i) for i in sample_ids)

    def complete_run(self, model: str, templates: Iterable[int], groups: Iterable[str] = ()) -> None:
        """Expect every template of the run for every group (and name x descriptor) it holds, and every group
        the run asked for by name (``-T groups``; "ARAB" stands for "ARAB_F" and "ARAB_M"): the header lists
        only the samples a run was asked to score after ``--limit``, so the first half of a split run, or a
        group missing whole, would otherwise look complete. Call once the model's logs are read."""
        ids = self.wanted.get(model, set()) | self.arrived.get(model, set())
        temps = sorted({int(t) for t in templates})
        seen: set[str] = set()
        sentences: set[tuple[str, str, str]] = set()
        for sid in ids:
            m = _SENTENCE_ID.match(sid)
            if m:
                sentences.add((m["group"], m["name"], m["descriptor"]))
                seen.add(m["group"])
                continue
            m = _GROUP_ID.match(sid)
            if m:
                seen.add(m["group"])
        asked = set()
        for g in groups:
            g = str(g).strip().upper()
            asked |= {g} if "_" in g else {f"{g}_F", f"{g}_M"}
        add = {f"{g}:{n}:{d}:t{t}" for g, n, d in sentences for t in temps}
        if not sentences:  # grouped samples: one per group x template
            add |= {f"{g}:t{t}" for g in seen | asked for t in temps}
        self.wanted.setdefault(model, set()).update(add)

    def sample(self, model: str, sample_id: Any, md: Mapping[str, Any], items: Iterable[Mapping[str, Any]]) -> None:
        """Record an arrived sample: its sentences (``items``: grouped texts, or the one sentence's metadata)."""
        self.arrived.setdefault(model, set()).add(str(sample_id))
        descs = md.get("descriptors") if isinstance(md.get("descriptors"), Mapping) else {}
        for idx, d in descs.items():
            if isinstance(d, Mapping) and "descriptor" in d:
                self.descriptors.setdefault(model, {})[str(idx)] = str(d["descriptor"])
        for it in items:
            fields = {**md, **(descs.get(str(it.get("descriptor_index"))) or {}), **it}
            name = f"{fields['name_index']}:{fields['name']}"
            desc = str(fields["descriptor"])
            if it.get("descriptor_index") is not None:
                self.descriptors.setdefault(model, {})[str(it["descriptor_index"])] = desc
            self.names[(model, str(fields["group"]), str(fields["name_index"]))] = name
            self.cells.add((model, str(fields["group"]), desc, name, int(fields["template"])))

    def missing_samples(self) -> dict[str, list[str]]:
        """model -> sample ids of the run's dataset that never arrived (sorted)."""
        return {m: sorted(ids - self.arrived.get(m, set())) for m, ids in self.wanted.items()
                if ids - self.arrived.get(m, set())}

    def frame(self) -> pd.DataFrame:
        """One row per expected cell (``name`` None where a grouped sample never arrived)."""
        rows: list[tuple[Any, ...]] = list(self.cells)
        for model, ids in self.missing_samples().items():
            descs = self.descriptors.get(model, {})
            for sid in ids:
                m = _SENTENCE_ID.match(sid)
                if m:
                    desc = descs.get(m["descriptor"], f"descriptor #{m['descriptor']}")
                    name = self.names.get((model, m["group"], m["name"]), f"{m['name']}:?")
                    rows.append((model, m["group"], desc, name, int(m["template"])))
                    continue
                m = _GROUP_ID.match(sid)
                if m:
                    rows += [(model, m["group"], d, None, int(m["template"])) for d in sorted(set(descs.values()))]
        return pd.DataFrame(rows, columns=["model", "group", "descriptor", "name", "template"])


def split_complete(sentences: pd.DataFrame, expected: pd.DataFrame | None = None
                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(rows of complete units, one row per incomplete unit with ``present`` and ``expected`` name x template
    cells).

    ``expected`` (:meth:`ExpectedCells.frame`): the cells of every unit the run was asked to score; a unit
    is complete when it holds all of them (units that never arrived are listed with 0 present). Models
    without expected cells (lm-eval samples, tables), or ``expected`` None: the names of the group seen
    anywhere in the model's rows x the templates seen in the model's rows; without names (group-level
    tables) the templates alone.
    """
    if expected is not None and len(expected):
        known = set(expected["model"].unique())
        with_exp = sentences[sentences["model"].isin(known)]
        rest = sentences[~sentences["model"].isin(known)]
        keep_a, miss_a = _split_expected(with_exp, expected)
        keep_b, miss_b = _split_observed(rest)
        return (pd.concat([keep_a, keep_b], ignore_index=True),
                pd.concat([miss_a, miss_b], ignore_index=True).sort_values(UNIT, ignore_index=True))
    return _split_observed(sentences)


def _split_expected(sentences: pd.DataFrame, expected: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    present = sentences[UNIT + ["name", "template"]].drop_duplicates()
    exp_known = expected[expected["name"].notna()]
    exp_open = expected[expected["name"].isna()]
    hit = exp_known.merge(present, on=UNIT + ["name", "template"], how="inner")
    # plain dicts (tuple keys): one look-up per unit, not a pandas index search each
    n_exp = exp_known.groupby(UNIT).size().to_dict()
    n_hit = hit.groupby(UNIT).size().to_dict()
    names_per_group = exp_known.groupby(["model", "group"])["name"].nunique().to_dict()
    open_templates = exp_open.drop_duplicates(UNIT + ["template"]).groupby(UNIT).size().to_dict()
    units = sorted(set(n_exp) | set(open_templates))
    missing = []
    good = set()
    for u in units:
        n_open = int(open_templates.get(u, 0))
        total = int(n_exp.get(u, 0)) + n_open * max(int(names_per_group.get(u[:2], 0)), 1)
        got = int(n_hit.get(u, 0))
        if n_open == 0 and got >= int(n_exp.get(u, 0)):
            good.add(u)
        else:
            missing.append((*u, got, total))
    idx = pd.MultiIndex.from_frame(sentences[UNIT])
    keep = sentences[idx.isin(list(good))] if good else sentences.iloc[0:0]
    return keep, pd.DataFrame(missing, columns=COLUMNS)


def _split_observed(sentences: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    if sentences.empty:
        return sentences, pd.DataFrame(columns=COLUMNS)
    has_names = "name" in sentences.columns and sentences["name"].notna().any()
    keep = []
    missing = []
    for model, sub in sentences.groupby("model", sort=False):
        n_templates = sub["template"].nunique()
        if has_names:
            names = sub.groupby("group")["name"].nunique()
            cells = sub.groupby(["group", "descriptor"])[["name", "template"]].apply(
                lambda d: len(d.drop_duplicates()))
            expected = cells.index.get_level_values("group").map(names) * n_templates
        else:
            cells = sub.groupby(["group", "descriptor"])["template"].nunique()
            expected = pd.Index([n_templates] * len(cells))
        ok = pd.Series(cells.to_numpy() >= expected.to_numpy(), index=cells.index)
        bad = cells[~ok.to_numpy()]
        for (g, d), present in bad.items():
            missing.append((model, g, d, int(present), int(expected[cells.index.get_loc((g, d))])))
        good = ok[ok].index
        idx = pd.MultiIndex.from_frame(sub[["group", "descriptor"]])
        keep.append(sub[idx.isin(good)])
    return pd.concat(keep, ignore_index=True), pd.DataFrame(missing, columns=COLUMNS)
