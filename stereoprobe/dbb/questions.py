"""The DBB question set of one run: source, expansion, selection and the DBB-SG option sentences.

Shared by the inspect tasks (``tasks/dbb.py``), the lm-eval documents (:mod:`stereoprobe.lm_eval_tasks.docs_builder`)
and the benches, so every route evaluates the same questions under the same ids. Task parameters are
validated with :mod:`stereoprobe.params` (one clear :class:`~stereoprobe.dbb.data.DBBDataError` per bad
value).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stereoprobe import params as P
from stereoprobe.dbb import data as D
from stereoprobe.dbb.contract import DEFAULT_FAITHFUL, DEFAULT_SOURCE  # noqa: F401 (re-exported)
from stereoprobe.dbb.published import NAME_SOURCES, load_published_names


def _is_upstream(source: str) -> bool:
    """Upstream templates: the pinned files or a local copy of the upstream repository (a folder)."""
    return str(source) == "upstream" or (str(source) != "bundled" and Path(source).is_dir())


def name_source(source: str, names: str | None) -> str:
    """``names``: "published" (upstream's realised draws; the default for upstream templates) or "draw" (a
    seeded draw; the default, and the only choice, for the bundled templates or a template CSV)."""
    if names is None:
        return "published" if _is_upstream(source) else "draw"
    names = P.choice(names, "names", NAME_SOURCES, error=D.DBBDataError)
    if names == "published" and not _is_upstream(source):
        raise D.DBBDataError(f"names=published: upstream published names for its own templates only; source "
                             f"{source!r} is not upstream's (use -T names=draw)")
    return names


def select_questions(source: str = DEFAULT_SOURCE, faithful: bool = DEFAULT_FAITHFUL, seed: int = 0,
                     categories: Any = None, limit_templates: int | None = None, templates: Any = None,
                     names: str | None = None) -> tuple[list[D.QuestionTemplate], list[D.Question]]:
    """The templates and questions of a run: every template of ``source`` expanded (so the faithful
    stale-option reuse sees the rows before a selected template), then filtered by ``templates`` (ids),
    ``limit_templates`` (the first N) and ``categories``. ``names``: see :func:`name_source` (the published
    draws come from upstream's ``data/Bias-Dataset.csv`` at the pinned commit)."""
    faithful = bool(P.boolean(faithful, "faithful", error=D.DBBDataError))
    seed = P.integer(seed, "seed", 0, error=D.DBBDataError)  # type: ignore[assignment]
    limit_templates = P.integer(limit_templates, "limit_templates", 1, optional=True, error=D.DBBDataError)
    cats = P.choices(categories, "categories", D.CATEGORIES, error=D.DBBDataError)
    names = name_source(source, names)
    tmpl, desc = D.load_source(source)
    # template ids of this source, a misspelt one refused with the closest (issue 35.5)
    wanted = P.known_names(templates, "templates", [t.template_id for t in tmpl], what="template id",
                           sep=",", error=D.DBBDataError)
    name_map = None
    if names == "published":
        name_map = load_published_names(tmpl, desc, local=None if str(source) == "upstream" else source)
    qs = D.expand(tmpl, desc, seed=int(seed), faithful=faithful, categories=cats, names=name_map)
    keep = [t.template_id for t in tmpl]
    if wanted is not None:
        keep = [k for k in keep if k in set(wanted)]
    if limit_templates is not None:
        keep = keep[:limit_templates]
    ks = set(keep)
    qs = [q for q in qs if q.template_id in ks]
    if not qs:
        raise D.DBBDataError("the DBB selection (categories / templates) is empty")
    return [t for t in tmpl if t.template_id in ks], qs


def parse_question_id(qid: str) -> dict[str, str]:
    """Template, category, descriptor type label and group of a question id ``{template}:{category}:{type}:{group}``
    (:func:`stereoprobe.dbb.data.question_id`)."""
    try:
        tid, cat, typ, group = str(qid).rsplit(":", 3)
    except ValueError:
        raise D.DBBDataError(f"not a DBB question id: {qid!r} (expected template:category:type:group)") from None
    return {"template_id": tid, "category": cat, "descriptor_type": f"{D.CATEGORY_LABELS.get(cat, cat)} {typ}",
            "group": group}

def dataset_name(source: str) -> str:
    return f"dbb-{source if source in ('bundled', 'upstream') else 'local'}"


@dataclass(frozen=True)
class SGItem:
    """One DBB-SG question: its prompt and the option sentences ``[[A_j, B_j], ...]`` per variation j."""

    question: D.Question
    prompt: str
    options: list[list[str]]


OWN_OPTIONS = "own"  # -T variations=own: score the template's own options only (n = 1)


def sg_variations(source: str, templates: Sequence[D.QuestionTemplate], variations: str | None
                  ) -> tuple[dict[str, list[D.Variation]], str]:
    """The sentence variations per template and where they come from (the report says which).

    Default: upstream's ten variations (the pinned more-contexts file; downloaded, verified, cached, or read
    from the local copy) for upstream templates, the bundled file for ``source=bundled``, the template's own
    options (n = 1) for a template CSV. ``variations``: a CSV (ours, e.g. built by ``dbb_build_variations``,
    or upstream's more-contexts layout) or ``"own"`` (n = 1)."""
    own = ({t.template_id: [D.Variation(t.template_id, 0, t.option_a, t.option_b)] for t in templates},
           "the template's own options only (n = 1)")
    if variations == OWN_OPTIONS:
        return own
    if variations is not None:
        return D.read_variations_csv(variations, templates), f"file {variations}"
    if str(source) == "bundled":
        return D.bundled_variations(templates), "bundled sg_variations.csv"
    if not _is_upstream(source):
        return own[0], own[1] + ": a template CSV has no published variations; build them with " \
            "dbb_build_variations and pass -T variations="
    from stereoprobe.upstream import UpstreamDataError, fetch

    try:
        path = fetch(D.UPSTREAM_KEY, D.UPSTREAM_VARIATIONS, local=None if str(source) == "upstream" else source)
    except UpstreamDataError as e:
        raise UpstreamDataError(
            f"DBB-SG needs upstream's ten variations per option: {e} -- or score the templates' own options "
            "only (n = 1, not the paper's protocol): -T variations=own") from e
    return D.read_variations_csv(path, templates), f"upstream more-contexts file {D.UPSTREAM_VARIATIONS}"


def sg_items(questions: Sequence[D.Question], var: dict[str, list[D.Variation]], faithful: bool,
             prompt_spec: dict[str, str]) -> list[SGItem]:
    """Prompt (instruction + context) and option sentences (pronouns filled) of every question."""
    out = []
    for q in questions:
        pairs = []
        for v in var[q.template_id]:
            if v.variation == 0:
                pairs.append([q.option_a, q.option_b])
                continue
            a = D.fill_option(v.option_a, q.pronouns, faithful)
            b = D.fill_option(v.option_b, q.pronouns, faithful)
            pairs.append([a if a is not None else v.option_a, b if b is not None else v.option_b])
        prompt = prompt_spec["template"].format(instruction=prompt_spec["instruction"].strip(), context=q.context)
        out.append(SGItem(q, prompt, pairs))
    return out



def sg_selection(source: str = DEFAULT_SOURCE, faithful: bool = DEFAULT_FAITHFUL, seed: int = 0,
                 categories: Any = None, limit_templates: int | None = None, templates: Any = None,
                 variations: str | None = None, names: str | None = None,
                 prompt: str = "upstream") -> tuple[list[SGItem], str]:
    """The DBB-SG items of a selection (same arguments as the ``dbb_sg`` task, ``prompt`` included) and where
    the variations come from."""
    from stereoprobe.dbb.scoring import prompts

    faithful = bool(P.boolean(faithful, "faithful", error=D.DBBDataError))
    tmpl, qs = select_questions(source, faithful, seed, categories, limit_templates, templates, names)
    var, provenance = sg_variations(source, tmpl, variations)
    return sg_items(qs, var, faithful, prompts(prompt, source)["sg"]), provenance

__all__ = ["DEFAULT_FAITHFUL", "DEFAULT_SOURCE", "NAME_SOURCES", "OWN_OPTIONS", "SGItem", "dataset_name",
           "name_source", "parse_question_id", "select_questions",
           "sg_items", "sg_selection", "sg_variations"]
