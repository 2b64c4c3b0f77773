"""No invented pin: every file pinned in ``stereoprobe/upstream_sources.yaml`` is an upstream file.

A pin is downloadable only if ``<repository>/<commit>/<path>`` exists upstream. The upstream copies
(``../shared/refdata``, one folder per source key) keep every file at its upstream path, except the files their
README lists as not upstream's (renderings, flattened copies). So each pin must be there, at the same relative
path, with the pinned SHA-256 or git blob id, and must not be one of those exceptions. The few pinned files that
are not among the copies (4 MB and more, or repositories with no copy) are listed in :data:`NOT_IN_REFDATA`, each
with why, checked against the README and documented in ``docs/upstream.md``; a listed file that appears among
the copies fails the test until it is verified here instead. Skips without ``../shared``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from stereoprobe import upstream
from tests.refdata_layout import RefdataReadme, read_readme

pytestmark = pytest.mark.refdata

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Absent:
    why: str
    readme: str | None = None  # the words of the README's "Not here" paragraph that name the file
    same_bytes_as: str | None = None  # a copy of the same bytes elsewhere among the copies (content verified)


#: pinned files with no copy among the upstream copies: (source key, path) -> why. Their pins cannot be checked
#: here; the git blob ids were read from the pinned commit's tree when they were pinned.
NOT_IN_REFDATA: dict[tuple[str, str], Absent] = {
    ("Hidden-Bias-Benchmark", "data/Bias-Dataset.csv"): Absent(
        "4 MB or more (names=published)", readme="`data/Bias-Dataset.csv`"),
    ("Hidden-Bias-Benchmark", "Questions/20241207-0945_all_data_more_contexts_questions.csv"): Absent(
        "4 MB or more (DBB-SG's ten variations)", readme="the 10-variation file for DBB-SG"),
    ("Hidden-Bias-Benchmark", "GPT-4o-results.zip"): Absent(
        "the paper's GPT-4o outputs as a zip; read by no code (docs/dbb.md); not named by the README"),
    **{("BBQ", f"data/{name}.jsonl"): Absent("no copy of nyu-mll/BBQ (DBB baselines, dbb_build bbq)") for name in (
        "Age", "Disability_status", "Gender_identity", "Nationality", "Physical_appearance", "Race_ethnicity",
        "Race_x_SES", "Race_x_gender", "Religion", "SES", "Sexual_orientation")},
    ("BBQ", "analysis_scripts/additional_metadata.csv"): Absent("no copy of nyu-mll/BBQ (DBB baselines)"),
    ("CrowS-Pairs", "data/crows_pairs_anonymized.csv"): Absent(
        "no copy of nyu-mll/crows-pairs (DBB baselines); the DBB repository's copy has the same bytes",
        same_bytes_as="Hidden-Bias-Benchmark/data/crows_pairs_anonymized.csv"),
    ("StereoSet", "data/dev.json"): Absent("no copy of moinnadeem/StereoSet (DBB baselines, dbb_build stereoset)"),
}


@pytest.fixture(scope="module")
def readme(refdata: Path) -> RefdataReadme:
    if not (refdata / "README.md").is_file():
        pytest.skip("the upstream copies have no README.md")
    return read_readme(refdata)


def _pins() -> list[tuple[str, str, str]]:
    return [(key, rel, sha) for key, src in upstream.sources().items() for rel, sha in src.files.items()]


def test_every_source_with_copies_is_pinned_to_the_readmes_repository_and_commit(readme: RefdataReadme) -> None:
    for key, src in upstream.sources().items():
        if key in readme.folders:
            repository, commit = readme.folders[key]
            assert f"github.com/{src.repository}" in repository.split(" ")[0], (key, repository)
            assert src.commit in commit, f"{key}: pinned at {src.commit}, the copies at {commit}"


def test_no_pin_is_a_file_that_is_not_upstreams(readme: RefdataReadme) -> None:
    """A rendering or flattened copy listed by the README can never be downloaded from the pinned commit."""
    invented = [f"{key}/{rel}" for key, rel, _ in _pins() if readme.is_exception(f"{key}/{rel}")]
    assert not invented, f"pinned files that are not upstream files (refdata README, 'Paths'): {invented}"


def test_every_pin_is_at_its_upstream_path_with_its_checksum(refdata: Path, readme: RefdataReadme) -> None:
    problems, checked = [], 0
    for key, rel, sha in _pins():
        copy = refdata / key / rel
        if (key, rel) in NOT_IN_REFDATA:
            continue
        if not copy.is_file():
            problems.append(f"{key}/{rel}: no copy at this path among the upstream copies (an invented path? "
                            "else list it in NOT_IN_REFDATA and docs/upstream.md with why)")
        elif (got := upstream.file_checksum(copy, sha)) != sha:
            problems.append(f"{key}/{rel}: pinned {sha}, the copy has {got}")
        else:
            checked += 1
    assert not problems, "\n".join(problems)
    assert checked >= 60  # 60 of the pins had copies when this test was written


def test_pins_without_copies_are_listed_absent_and_named_by_the_readme(refdata: Path, readme: RefdataReadme) -> None:
    pinned = {(key, rel): sha for key, rel, sha in _pins()}
    assert set(NOT_IN_REFDATA) <= set(pinned), f"listed but not pinned: {sorted(set(NOT_IN_REFDATA) - set(pinned))}"
    for (key, rel), absent in NOT_IN_REFDATA.items():
        assert not (refdata / key / rel).is_file(), f"{key}/{rel} is among the copies now: verify it, unlist it"
        if key in readme.folders:  # a repository with copies: the README says which of its files are missing
            assert absent.readme is None or absent.readme in readme.absent_text, (key, rel, absent.readme)
        else:  # a repository with no copy at all
            assert not (refdata / key).exists(), f"{key}/ exists among the copies now: check its pins there"
        if absent.same_bytes_as is not None:
            assert upstream.file_checksum(refdata / absent.same_bytes_as, pinned[key, rel]) == pinned[key, rel]


def test_pins_without_copies_are_documented() -> None:
    page = (ROOT / "docs" / "upstream.md").read_text(encoding="utf-8")
    missing = [f"{key}/{rel}" for key, rel in NOT_IN_REFDATA if f"`{rel}`" not in page]
    assert not missing, f"docs/upstream.md does not list these pins without copies: {missing}"
