""""Did you mean" for a misspelt name: the closest known names, one rule for the whole project (no heavy import,
for the command line's errors).

The rule (:func:`closest`): the known names equal to the word but for case first, else difflib's nearest
(case ignored, ratio >= 0.6), at most two. The phrase (:func:`did_you_mean`): `` (did you mean X or Y?)``.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["closest", "did_you_mean"]


def closest(word: Any, known: Sequence[Any]) -> list[str]:
    """The entries of ``known`` closest to a misspelt ``word`` (as texts): those equal to it but for case first,
    then difflib's nearest (case ignored), at most two."""
    texts = [str(k) for k in known]
    text = str(word).strip()
    same = [k for k in texts if k.lower() == text.lower()]
    if same:
        return same[:2]
    by_lower = {k.lower(): k for k in texts}
    return [by_lower[c] for c in difflib.get_close_matches(text.lower(), list(by_lower), n=2, cutoff=0.6)]


def did_you_mean(word: Any, known: Sequence[Any], shown: Callable[[str], str] | None = None) -> str:
    """`` (did you mean X?)`` for the closest entries of ``known`` to ``word``, else ``""``; ``shown`` writes
    each entry as the user would type it (``stereoprobe/`` + a task name)."""
    close = [shown(c) if shown else c for c in closest(word, known)]
    return f" (did you mean {' or '.join(close)}?)" if close else ""
