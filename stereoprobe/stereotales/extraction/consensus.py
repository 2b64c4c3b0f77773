"""Combining the votes of several extractors (or refusal judges) into one value per attribute.

Pure functions, no I/O. ``"majority"`` reproduces the published StereoTales rule (flare
``get_consensus_value`` in ``src/flare/scorer/attribute_extraction/scorer.py`` of Giskard-AI/flare after
commit 8bc4730); ``"unanimity"`` is the earlier Phare rule.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Literal

from stereoprobe.stereotales.contract import UNKNOWN

__all__ = ["UNKNOWN", "CONSENSUS_RULES", "ConsensusRule", "consensus_value", "consensus_profile"]

ConsensusRule = Literal["majority", "unanimity"]
CONSENSUS_RULES: tuple[str, ...] = ("majority", "unanimity")


def consensus_value(votes: Sequence[str], rule: ConsensusRule = "majority") -> str:
    """One value from the votes of the models that answered.

    - ``"majority"`` (strict majority of the votes cast, as flare): with ``m = len(votes)``, the most
      common value wins if it has at least ``m // 2 + 1`` votes (2 of 3, 2 of 2, 1 of 1), else ``"unknown"``.
      ``"unknown"`` is an ordinary vote, so two ``"unknown"`` votes out of three give ``"unknown"``.
    - ``"unanimity"``: the value every voter gave, else ``"unknown"``.

    No votes (every call failed) gives ``"unknown"``. Failed calls must be left out of ``votes``: they are
    not votes, which is how upstream lets a single surviving extractor decide alone (flare ``scorer.py``; see
    ``min_extractors`` of the scorer for a quorum).
    """
    if rule not in CONSENSUS_RULES:
        raise ValueError(f"consensus rule must be one of {CONSENSUS_RULES}, got {rule!r}")
    if not votes:
        return UNKNOWN
    value, count = Counter(votes).most_common(1)[0]
    needed = len(votes) if rule == "unanimity" else len(votes) // 2 + 1
    return value if count >= needed else UNKNOWN


def consensus_profile(
    extractions: Sequence[Mapping[str, str]],
    attributes: Sequence[str],
    rule: ConsensusRule = "majority",
) -> dict[str, str]:
    """Per-attribute consensus over the profiles returned by the extractors that succeeded.

    Parameters
    ----------
    extractions : sequence of mappings
        One ``{attribute: value}`` mapping per successful extractor (failed extractors left out).
    attributes : sequence of str
        The taxonomy's attribute keys, in output order. An attribute missing from an extraction is not a
        vote for that attribute.
    rule : "majority" | "unanimity"
    """
    return {
        attr: consensus_value([ex[attr] for ex in extractions if attr in ex], rule) for attr in attributes
    }
