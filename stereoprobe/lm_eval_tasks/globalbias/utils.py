"""lm-eval hooks of the GlobalBias task: the sentence set (same ids and fields as the inspect task) and
per-sentence results."""

from __future__ import annotations

import math


def load_dataset(source="bundled", faithful=True, groups=None, descriptors=None, templates=None, subset=None,
                 **_ignored):
    """DatasetDict with a ``test`` split: one doc per sentence (``id``, ``text`` and the sample metadata)."""
    import datasets

    from stereoprobe.globalbias.data import build_sentences

    if isinstance(templates, int):
        templates = [templates]
    rows = []
    for s in build_sentences(source, bool(faithful), groups, descriptors, templates, subset):
        md = s.metadata()
        rows.append({"id": s.id, "text": s.text, **{k: ("" if v is None else v) for k, v in md.items()}})
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})


def process_results(doc, results):
    (ll,) = results
    ll = float(ll[0] if isinstance(ll, (tuple, list)) else ll)
    n_bytes = len(doc["text"].encode("utf-8"))
    return {"sum_logprob": ll, "bits_per_byte": -ll / (n_bytes * math.log(2))}
