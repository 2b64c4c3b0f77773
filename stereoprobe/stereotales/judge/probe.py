"""The StereoTales harm judge descriptor (:mod:`stereoprobe.probes`): its ``harm_labels`` feed StereoTales'
``harmful`` figures; it has no leaderboard board of its own."""

from __future__ import annotations

from stereoprobe.probes import PlanTask, ProbeDescriptor, columns, register
from stereoprobe.stereotales.judge import contract as C

DESCRIPTOR = register(ProbeDescriptor(
    name="judge",
    title="StereoTales harm judge and human alignment",
    tables={"harm_labels": columns(C.HARM_LABEL_COLUMNS, "association_id", "harmful")},
    # plan: the ratings JSON with a short justification, 300 tokens; the judge prompt around the association
    # (the sample input), 400 tokens
    tasks={C.TASK_JUDGE: PlanTask("associations", main_role="judge", output_tokens={"judge": 300},
                                  role_prompt_tokens={"judge": 400},
                                  # the per-model settings change no count: no need for the run configuration
                                  plan_args={"run_settings": "none"})},
    commands=("stereoprobe.cli.judge_report", "stereoprobe.cli.rater_sheet"),
    listing="stereotales",
    run_info_name=C.TASK_JUDGE,
    order=20,
))
