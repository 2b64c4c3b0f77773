"""lm-eval hooks of the GlobalBias task (Siddique, Turner, Espinosa-Anke, "Who is better at math, Jenny or
Jingzhen? Uncovering Stereotypes in Large Language Models", EMNLP 2024, arXiv 2407.06917; upstream
https://github.com/groovychoons/GlobalBias): the sentence set (same ids and fields as the inspect task),
per-sentence results, and the share of flagged (group, descriptor) pairs computed by the task's aggregation
with ``stereoprobe.globalbias.apx`` (the functions ``stereoprobe globalbias`` uses)."""

from __future__ import annotations

import math
from typing import Any

DOC_KEYS = ("text", "group", "ethnicity", "gender", "name", "name_index", "descriptor", "axis", "target",
            "template", "tokenizer")


def load_dataset(source: str = "upstream", faithful: bool = True, groups: Any = None, descriptors: Any = None,
                 templates: Any = None, subset: str | None = None, tokenizer: str | None = None,
                 template_wording: str | None = None, **_ignored: Any) -> Any:
    """DatasetDict with a ``test`` split: one doc per sentence (``id``, ``text`` and the sample metadata).

    ``tokenizer`` (optional metadata): the model's tokenizer, so the flag share uses per-token perplexity as
    the paper; without it the sentences' perplexity is per byte (``stereoprobe globalbias --measure byte``).
    ``template_wording``: upstream's templates read from the pinned script (default, except for
    ``source: bundled``) or "stereoprobe" (the project's own wording).
    """
    import datasets

    from stereoprobe.globalbias.data import build_sentences

    if tokenizer:
        from stereoprobe.globalbias.lm_eval import load_tokenizer

        try:
            load_tokenizer(str(tokenizer))
        except Exception as e:  # noqa: BLE001 - a bad metadata value, reported before any model call
            raise ValueError(f"globalbias: cannot load the tokenizer {tokenizer!r} given in --metadata ({e})") from None
    if isinstance(templates, int):
        templates = [templates]
    rows = []
    for s in build_sentences(source, bool(faithful), groups, descriptors, templates, subset,
                               template_wording=template_wording):
        md = s.metadata()
        rows.append({"id": s.id, "text": s.text, **{k: ("" if v is None else v) for k, v in md.items()},
                     "tokenizer": str(tokenizer or "")})
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})


def process_results(doc: dict, results: list) -> dict[str, Any]:
    """Summed log-likelihood and bits per byte of one sentence; the (doc, ll) pair for the flag share."""
    (ll,) = results
    ll = float(ll[0] if isinstance(ll, (tuple, list)) else ll)
    n_bytes = len(doc["text"].encode("utf-8"))
    item = ({k: doc.get(k, "") for k in DOC_KEYS}, ll)
    return {"flagged_share": item, "sum_logprob": ll, "bits_per_byte": -ll / (n_bytes * math.log(2))}


def agg_flagged_share(items: list[tuple[dict, float]]) -> float:
    """Share of (group, descriptor) pairs whose bias score exceeds the reference threshold (the paper's
    flags; the age axis excluded as upstream), from the sentences' perplexities."""
    import pandas as pd

    from stereoprobe.globalbias.lm_eval import flag_share, sentence

    rows = [sentence(doc, ll) for doc, ll in items if math.isfinite(ll)]
    return flag_share(pd.DataFrame(rows))
