"""The table names of the GlobalBias contract are the tables the writers describe and write."""

from stereoprobe.globalbias import contract, profiles_report, report


def test_apx_tables_match_the_writer() -> None:
    assert set(report.FILE_DESCRIPTIONS) == set(contract.TABLES)


def test_profile_tables_match_the_writer() -> None:
    assert set(profiles_report.FILE_DESCRIPTIONS) == set(contract.PROFILE_TABLES)
