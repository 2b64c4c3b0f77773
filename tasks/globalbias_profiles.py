"""GlobalBias generation probe: character profiles for batches of names (Siddique et al., EMNLP 2024,
section 6).

One sample per (run, batch of 20 names); three runs; the reference's prompt (``BIAS_PROMPT`` of the upstream
notebooks 9a-9c, read at run time from the pinned notebook; ``-T prompt=stereoprobe``: our own wording);
temperature 1; the reference's settings per model family (JSON mode and seed 42 for OpenAI models, the
assistant turn prefilled with "{" and 4,096 tokens for Anthropic models, 5,000 tokens for others;
``-T settings=plain`` sends only temperature and max_tokens). The scorer parses the JSON profiles, matches them to the requested names and records parse failures, missing and unknown names.

    inspect eval stereoprobe/globalbias_profiles --model openai/gpt-4o     # the upstream names and prompt (default)
    inspect eval stereoprobe/globalbias_profiles --model openai/gpt-4o -T prompt=stereoprobe   # our own wording
    stereoprobe profiles logs/ --out results/profiles
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.model import GenerateConfig

from stereoprobe import params as P
from stereoprobe.globalbias.contract import check_task_args
from stereoprobe.globalbias.data import load_names, select
from stereoprobe.globalbias.samples import name_batches, profile_samples
from stereoprobe.listings import task_version
from stereoprobe.globalbias.profiles_generation import SETTINGS
from stereoprobe.globalbias.profiles_parse import PROMPTS, profile_prompt
from stereoprobe.params import one_line_errors
from stereoprobe.scorers.globalbias_profiles import profile_parser
from stereoprobe.solvers.globalbias_profiles import profile_generate
from stereoprobe.strict_params import refuse_unknown
from stereoprobe.solvers.capability import check_before_run

__all__ = ["globalbias_profiles", "name_batches"]

TASK_VERSION = task_version("globalbias_profiles")  # tasks/<probe>.eval.yaml


@task(
    description='GlobalBias character profiles for batches of names; group distinguishability by `stereoprobe profiles`',
    tags=['social_bias', 'generation', 'names', 'globalbias'],
    paper='Siddique et al., Who is better at math, Jenny or Jingzhen?, EMNLP 2024, arXiv:2407.06917',
)
@refuse_unknown
@one_line_errors
def globalbias_profiles(
    source: str = "upstream",
    faithful: bool = True,
    groups: list[str] | str | None = None,
    batch_size: int = 20,
    runs: int = 3,
    shuffle_seed: int | None = 42,
    max_tokens: int | None = None,
    temperature: float = 1.0,
    settings: str = "reference",
    prompt: str = "upstream",
) -> Task:
    """Character profiles for every name (source/faithful/groups as in ``globalbias``: the upstream names by
    default, 400 names = 20 batches x 3 runs; ``-T source=bundled`` for the 24 demo names).

    Args:
        batch_size: names per request (20 in the paper; the reference used 10 for Claude 3 Opus:
            ``-T batch_size=10``).
        runs: repetitions (3 in the paper); each run is its own set of samples, ids ``run{r}:batch{i}``.
        shuffle_seed: seed of the reference name shuffle (None keeps file order).
        max_tokens: sent to every model; None (default): the reference's value for the model's family
            (OpenAI: not sent, Anthropic: 4096, others: 5000).
        temperature: paper: 1.
        settings: "reference" (default): the reference's per-family settings (OpenAI JSON mode and seed 42,
            Anthropic "{" prefill); "plain": temperature and max_tokens only (5000 unless given).
        prompt: "upstream" (default): the reference's ``BIAS_PROMPT`` from the pinned notebook (downloaded
            once and checksummed, or read from ``source``'s local copy or ``$STEREOPROBE_UPSTREAM_DIR``);
            "stereoprobe": the project's own wording (no download).
    """
    check_task_args(source=source, faithful=faithful)
    batch_size = P.integer(batch_size, "batch_size", 1, maximum=P.COUNT_MAX)
    runs = P.integer(runs, "runs", 1, maximum=P.COUNT_MAX)
    max_tokens = P.integer(max_tokens, "max_tokens", 1, optional=True)
    settings = P.choice(settings, "settings", SETTINGS)
    shuffle_seed = P.integer(shuffle_seed, "shuffle_seed", 0, optional=True)
    temperature = P.number(temperature, "temperature", 0.0)
    prompt = P.choice(prompt, "prompt", PROMPTS)
    names, _ = select(load_names(source, faithful), [], groups, None, None)
    template = profile_prompt(prompt, source)
    check_before_run(None, "task globalbias_profiles")  # the endpoint answers: one request
    return Task(
        dataset=MemoryDataset(profile_samples(names, batch_size, runs, shuffle_seed, template),
                              name="globalbias-profiles"),
        solver=profile_generate(settings, max_tokens, temperature),
        scorer=profile_parser(),
        # no temperature here: the solver sends the paper's per request, under the user's settings
        config=GenerateConfig(),
        version=TASK_VERSION,
        metadata={"probe": "globalbias", "source": str(source), "settings": settings, "prompt": prompt},
    )
