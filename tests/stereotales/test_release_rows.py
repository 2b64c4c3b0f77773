"""The StereoTales release reader never counts a story twice nor drops one without a word (issue 34.6):
exact repeats of a row are used once and counted (``duplicate``), also in a table without ``sample_id`` (its
rows are named by their content); rows with an empty language are counted (``no_language``); both are listed
in ``input_issues`` and said on the console. Rows of a table without ``sample_id`` read in several chunks
keep distinct ids."""

from __future__ import annotations

import pandas as pd
import pytest
from _stories_fixtures import ATTRS, planted_stories, release_rows

from stereoprobe.cli import main
from stereoprobe.stereotales.mining import stories_release
from stereoprobe.stereotales.mining.stories_release import read_stories_from_release


@pytest.fixture(scope="module")
def rows() -> pd.DataFrame:
    return release_rows(planted_stories(languages=("en",), per_cell=2), ATTRS)  # 36 stories


@pytest.mark.parametrize("drop", [[], ["output_id"], ["sample_id", "output_id"]], ids=["ids", "no-output-id", "no-ids"])
def test_exact_repeats_are_used_once_and_counted(tmp_path, rows, drop) -> None:
    path = tmp_path / "stories.csv"
    pd.concat([rows, rows.iloc[:3]]).drop(columns=drop).to_csv(path, index=False)
    st = read_stories_from_release([path])
    assert len(st.frame) == len(rows) == 36
    assert st.issues["kind"].tolist() == ["duplicate"] * 3


def test_a_repeated_story_id_with_another_text_is_two_stories(tmp_path, rows) -> None:
    """Without sample ids, two rows alike but for their story text are two stories."""
    other = rows.iloc[:1].assign(story="A different story.")
    path = tmp_path / "stories.csv"
    pd.concat([rows, other]).drop(columns=["sample_id", "output_id"]).to_csv(path, index=False)
    assert len(read_stories_from_release([path]).frame) == 37


def test_rows_without_a_language_are_counted(tmp_path, rows) -> None:
    path = tmp_path / "stories.csv"
    rows.assign(language=["", " "] + list(rows["language"][2:])).to_csv(path, index=False)
    st = read_stories_from_release([path])
    assert len(st.frame) == 34 and set(st.frame["language"].astype(str)) == {"en"}
    assert st.issues["kind"].tolist() == ["no_language"] * 2


def test_ids_stay_distinct_across_chunks(tmp_path, rows, monkeypatch) -> None:
    monkeypatch.setattr(stories_release, "RELEASE_CHUNK_ROWS", 10)
    path = tmp_path / "stories.csv"
    rows.drop(columns=["sample_id", "output_id"]).to_csv(path, index=False)
    st = read_stories_from_release([path])
    assert len(st.frame) == 36 and st.issues.empty


def test_the_console_line_counts_what_was_not_analysed(tmp_path, rows, capsys) -> None:
    path = tmp_path / "stories.csv"
    bad = pd.concat([rows, rows.iloc[:2]]).reset_index(drop=True)
    bad.loc[5, "language"] = ""
    bad.to_csv(path, index=False)
    assert main(["associations", str(path), "--out", str(tmp_path / "out"), "--resamples", "200",
                 "--no-report"]) == 0
    out = capsys.readouterr().out
    assert "3 sample(s) not analysed (duplicate: 2, no_language: 1; input_issues.csv lists them)" in out
    issues = pd.read_csv(tmp_path / "out" / "input_issues.csv")
    assert sorted(issues["kind"]) == ["duplicate", "duplicate", "no_language"]
