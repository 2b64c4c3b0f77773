"""Names shared by the DBB stages: the inspect tasks and scorers that write eval logs, and the readers and
tables that turn those logs into bias scores (``stereoprobe dbb``, the lm-eval aggregation, the leaderboard).

Import these names on both sides; never write the strings twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inspect_ai.model import GenerateConfig

# ---- tasks and scorers (the eval log side)
TASK_MCQ = "dbb"
TASK_SG = "dbb_sg"
SCORER_MCQ = "dbb_mcq_scorer"
SCORER_SG = "dbb_sg_scorer"
#: task name -> the scorer whose values the post-processing reads
TASKS: dict[str, str] = {TASK_MCQ: SCORER_MCQ, TASK_SG: SCORER_SG}
BUILD_TASKS = ("dbb_build_concepts", "dbb_build_questions", "dbb_build_variations")
REDUCER = "dbb_epochs"  # the epoch reducer of both tasks (mean of a and valid, count of epochs)

DEFAULT_SOURCE = "upstream"  # the paper's benchmark (1,547 templates, 77,350 questions)
DEFAULT_FAITHFUL = True  # the upstream expansion, quirks included (see docs/fidelity.md)

OPTION_ORDERS = ("random", "balanced", "fixed")
SG_NORMALISATIONS = ("per_variation", "after_mean")
SG_SCORING = ("chat", "raw")  # DBB-SG: option as the assistant reply under the chat template, or raw text

# ---- the multiple choice's modes: one record each (read by the task, solvers, scorer and post-processing)
UNITS = ("template", "question")


@dataclass(frozen=True)
class Mode:
    """One mode of the multiple choice: its request, default unit, option orders and epochs.

    ``top_logprobs``: the logprob request, one greedy token with its ``top_logprobs`` most likely tokens
    (:meth:`request`); ``None``: sampled answers under the task's generation settings. ``units``: the units it
    allows (the first is its default); ``option_order``: its default order; ``epochs``: its default answers
    per question; ``min_epochs``: fewer is refused."""

    name: str
    units: tuple[str, ...]
    option_order: str
    epochs: int
    min_epochs: int
    top_logprobs: int | None = None

    @property
    def logprob(self) -> bool:
        """Whether the answer is read from the answer token's top log-probabilities."""
        return self.top_logprobs is not None

    @property
    def unit(self) -> str:
        """The default unit (``template``: one sample per template; ``question``: one per question)."""
        return self.units[0]

    def request(self) -> GenerateConfig:
        """The mode's one request (logprob mode): a fresh ``GenerateConfig`` each call."""
        from stereoprobe.likelihood import one_token_request

        if self.top_logprobs is None:
            raise ValueError(f"DBB mode {self.name!r} samples under the task's settings; it has no fixed request")
        return one_token_request(self.top_logprobs)


#: the paper's protocol (§5, Appendix A): sampled answers, option A always shown first (§3.3), >= 10 epochs.
#: A literal name: inspect's task listing reads a parameter's default from the source
DEFAULT_MODE = "sampled"
SAMPLED = Mode(DEFAULT_MODE, units=("question",), option_order="fixed", epochs=10, min_epochs=10)
#: the extension: exact P(A) from the answer letter's top-20 log-probabilities, both option orders (the letter
#: preference cancels), one sample per template by default
LOGPROB = Mode("logprob", units=UNITS, option_order="balanced", epochs=2, min_epochs=1, top_logprobs=20)
MODE_RECORDS: dict[str, Mode] = {m.name: m for m in (SAMPLED, LOGPROB)}
MODES = tuple(MODE_RECORDS)


def mode(name: str | None) -> Mode:
    """The record of mode ``name`` (``None``: the default mode); an unknown name raises ``KeyError``."""
    return MODE_RECORDS[name or DEFAULT_MODE]


