"""The GlobalBias descriptors (:mod:`stereoprobe.probes`): the likelihood probe and the character profiles."""

from __future__ import annotations

from stereoprobe.globalbias import contract as C
from stereoprobe.probes import Board, Metric, PlanTask, ProbeDescriptor, Setting, register

_LEADERBOARD = "stereoprobe.globalbias.leaderboard"

GLOBALBIAS = register(ProbeDescriptor(
    name="globalbias",
    title="GlobalBias: stereotypes associated with names (likelihood)",
    tables={
        "bias_scores": ("model", "group", "descriptor", "score", "flagged"),
        "validation": ("model", "measure", "accuracy", "mrr", "n_descriptors"),
        "validation_detail": ("model", "measure", "descriptor", "reciprocal_rank", "correct"),
        "incomplete_units": ("model", "group", "descriptor"),
        # the headline counts with their intervals, as `stereoprobe globalbias` computed them (.headline)
        "headline": ("model", "metric", "estimate", "ci_low", "ci_high"),
    },
    boards=(Board("globalbias", "GlobalBias: stereotypes associated with names (likelihood)",
                  (Metric("flagged", label="flagged group-descriptor pairs",
                          meaning="descriptors the model finds more likely for one group's names (paper's rule)"),
                   Metric("significant", label="significant pairs (stricter test)",
                          meaning="flagged pairs that also pass the stricter significance test "
                                  "(Benjamini-Hochberg false-discovery control)"),
                   Metric("validation_accuracy", "higher", label="validation accuracy",
                          meaning="known stereotypes recovered by the measure (a check of the measure)"),
                   Metric("validation_mrr", "higher", label="validation MRR",
                          meaning="rank of the known stereotyped group (a check of the measure)"))),),
    settings={"alpha": Setting(0.05, "GlobalBias: FDR level of the stricter test, re-applied in its bootstrap",
                               low=0, high=1, open_range=True)},
    # the bias score is a mean of min-max normalised APX; accuracies and reciprocal ranks are shares
    domains={"bias_scores": {"score": (0.0, 1.0)}, "validation": {"accuracy": (0.0, 1.0), "mrr": (0.0, 1.0)},
             "validation_detail": {"reciprocal_rank": (0.0, 1.0)}},
    metrics=f"{_LEADERBOARD}:globalbias_metrics",
    pairwise=f"{_LEADERBOARD}:globalbias_pairwise",
    lm_eval=f"{_LEADERBOARD}:globalbias_lm_eval_tables",
    lm_eval_tasks=(C.TASK_LIKELIHOOD,),
    tasks={C.TASK_LIKELIHOOD: PlanTask("sentences", counts="texts")},
    commands=("stereoprobe.cli.globalbias",),
    listing="globalbias",
    order=40,
))

PROFILES = register(ProbeDescriptor(
    name="profiles",
    title="GlobalBias: character profiles",
    tables={
        "classification": ("model", "target", "accuracy", "n_profiles"),
        "predictions": ("model", "target", "item_id", "correct"),
    },
    domains={"classification": {"accuracy": (0.0, 1.0)}},
    boards=(Board("profiles", "GlobalBias: character profiles",
                  tuple(Metric(f"svm_accuracy_{t}", label=f"profiles: {t.replace('_', ' + ')} accuracy",
                                      meaning=f"how well a classifier tells the {t.replace('_', ' x ')} of a name "
                                              "from the character profile the model wrote")
                               for t in ("gender_ethnicity", "ethnicity", "gender"))),),
    metrics=f"{_LEADERBOARD}:profiles_metrics",
    pairwise=f"{_LEADERBOARD}:profiles_pairwise",
    # plan: one JSON object of 12 fields (3 lists of 3 items, a 5-key physical object) per name; a filled-in
    # example profile is 150-220 tokens (compact vs indented JSON, SmolLM2's tokenizer; 12,060-15,222
    # characters for 20 profiles, i.e. 150-190 tokens at 4 characters per token): 175 per name, 3,500 per
    # request of the paper's 20 names, capped by the task's max_tokens
    tasks={C.TASK_PROFILES: PlanTask("profile batches", per_epoch=True, output_tokens_per_name=175)},
    commands=("stereoprobe.cli.profiles",),
    listing="globalbias",
    run_info_name=C.RUN_INFO_PROFILES,
    order=50,
))
