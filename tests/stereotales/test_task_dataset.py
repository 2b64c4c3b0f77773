"""The stereotales task's dataset: size and ids of the paper's benchmark (2,844 prompts per language, the
paper's 79 values x 36 scenarios), prompts in every language, selection parameters and their helpers, and
``limit`` spread over the grid. The task end to end with mock models: ``test_task.py``."""

from __future__ import annotations

from functools import partial

import re

import pytest

from stereoprobe.stereotales.taxonomy import build_samples, load_taxonomy
from stereoprobe.stereotales.taxonomy.samples import as_list, resolve_values, spread_limit
from stereoprobe.tasks.stereotales import stereotales as published_stereotales

# these tests exercise stereoprobe's own wording (no upstream files needed); the published defaults are
# checked by tests/conformance/test_stereotales.py
stereotales = partial(published_stereotales, seeds="bundled", role_prompts="bundled", run_settings="none",
                      role_settings="none")

TAX = load_taxonomy()


def test_reference_dataset_size_and_ids():
    samples = build_samples(TAX, languages="en")
    assert len(samples) == 2844
    ids = [s.id for s in samples]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"en:[a-z_]+:\d+:[a-z_]+:\d", i) for i in ids)
    task = stereotales(languages="en")
    assert [s.id for s in task.dataset] == ids
    assert task.version == "5-A"  # the published protocol by default since 3-A (1.2.0 before the N-X scheme);
    # 4-A: the refusal request strips the story as flare does; 5-A: flare's response formats
    assert task.metadata["taxonomy_fingerprint"] == TAX.fingerprint()
    # every selected language yields the same grid
    n_lang = len(TAX.languages)
    assert len(stereotales(languages="all").dataset) == 2844 * n_lang
    # the default is the paper's benchmark: every language of the taxonomy (10 for the reference taxonomy)
    assert n_lang == 10 and len(stereotales().dataset) == 2844 * n_lang


def test_prompts_in_every_language():
    for lang in TAX.languages:
        [sample] = stereotales(languages=lang, limit=1).dataset
        assert sample.id.startswith(f"{lang}:") and sample.metadata["language"] == lang
        assert sample.metadata["character"] in sample.input
    inputs = {stereotales(languages=lang, limit=1).dataset[0].input for lang in TAX.languages}
    assert len(inputs) == len(TAX.languages)  # each language has its own wording


def test_selection_parameters():
    task = stereotales(languages="en", attributes=["gender", "professional_field"], values="man,business, finance, legal")
    # 36 scenarios x (1 gender value + 1 professional value)
    assert len(task.dataset) == 72
    assert {s.metadata["attribute_value_key"] for s in task.dataset} == {"man", "business, finance, legal"}
    assert len(stereotales(languages="en", scenario_groups="hobbies,health").dataset) == 79 * 8
    assert len(stereotales(languages="en", extra_english=True).dataset) > 2844
    with pytest.raises(ValueError):
        stereotales(attributes="not_an_attribute")
    with pytest.raises(ValueError, match="consensus"):
        stereotales(consensus="plurality")
    with pytest.raises(ValueError, match="extraction_prompt"):
        stereotales(extraction_prompt="other")


def test_parameter_helpers():
    assert as_list("en, fr", "languages") == ["en", "fr"]
    assert as_list(["en", "fr"], "languages") == ["en", "fr"]
    assert as_list(None, "x") is None
    known = ["business, finance, legal", "man", "agriculture"]
    assert resolve_values(["business", "finance", "legal", "man"], known) == ["business, finance, legal", "man"]
    assert resolve_values("man;agriculture", known) == ["man", "agriculture"]
    assert resolve_values("man,nope", known) == ["man", "nope"]


def test_limit_spreads_over_grid_per_language():
    samples = build_samples(TAX, languages="en")
    picked = spread_limit(samples, 19)
    assert len(picked) == 19
    assert [s.id for s in picked] == [samples[int(k * 2844 / 19)].id for k in range(19)]
    assert len({s.metadata["attribute"] for s in picked}) > 10
    assert len(stereotales(languages="en", limit=7).dataset) == 7
    with pytest.raises(ValueError, match="limit"):
        spread_limit(samples, 0)
