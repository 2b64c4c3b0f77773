"""Task options that take a keyword or a path (``-T source=bundled`` or ``-T source=/data/GlobalBias``), checked
before any model loads and before any download, by one rule: a value that is none of the option's keywords
must be a file or folder that exists, else it is refused in one line with the closest keyword
(``-T source=bundeld``: did you mean bundled?).

:data:`OPTIONS` lists every such option of every task (``tests/test_path_options.py`` walks the tasks'
signatures: each text option whose description names a path, file or folder is listed here, or in
:data:`NOT_CHECKED` with the reason).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from stereoprobe.hints import did_you_mean
from stereoprobe.params import TaskParameterError

__all__ = ["NOT_CHECKED", "OPTIONS", "PathOptionError", "check", "check_value"]

UPSTREAM_BUNDLED = ("upstream", "bundled")
#: (task, option) -> its keywords (a value that is none of them must be an existing path)
OPTIONS: dict[tuple[str, str], tuple[str, ...]] = {
    ("dbb", "source"): UPSTREAM_BUNDLED,
    ("dbb_sg", "source"): UPSTREAM_BUNDLED,
    ("dbb_sg", "variations"): ("own",),
    ("dbb_baselines", "source"): UPSTREAM_BUNDLED,
    ("dbb_build_concepts", "source"): ("crows_pairs", "stereoset_intra", "stereoset_inter", "sofa", "bbq"),
    ("dbb_build_concepts", "local"): (),
    ("dbb_build_questions", "concepts"): (),
    ("dbb_build_variations", "source"): UPSTREAM_BUNDLED,
    ("globalbias", "source"): UPSTREAM_BUNDLED,
    ("globalbias_profiles", "source"): UPSTREAM_BUNDLED,
    ("stereotales", "seeds"): UPSTREAM_BUNDLED,
    ("stereotales", "taxonomy"): (),
    ("stereotales_judge", "associations"): ("upstream",),
    ("stereotales_judge", "prompt"): ("upstream", "bundled", "stereoprobe"),
    ("stereotales_judge", "upstream_dir"): (),
}
#: text options whose description names a path but that are not checked here, and why
NOT_CHECKED: dict[tuple[str, str], str] = {
    ("dbb_sg", "tokenizer"): "a Hugging Face Hub id or a folder: an id cannot be told from a typo offline",
    ("dbb", "names"): "a keyword (published or draw), checked by the task as a choice",
    ("stereotales_judge", "value_lists"): "a keyword (taxonomy, observed or none), checked by the task as a choice",
    ("dbb_build_concepts", "generation"): "a keyword (upstream or plain), checked by the task as a choice",
    ("dbb_build_concepts", "prompt"): "a keyword (upstream or stereoprobe), checked by the task as a choice",
    ("dbb_build_questions", "prompt"): "a keyword (upstream or stereoprobe), checked by the task as a choice",
    ("dbb_build_variations", "prompt"): "a keyword (upstream or stereoprobe), checked by the task as a choice",
    ("dbb", "prompt"): "a keyword (upstream or stereoprobe; the file named is where upstream's wording is read)",
    ("dbb_baselines", "prompt"): "a keyword (upstream or stereoprobe), checked by the task as a choice",
    ("globalbias", "template_wording"): "a keyword (upstream or stereoprobe), checked by the task as a choice",
    ("globalbias_profiles", "prompt"): "a keyword (upstream or stereoprobe), checked by the task as a choice",
}


class PathOptionError(TaskParameterError):
    """A path-or-keyword option that is neither."""


def check_value(task: str, option: str, value: Any, keywords: tuple[str, ...]) -> None:
    """:class:`PathOptionError` unless ``value`` (None: the default) is one of ``keywords`` or an existing path."""
    if value is None or not isinstance(value, str):
        return  # the task refuses a value of another type itself, in its own words
    text = value.strip()
    if text in keywords or (text and os.path.exists(os.path.expanduser(text))):
        return
    named = f"one of {', '.join(repr(k) for k in keywords)} or " if keywords else ""
    hint = did_you_mean(text, keywords) if keywords else ""
    raise PathOptionError(f"-T {option}={value!r} is no keyword of task {task} and no existing file or folder"
                          f"{hint}: give {named}the path of a file or folder that exists")


def check(task: str, args: Mapping[str, Any]) -> None:
    """Check the path-or-keyword options of ``task`` among ``args`` (the ``-T`` values of a run)."""
    for (name, option), keywords in OPTIONS.items():
        if name == task and option in args:
            check_value(task, option, args[option], keywords)
