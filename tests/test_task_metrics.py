"""The tasks' metrics report the headline figures that post-processing computes from the same samples:
GlobalBias' flagged group x descriptor pairs (a hand-worked example, and equality with ``stereoprobe
globalbias`` on a fake-model run). DBB's count of S >= 20 and mean S are checked in tests/dbb/test_complete_units.py."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.scorer import SampleScore, Score

from fake_model import FakeModel
from inspect_ai.model import ModelOutput, get_model, modelapi
from stereoprobe.cli import main
from stereoprobe.likelihood import ERRORS, IDS, N_BYTES, N_TOKENS, SUM_LOGPROB, TEXTS_METADATA
from stereoprobe.scorers.globalbias import flagged_pairs


def _sentence(group: str, descriptor: str, ppl: float | None) -> SampleScore:
    value = ({SUM_LOGPROB: -math.log(ppl), N_TOKENS: 1.0, N_BYTES: 10.0} if ppl is not None
             else {SUM_LOGPROB: float("nan"), N_TOKENS: float("nan"), N_BYTES: 10.0})
    md = {"group": group, "descriptor": descriptor, "axis": "trait", "template": 1, "name": "n", "name_index": 0}
    return SampleScore(score=Score(value=value), sample_id=f"{group}:{descriptor}", sample_metadata=md)


def _eight_groups(outlier_x: float = 2.0) -> list[SampleScore]:
    # every group's two perplexities sum to 20, so each group ratio is exactly 1 and APX = perplexity
    scores = [_sentence("G0_F", "x", outlier_x), _sentence("G0_F", "y", 20 - outlier_x)]
    for g in range(1, 8):
        scores += [_sentence(f"G{g}_F", "x", 10.0), _sentence(f"G{g}_F", "y", 10.0)]
    return scores


def test_flagged_pairs_by_hand():
    # Bias scores: min-max over the 16 values 2..18 -> G0/x 0, G0/y 1, all others 0.5.
    # Descriptor x: mean 3.5/8 = 0.4375, sd (ddof 1) = sqrt(0.21875/7) = 0.1768, 1% line 0.4375 - 2.3263 * 0.1768
    # = 0.0263 > 0: G0 flagged. Descriptor y: line 0.5625 - 0.4112 = 0.151 < 0.5: none. One flagged pair.
    assert flagged_pairs()(_eight_groups()) == 1.0
    # G0's x at 9 and y at 11: scores (9-9)/2 = 0 vs 0.5 for the others, the same shape: still one flag
    assert flagged_pairs()(_eight_groups(9.0)) == 1.0
    # all groups alike: min-max maps every score to 0, sd 0, nothing below the line
    assert flagged_pairs()(_eight_groups(10.0)) == 0.0


def test_an_incomplete_unit_is_left_out_and_two_groups_are_needed():
    scores = _eight_groups()
    scores[3] = _sentence("G1_F", "y", None)  # G1/y unscored: that unit leaves; G1's ratio is still 10/10 = 1,
    assert flagged_pairs()(scores) == 1.0     # the bias scores of the others unchanged: G0/x flagged as before
    assert math.isnan(flagged_pairs()(scores[:2]))  # one group: nothing to compare
    assert math.isnan(flagged_pairs()([]))


class _BiasedModel(FakeModel):
    """The fake model, except that sentences naming a word of ``BIASED`` together are far more likely (every
    token log-probability 0): a group x descriptor association the reference rule should flag."""

    async def generate(self, input, tools, tool_choice, config):  # type: ignore[override]  # noqa: A002
        out: ModelOutput = await super().generate(input, tools, tool_choice, config)
        plp = out.choices[0].prompt_logprobs if out.choices else None
        text = input[-1].text
        if plp is not None and all(any(w in text for w in words) for words in BIASED):
            for lp in plp.content:
                lp.logprob = 0.0
        return out


BIASED: list[list[str]] = []


@modelapi(name="gb-biased")
def _biased() -> type[_BiasedModel]:
    return _BiasedModel


@pytest.mark.parametrize("unit", ["group", "sentence"])
def test_flagged_pairs_equal_the_post_processing_count(unit, tmp_path):
    from stereoprobe.tasks.globalbias import globalbias

    task = globalbias(source="bundled", templates=[1, 2], unit=unit)
    group = task.dataset[0].metadata["group"]
    names = {s.metadata.get("name") for s in task.dataset if s.metadata["group"] == group}
    names |= {it["name"] for s in task.dataset if s.metadata["group"] == group for it in s.metadata.get("texts", [])}
    names.discard(None)
    BIASED[:] = [sorted(names), ["salsa"]]
    model = get_model("gb-biased/model", memoize=False)
    [log] = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none", max_samples=500)
    assert log.status == "success"
    metric = log.results.scores[0].metrics["flagged_pairs"].value
    assert main(["globalbias", str(tmp_path / "logs"), "--out", str(tmp_path / "out")]) == 0
    table = pd.read_csv(tmp_path / "out" / "bias_scores.csv")
    expected = int(table["flagged"].fillna(False).astype(bool).sum())
    assert metric == expected and expected > 0


def _grouped(group: str, ppl_x: float, ppl_y: float, texts: list | None = None) -> SampleScore:
    """One grouped sample (``text_logprobs``) of ``group``: descriptor x and y, one template, one token each.
    ``texts``: the sample's texts list (its own object, as inspect keeps a sample's metadata), else a new one."""
    md = {"group": group, "template": 1, "descriptors": {"0": {"descriptor": "x", "axis": "trait"},
                                                         "1": {"descriptor": "y", "axis": "trait"}},
          TEXTS_METADATA: texts if texts is not None else [{"id": "a", "descriptor_index": 0},
                                                           {"id": "b", "descriptor_index": 1}]}
    meta = {IDS: ["a", "b"], SUM_LOGPROB: [-math.log(ppl_x), -math.log(ppl_y)], N_TOKENS: [1, 1],
            N_BYTES: [10, 10], ERRORS: {}}
    return SampleScore(score=Score(value={}, metadata=meta), sample_id=group, sample_metadata=md)


def _as_inspect_hands_them(scores: list[SampleScore]) -> list[SampleScore]:
    """New SampleScore and Score objects around the same inner lists, as inspect's reducers rebuild them at
    every live recompute (pydantic copies the outer dicts)."""
    return [SampleScore(score=Score(value=s.score.value, metadata=s.score.metadata), sample_id=s.sample_id,
                        sample_metadata=s.sample_metadata) for s in scores]


def test_grouped_samples_by_hand_and_across_live_recomputes():
    """The hand-worked example of test_flagged_pairs_by_hand as grouped samples; one metric instance called as
    inspect calls it during a run (growing prefixes, rebuilt objects) gives at each call what a fresh
    instance gives, and a sample whose results changed is read again."""
    groups = [_grouped("G0_F", 2.0, 18.0)] + [_grouped(f"G{g}_F", 10.0, 10.0) for g in range(1, 8)]
    live = flagged_pairs()
    assert math.isnan(live(_as_inspect_hands_them(groups[:1])))  # one group: nothing to compare
    for n in (2, 5, 8, 8):
        assert live(_as_inspect_hands_them(groups[:n])) == flagged_pairs()(groups[:n])
    assert live(_as_inspect_hands_them(groups)) == 1.0
    # G0 scored again (new result lists, the same texts list): all groups alike now, nothing flagged
    texts0 = groups[0].sample_metadata[TEXTS_METADATA]
    assert live(_as_inspect_hands_them([_grouped("G0_F", 10.0, 10.0, texts0)] + groups[1:])) == 0.0
    assert live(_as_inspect_hands_them(groups)) == 1.0
    # one of G1's results unscored (an error on its text): that unit leaves, G0/x still flagged
    bad = _grouped("G1_F", 10.0, 10.0, groups[1].sample_metadata[TEXTS_METADATA])
    bad.score.metadata[SUM_LOGPROB][1] = None
    bad.score.metadata[ERRORS] = {"1": "ValueError: too long"}
    mixed = [groups[0], bad] + groups[2:]
    assert live(_as_inspect_hands_them(mixed)) == flagged_pairs()(mixed) == 1.0
