"""The tables and columns the leaderboard reads are the ones the probes' contract modules name (the writers
import the same constants): a renamed table or column fails here rather than in a user's run."""

from __future__ import annotations

from stereoprobe.dbb import contract as DBB
from stereoprobe.globalbias import contract as GB
from stereoprobe.leaderboard.sources import REQUIRED, TABLES
from stereoprobe.stereotales import contract as ST
from stereoprobe.stereotales.judge import contract as JUDGE
from stereoprobe.stereotales.mining.associations import PAIR_COLUMNS, VALUE_COLUMNS


def test_table_names_are_the_writers():
    assert set(TABLES["dbb"]) <= set(DBB.TABLES)
    assert {"bias_scores", "validation", "validation_detail"} <= set(GB.TABLES)
    assert "classification" in GB.PROFILE_TABLES
    assert "harm_labels" in JUDGE.TABLES


def test_columns_are_the_writers():
    assert set(REQUIRED[("dbb", "summary")]) <= {"variant", *DBB.SUMMARY_COLUMNS}
    assert set(REQUIRED[("dbb", "instances")]) <= {"variant", *DBB.INSTANCE_COLUMNS}
    assert set(REQUIRED[("judge", "harm_labels")]) <= set(JUDGE.HARM_LABEL_COLUMNS)
    assert set(REQUIRED[("stereotales", "pair_tests")]) <= set(PAIR_COLUMNS)
    assert set(REQUIRED[("stereotales", "associations")]) <= set(VALUE_COLUMNS)
    assert list(ST.KEY_COLUMNS) == ["base_attribute", "base_value", "compared_attribute", "compared_value"]
