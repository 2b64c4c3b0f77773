"""The judge task's dataset: one inspect ``Sample`` per distinct association of an association file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from inspect_ai.dataset import MemoryDataset, Sample

from stereoprobe.errors import InputError
from stereoprobe.stereotales.judge.associations import (
    association_key,
    deduplicate_associations,
    load_association_rows,
    same_model,
)
from stereoprobe.stereotales.judge.contract import KEY_COLUMNS, META_GENERATORS, TASK_JUDGE
from stereoprobe.upstream import UpstreamDataError


def select_associations(
    associations: str | Path,
    generator_model: Sequence[str] | None = None,
    slices: Sequence[str] | None = None,
    upstream_dir: str | Path | None = None,
) -> pd.DataFrame:
    """Read the association file, keep the rows of ``generator_model`` / ``slices``, one row per association.

    An empty file or filters that remove every row are an :class:`~stereoprobe.errors.InputError`.
    """
    try:
        rows = load_association_rows(associations, local=upstream_dir)
    except UpstreamDataError as e:  # the human study's associations (associations=upstream) not obtainable
        raise UpstreamDataError(f"{e}; or judge your own associations (stereoprobe associations' table) with "
                                "-T associations=associations.csv") from e
    source = rows.attrs.get("source", associations)
    from stereoprobe import params as P  # an entry no row has is a typo: refused with the closest (issue 35.5)

    if generator_model is not None:
        models = sorted({m for m in rows["model"] if isinstance(m, str)})
        for wanted in generator_model:
            if not any(same_model(m, wanted) for m in models):
                P.unknown_entry("generator_model", wanted, _shown(generator_model), models, what="model")
        rows = rows[[isinstance(m, str) and any(same_model(m, w) for w in generator_model) for m in rows["model"]]]
    if slices is not None:
        known = sorted(set(rows["slice"].astype(str)))
        for wanted in slices:
            if str(wanted) not in known:
                P.unknown_entry("slices", wanted, _shown(slices), known, what="slice")
        rows = rows[rows["slice"].astype(str).isin([str(s) for s in slices])]
    table = deduplicate_associations(rows)
    if table.empty:
        raise InputError(
            f"no associations to judge in {source}"
            + (f" for generator_model={_shown(generator_model)!r}" if generator_model is not None else "")
            + (f" in slices={_shown(slices)!r}" if slices is not None else "")
            + " (the file is empty or the filters removed every row)"
        )
    table.attrs["source"] = str(source)
    return table


def _shown(names: Sequence[str]) -> str | list[str]:
    return names[0] if len(names) == 1 else list(names)


def association_samples(associations: pd.DataFrame, prompt_version: str) -> list[Sample]:
    """One Sample per association (id = ``association_id``); the prompt is rendered per epoch by the solver."""
    samples = []
    for r in associations.itertuples(index=False):
        key = association_key(r.base_attribute, r.base_value, r.compared_attribute, r.compared_value)
        samples.append(
            Sample(
                id=r.association_id,
                input=key,
                metadata={
                    "association_id": r.association_id,
                    **{c: getattr(r, c) for c in KEY_COLUMNS},
                    "question_id": r.question_id,
                    META_GENERATORS: list(r.generator_models),
                    "slices": list(r.slices),
                    "prompt_version": prompt_version,
                },
            )
        )
    return samples


def judge_dataset(table: pd.DataFrame, prompt_version: str) -> MemoryDataset:
    """The inspect dataset of :func:`association_samples`, named after the association file."""
    name = Path(str(table.attrs.get("source", "associations"))).name
    return MemoryDataset(association_samples(table, prompt_version), name=f"{TASK_JUDGE}:{name}")
