"""The StereoTales descriptor (stories and association mining; :mod:`stereoprobe.probes`)."""

from __future__ import annotations

from stereoprobe.probes import Board, Metric, PlanTask, ProbeDescriptor, columns, register
from stereoprobe.stereotales import contract as C

_ASSOCIATION = columns(C.VALUE_COLUMNS, "model", "slice", *C.KEY_COLUMNS)

DESCRIPTOR = register(ProbeDescriptor(
    name="stereotales",
    title="StereoTales: associations in generated stories",
    tables={
        "associations": _ASSOCIATION,
        "pair_tests": columns(C.PAIR_COLUMNS, "model", "slice", "base_attribute", "compared_attribute"),
        "refusal_rates": columns(C.REFUSAL_RATE_COLUMNS, "model", "language", "target_attribute", "stories",
                                 "refused"),
    },
    markers=("associations", "pair_tests"),
    boards=(Board("stereotales", "StereoTales: associations in generated stories",
                  (Metric("associations", label="associations",
                          meaning="demographic associations in its stories that pass the paper's filter"),
                   Metric("harmful", label="harmful associations", meaning="of these, those judged harmful"),
                   Metric("refusal_rate", label="story refusal rate", meaning="share of story prompts refused"),
                   Metric("language_reach", "", label="language reach",
                          meaning="languages in which an association passes, on average"))),),
    metrics="stereoprobe.stereotales.mining.leaderboard:stereotales_metrics",
    pairwise="stereoprobe.stereotales.mining.leaderboard:stereotales_pairwise",
    # plan: the paper's three extractors and one refusal detector when --model-role does not bind them;
    # output per call: a story 350 tokens (the prompt asks for "approximately 200 words", about 270 tokens in
    # English at ~1.33 tokens per word; Hindi, Arabic, Chinese and Ukrainian take more per word, so 350 over
    # the 10 languages), a refusal verdict 20 (a short JSON), an extraction 250 (the 19-attribute JSON
    # profile); role prompts around the story: refusal 300, extraction 900 tokens (instructions and schema)
    tasks={C.TASK_STORIES: PlanTask("stories", per_epoch=True, reader_roles=(C.REFUSAL_ROLE, C.EXTRACTOR_ROLE),
                                 default_roles={C.EXTRACTOR_ROLE: 3, C.REFUSAL_ROLE: 1},
                                 output_tokens={"generator": 350, C.REFUSAL_ROLE: 20, C.EXTRACTOR_ROLE: 250},
                                 role_prompt_tokens={C.REFUSAL_ROLE: 300, C.EXTRACTOR_ROLE: 900},
                                 # our wording and flare's base settings: the same counts without the upstream files
                                 plan_args={"seeds": "bundled", "role_prompts": "bundled", "run_settings": "none",
                                            "role_settings": "none"})},
    commands=("stereoprobe.cli.associations", "stereoprobe.cli.taxonomy"),
    listing="stereotales",
    order=10,
))