# ---- score value keys (per response): a = probability of option A, valid in {0, 1}; the epoch reducer adds
# ``epochs`` = number of responses reduced into the value
KEY_A = "a"
KEY_VALID = "valid"
KEY_EPOCHS = "epochs"
# a grouped sample (unit=template: DBB-SG, MCQ logprob mode): per-question results in the score metadata,
# aligned lists
GROUP_IDS = "question_ids"
GROUP_A = "a"  # DBB-SG: the Eq. 2 share per question; MCQ logprob: the list of a per option order
GROUP_VALID = "valid"  # MCQ logprob: the list of valid per option order (absent for DBB-SG: all valid)
GROUP_ERRORS = "errors"

# ---- sample metadata keys written by the task, read back by the post-processing
META_KEYS = ("template_id", "category", "descriptor_type", "group", "concept_a", "concept_b")

# ---- sample metadata keys written by the tasks and read by the solvers, scorers and the run planner
META_SG_PROMPT = "sg_prompt"  # DBB-SG, one question per sample: the prompt the option sentences continue
META_SG_OPTIONS = "sg_options"  # DBB-SG, one question per sample: [[option A, option B], ...] per variation
META_SG_QUESTIONS = "sg_questions"  # DBB-SG grouped (unit=template): [{"id", "prompt", "options"}, ...]
META_MCQ_QUESTIONS = "mcq_questions"  # MCQ logprob grouped: [{"id", "context", "option_a", "option_b"}, ...]
META_MCQ_TEMPLATE = "mcq_template"  # MCQ logprob grouped: the question template the solver fills (system, instruction, template)
# ---- solver results in the sample metadata, read by the scorers
META_SG_NLL = "sg_nll"  # DBB-SG one question: [[nll A, nll B], ...]
META_SG_TOKENS = "sg_tokens"  # DBB-SG one question: [[tokens A, tokens B], ...]
META_SG_RESULTS = "sg_results"  # DBB-SG grouped: question id -> {"nll", "tokens", "error"}
META_MCQ_RESULTS = "mcq_results"  # MCQ logprob grouped: question id -> {"a", "valid", "a_first", "error"}


def variant_name(task: str, mode: str | None) -> str:
    """The ``variant`` column of every table: ``sg`` for DBB-SG, ``mcq-<mode>`` for the multiple choice."""
    return "sg" if task == TASK_SG else f"mcq-{mode or DEFAULT_MODE}"


# ---- lm-eval tasks of the probe (lm_eval_tasks/dbb) -> the ``variant`` their responses get
LM_EVAL_TASKS: dict[str, str] = {"dbb_mc": "mcq-logprob", "dbb_sg": "sg"}

# ---- table columns
RESPONSE_COLUMNS = ["model", "variant", "question_id", "epoch", "template_id", "category", "descriptor_type",
                    "group", "concept_a", "concept_b", "a", "valid", "refusal"]
QUESTION_COLUMNS = ["model", "question_id", "template_id", "category", "descriptor_type", "group",
                    "concept_a", "concept_b", "n_responses", "n_valid", "p_a"]
INSTANCE_COLUMNS = ["model", "instance_id", "template_id", "category", "descriptor_type", "group_1", "group_2",
                    "p_a_1", "p_a_2", "s"]
SUMMARY_COLUMNS = ["model", "variant", "category", "descriptor_type", "n", "n_undefined", "n_incomplete",
                   "count_s_ge_20", "count_ci_low", "count_ci_high", "share_s_ge_20", "mean_s_biased",
                   "mean_s_ci_low", "mean_s_ci_high", "mean_s_all", "refusal_rate", "refusal_ci_low",
                   "refusal_ci_high", "n_responses", "question_refusal_rate", "question_refusal_ci_low",
                   "question_refusal_ci_high", "n_questions"]
RUN_COLUMNS = ["model", "variant", "task", "logs", "responses", "errors", "questions_complete",
               "questions_incomplete", "instances_incomplete"]
TABLES = ("responses", "runs", "questions", "instances", "incomplete", "summary", "top_associations")
