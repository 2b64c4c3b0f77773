"""GlobalBias sentences as inspect samples: one per sentence, or one per descriptor x template holding the
sentences of every name as text items of the grouped likelihood contract (:mod:`stereoprobe.likelihood`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageUser

from stereoprobe.globalbias.data import Sentence
from stereoprobe.likelihood_scores import N_TEXTS_METADATA, TEXTS_METADATA

if TYPE_CHECKING:
    from stereoprobe.globalbias.profiles_parse import ProfilePrompt


def _decoder_text(s: Sentence) -> str:
    if not s.text.startswith(s.encoder_input):
        raise ValueError(f"sentence {s.id}: {s.text!r} does not start with its encoder input {s.encoder_input!r}")
    return s.text[len(s.encoder_input):]


def sentence_samples(sentences: Iterable[Sentence], encoder_decoder: bool = False) -> list[Sample]:
    """One sample per sentence (id ``{GROUP}:{name index}:{descriptor index}:t{template}``); with
    ``encoder_decoder`` the user message holds the decoder text and ``metadata["encoder_text"]``. (Masked
    LMs: the input is the plain text, so their truncation comes from ``-M mlm_max_length``.)"""
    out = []
    for s in sentences:
        inp: str | list[ChatMessageUser] = s.text
        if encoder_decoder:
            inp = [ChatMessageUser(content=_decoder_text(s), metadata={"encoder_text": s.encoder_input})]
        out.append(Sample(input=inp, id=s.id, metadata=s.metadata()))
    return out


def group_id(group: str, template: int) -> str:
    """Sample id of a name group x template: ``{GROUP}:t{template}``."""
    return f"{group}:t{template}"


def group_samples(sentences: Iterable[Sentence], encoder_decoder: bool = False,
                  mlm_max_length: int | None = None) -> list[Sample]:
    """One sample per name group x template (in first-appearance order) holding the sentences of the group's
    names with every selected descriptor: text items ``{id, text, name, name_index, descriptor_index}``
    (+ ``encoder_text``, ``mlm_max_length``); the descriptors' fields are in ``metadata["descriptors"]`` (by
    index, as a string). Grouping by name lets the provider share each name's sentence prefix ("My name is
    Amira, I") across descriptors."""
    groups: dict[tuple[str, int], list[Sentence]] = {}
    for s in sentences:
        groups.setdefault((s.name.group, s.template), []).append(s)
    out = []
    for (group, template), members in groups.items():
        n0 = members[0].name
        items = []
        descriptors: dict[str, dict[str, object]] = {}
        for s in members:
            d = s.descriptor
            descriptors.setdefault(str(d.index), {"descriptor": d.descriptor, "dataset": d.dataset, "axis": d.axis,
                                                  "target": d.target})
            item: dict[str, object] = {"id": s.id, "text": s.text, "name": s.name.name, "name_index": s.name.index,
                                       "descriptor_index": d.index}
            if encoder_decoder:
                item["text"] = _decoder_text(s)
                item["encoder_text"] = s.encoder_input
            if mlm_max_length is not None and not encoder_decoder:
                item["mlm_max_length"] = mlm_max_length
            items.append(item)
        meta = {"group": group, "ethnicity": n0.ethnicity, "gender": n0.gender, "template": template,
                "descriptors": descriptors, N_TEXTS_METADATA: len(items), TEXTS_METADATA: items}
        out.append(Sample(input=f"GlobalBias: {len(items)} sentences of the {group} names, template {template}",
                          id=group_id(group, template), metadata=meta))
    return out


def name_batches(names: list, batch_size: int, seed: int | None = 42) -> list[list]:
    """Names shuffled as the reference does (``DataFrame.sample(frac=1, random_state=42)``, i.e.
    ``RandomState(42).choice(n, n, replace=False)``), cut into consecutive batches."""
    import numpy as np

    order = np.arange(len(names)) if seed is None else np.random.RandomState(seed).choice(
        len(names), len(names), replace=False)
    shuffled = [names[i] for i in order]
    return [shuffled[i:i + batch_size] for i in range(0, len(shuffled), batch_size)]


def profile_samples(names: list, batch_size: int, runs: int, seed: int | None = 42,
                    prompt: ProfilePrompt | None = None) -> list[Sample]:
    """One sample per run x batch of names (ids ``run{r}:batch{i}``), ``prompt`` asking for their profiles
    (None: stereoprobe's own wording; see :func:`stereoprobe.globalbias.profiles_parse.profile_prompt`)."""
    from stereoprobe.globalbias.profiles_parse import build_prompt

    batches = name_batches(names, batch_size, seed)
    samples = []
    for r in range(runs):
        for i, b in enumerate(batches):
            meta = [{"name": n.name, "group": n.group, "ethnicity": n.ethnicity, "gender": n.gender,
                     "name_index": n.index} for n in b]
            samples.append(Sample(input=build_prompt([n.name for n in b], prompt), id=f"run{r}:batch{i}",
                                  metadata={"run_id": r, "batch": i, "names": meta}))
    return samples
