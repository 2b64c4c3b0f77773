"""GlobalBias likelihood task: every (name, descriptor, template) sentence scored by its prompt log-probability
(Siddique et al., EMNLP 2024, arXiv 2407.06917).

    inspect eval stereoprobe/globalbias --model vllm-completions/meta-llama/Meta-Llama-3-8B
                                  # the paper's benchmark: 876,000 sentences of the upstream data (default)
    inspect eval stereoprobe/globalbias --model transformers/default -T source=bundled   # small demo set

One sample per name group x template holds the sentences of the group's names with every selected descriptor
(ids ``{GROUP}:t{template}``), scored in one request by providers that batch texts (``transformers/...``,
which then shares each name's sentence prefix across descriptors) and stored compactly by the
``text_logprobs`` scorer; ``-T unit=sentence`` keeps one sample per sentence (ids
``{GROUP}:{name index}:{descriptor index}:t{template}``, scorer ``sentence_logprob``). Then
``stereoprobe globalbias LOGS --out DIR`` computes APX, bias scores, flags and the validation.
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import generate

from stereoprobe import params as P
from stereoprobe.globalbias.contract import check_task_args
from stereoprobe.globalbias.data import build_sentences, check_descriptors
from stereoprobe.globalbias.samples import group_samples, sentence_samples
from stereoprobe.globalbias.templates import WORDINGS, resolve_wording
from stereoprobe.listings import task_version
from stereoprobe.params import one_line_errors
from stereoprobe.scorers.globalbias import globalbias_metrics, sentence_logprob, text_logprobs
from stereoprobe.solvers.capability import check_before_run
from stereoprobe.solvers.likelihood import require_prompt_logprobs, score_texts
from stereoprobe.strict_params import refuse_unknown

TASK_VERSION = task_version("globalbias")  # tasks/<probe>.eval.yaml


@task(
    description='GlobalBias: sentence likelihoods of names x descriptors (40 gender x ethnicity groups); APX bias scores by `stereoprobe globalbias`',
    tags=['social_bias', 'likelihood', 'names', 'globalbias'],
    paper='Siddique et al., Who is better at math, Jenny or Jingzhen?, EMNLP 2024, arXiv:2407.06917',
)
@refuse_unknown
@one_line_errors
def globalbias(
    source: str = "upstream",
    faithful: bool = True,
    groups: list[str] | str | None = None,
    descriptors: list[str | int] | str | None = None,
    templates: list[int] | int | None = None,
    subset: str | None = None,
    encoder_decoder: bool = False,
    unit: str = "group",
    mlm_max_length: int | None = 22,
    template_wording: str | None = None,
) -> Task:
    """GlobalBias sentence likelihoods.

    Args:
        source: "upstream" (default: the paper's data, the pinned reference files, downloaded once and
            verified; offline, point ``STEREOPROBE_UPSTREAM_DIR`` or ``source=`` at a local copy), "bundled"
            (stereoprobe's small demo set: 24 names, 16 descriptors) or the path of a local copy of the
            GlobalBias repository.
        faithful: keep upstream quirks (default: duplicate name "Wafa", nonce descriptors without article);
            ``false`` drops the repeated name and adds the article (873,810 sentences).
        groups: restrict to groups ("ARAB_F") or ethnicities ("ARAB").
        descriptors: restrict to descriptors: a descriptor's text or its row index in the descriptor file (an
            integer from 0), or a list of them (``-T descriptors=0``, ``-T "descriptors=[0, 5]"``,
            ``-T "descriptors=have an accent"``).
        templates: template numbers among 1, 2, 3 (default all three).
        subset: "gp" for the Ghavami & Peplau validation descriptors.
        encoder_decoder: the reference's encoder-decoder split (lmppl ``EncoderDecoderLM``): the encoder gets
            "My name is {name}, I " (template 1) or "{name} " (templates 2, 3), the decoder text, which alone is
            scored, is the rest of the sentence. A perplexity conditional on the name: not comparable with the
            causal, whole-sentence perplexity.
        unit: "group" (default: one sample per name group x template, its sentences scored in one request) or
            "sentence" (one sample per sentence; slower, larger logs, same numbers).
        mlm_max_length: masked LMs (BERT, RoBERTa) score at most this many input tokens, special tokens
            included (default 22, as lmppl's ``MaskedLM(max_length=22)`` that the paper used); none = the whole
            sentence. Causal and encoder-decoder models ignore it; ``-M mlm_max_length`` overrides it (and is
            the only way with ``unit=sentence``, whose samples are plain text).
        template_wording: "upstream" (default, except with ``source=bundled``): the sentence templates of
            upstream's ``create_template`` read at run time from the pinned ``code/0_build_globalbias.py``
            (downloaded once and checksummed, or read from ``source``'s local copy or
            ``$STEREOPROBE_UPSTREAM_DIR``); "stereoprobe" (the default with ``source=bundled``): the project's
            own wording (no download).
    """
    args = check_task_args(source=source, faithful=faithful, encoder_decoder=encoder_decoder, unit=unit,
                           templates=templates, mlm_max_length=mlm_max_length)
    templates, mlm_max_length = args["templates"], args["mlm_max_length"]
    P.names(groups, "groups", sep=None)  # a list without repeats (a repeated entry is a typo; refused up front)
    descriptors = check_descriptors(descriptors)
    wording = resolve_wording(P.choice(template_wording, "template_wording", WORDINGS, optional=True), source)
    check_before_run("prompt", "task globalbias")  # a chat API refused, a server probed: before any download
    sentences = build_sentences(source, faithful, groups, descriptors, templates, subset,
                                template_wording=wording)
    if unit == "sentence":
        samples = sentence_samples(sentences, encoder_decoder)
        solver, scorer = generate(), sentence_logprob()
    else:
        samples = group_samples(sentences, encoder_decoder, mlm_max_length)
        solver, scorer = score_texts(), text_logprobs()
    if not samples:
        raise ValueError("the selection (groups/descriptors/templates/subset) is empty")
    return Task(
        dataset=MemoryDataset(samples, name=f"globalbias-{source if source in ('bundled', 'upstream') else 'local'}"),
        solver=solver,
        scorer=scorer,
        metrics=globalbias_metrics(unit),  # the headline (flagged pairs) in the log, as post-processing counts it
        setup=require_prompt_logprobs(),  # the probe, where the task's build did not send it
        config=GenerateConfig(max_tokens=1, prompt_logprobs=1, temperature=0.0),
        version=TASK_VERSION,
        metadata={"probe": "globalbias", "source": str(source), "faithful": faithful,
                  "encoder_decoder": encoder_decoder, "unit": unit, "mlm_max_length": mlm_max_length,
                  "template_wording": wording},
    )
