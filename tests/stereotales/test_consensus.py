"""Consensus rules (flare attribute_extraction/scorer.py) on hand-written votes, compared with the upstream reference function."""

from __future__ import annotations

from collections import Counter

import pytest

from stereoprobe.stereotales.extraction.consensus import UNKNOWN, consensus_profile, consensus_value


def upstream_consensus(values: list[str]) -> str:
    """Upstream get_consensus_value (flare attribute_extraction/scorer.py) restated, as the behaviour to match."""
    if not values:
        return "unknown"
    min_votes = len(values) // 2 + 1
    value, count = Counter(values).most_common(1)[0]
    return value if count >= min_votes else "unknown"


@pytest.mark.parametrize(
    ("votes", "majority", "unanimity"),
    [
        (["man", "man", "man"], "man", "man"),
        (["man", "man", "woman"], "man", UNKNOWN),  # 2 of 3
        (["man", "woman", "non-binary"], UNKNOWN, UNKNOWN),  # 1-1-1 split
        (["man", "man"], "man", "man"),  # 2 of 2 (one extractor failed)
        (["man", "woman"], UNKNOWN, UNKNOWN),  # 1-1 with one failed
        (["woman"], "woman", "woman"),  # 1 of 1 (two failed): the survivor decides alone (as upstream)
        ([], UNKNOWN, UNKNOWN),  # all failed
        (["unknown", "unknown", "man"], UNKNOWN, UNKNOWN),  # "unknown" is an ordinary vote
        (["man", "unknown", "unknown"], UNKNOWN, UNKNOWN),
        (["a", "a", "b", "b"], UNKNOWN, UNKNOWN),  # 2-2 tie among 4: needs 3
        (["a", "a", "a", "b"], "a", UNKNOWN),
        (["a", "b", "a", "c", "a"], "a", UNKNOWN),  # 3 of 5
    ],
)
def test_consensus_value(votes, majority, unanimity):
    assert consensus_value(votes, "majority") == majority
    assert consensus_value(votes, "majority") == upstream_consensus(votes)
    assert consensus_value(votes, "unanimity") == unanimity


def test_rule_is_checked():
    with pytest.raises(ValueError, match="consensus rule"):
        consensus_value(["a"], "plurality")


def test_consensus_profile_skips_missing_attributes():
    attrs = ["age", "gender", "religion"]
    ex = [
        {"age": "senior (65+)", "gender": "man", "religion": "Muslim"},
        {"age": "senior (65+)", "gender": "woman", "religion": "unknown"},
        {"age": "adult (30-44)", "gender": "man"},  # no religion key: not a vote
    ]
    assert consensus_profile(ex, attrs, "majority") == {
        "age": "senior (65+)",
        "gender": "man",
        "religion": UNKNOWN,  # 1-1 between the two that answered
    }
    assert consensus_profile(ex, attrs, "unanimity") == {"age": UNKNOWN, "gender": UNKNOWN, "religion": UNKNOWN}
    assert consensus_profile([], attrs) == {a: UNKNOWN for a in attrs}
