"""What ``stereoprobe plan`` prints reads right (issue 35.12): times in the unit a person reads them in, one
note for what several near-identical notes said (the roles assumed, the arguments the count assumed)."""

from __future__ import annotations

import pytest

from stereoprobe.cli import main
from stereoprobe.plan.core import duration


@pytest.mark.parametrize("seconds, shown", [(0.44, "0.4 s"), (21.0, "21 s"), (89, "89 s"), (270, "4.5 min"),
                                            (5399, "90.0 min"), (11_520, "3.2 h"), (47 * 3600, "47.0 h"),
                                            (181_440, "2.1 days"), (10**7, "115.7 days")])
def test_times_are_shown_in_human_units(seconds: float, shown: str) -> None:
    assert duration(seconds) == shown


def test_plan_stereotales_merges_its_notes(capsys) -> None:
    assert main(["plan", "stereotales", "-T", "seeds=bundled", "-T", "languages=en", "-T", "limit=4",
                 "--model", "openai/gpt-4o-mini"]) == 0
    notes = [x for x in capsys.readouterr().out.splitlines() if x.strip().startswith("note:")]
    roles = [n for n in notes if "not given" in n]
    counted = [n for n in notes if "counted with -T" in n]
    assert len(roles) == 1 and "'extractor' not given: assumed 3 models" in roles[0] and "'refusal'" in roles[0]
    assert len(counted) == 1 and counted[0].count("-T ") == 3  # role_prompts, run_settings, role_settings
