"""GlobalBias likelihood task: one sample per (name, descriptor, template) sentence, scored by its
prompt log-probability (Siddique et al., EMNLP 2024, arXiv 2407.06917).

    inspect eval stereoprobe/globalbias --model transformers/default -T groups=[CHINESE,ARAB] --limit 200
    inspect eval stereoprobe/globalbias --model vllm-completions/meta-llama/Meta-Llama-3-8B \
        -T source=upstream                             # the paper's 876,000 sentences (faithful default)

Then ``stereoprobe globalbias LOGS --out DIR`` computes APX, bias scores, flags and the validation.
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, GenerateConfig
from inspect_ai.solver import generate

from stereoprobe.globalbias.data import build_sentences
from stereoprobe.globalbias.scoring import sentence_logprob

TASK_VERSION = "1.0.0"


def _input(s, encoder_decoder: bool) -> str | list[ChatMessageUser]:
    if not encoder_decoder:
        return s.text
    if not s.text.startswith(s.encoder_input):
        raise ValueError(f"sentence {s.id}: {s.text!r} does not start with its encoder input {s.encoder_input!r}")
    return [ChatMessageUser(content=s.text[len(s.encoder_input):], metadata={"encoder_text": s.encoder_input})]


@task
def globalbias(
    source: str = "bundled",
    faithful: bool = True,
    groups: list[str] | str | None = None,
    descriptors: list[str | int] | str | None = None,
    templates: list[int] | int | None = None,
    subset: str | None = None,
    encoder_decoder: bool = False,
) -> Task:
    """GlobalBias sentence likelihoods.

    Args:
        source: "bundled" (stereoprobe's small demo set), "upstream" (pinned reference files, downloaded and
            verified) or the path of a local copy of the GlobalBias repository.
        faithful: keep upstream quirks (default, spec G1/G13: duplicate name "Wafa", nonce descriptors without
            article); ``false`` drops the repeated name and adds the article (873,810 sentences).
        groups: restrict to groups ("ARAB_F") or ethnicities ("ARAB").
        descriptors: restrict to descriptors (text or row index).
        templates: template numbers among 1, 2, 3 (default all three).
        subset: "gp" for the Ghavami & Peplau validation descriptors.
        encoder_decoder: the reference's encoder-decoder split (lmppl ``EncoderDecoderLM``): the encoder gets
            "My name is {name}, I " (template 1) or "{name} " (templates 2, 3), the decoder text, which alone is
            scored, is the rest of the sentence (user-message ``metadata["encoder_text"]``, read by the
            stereoprobe transformers provider for seq2seq models). A perplexity conditional on the name: not
            comparable with the causal, whole-sentence perplexity (spec G5).
    """
    if isinstance(templates, int):
        templates = [templates]
    samples = [
        Sample(input=_input(s, encoder_decoder), id=s.id, metadata=s.metadata())
        for s in build_sentences(source, faithful, groups, descriptors, templates, subset)
    ]
    if not samples:
        raise ValueError("the selection (groups/descriptors/templates/subset) is empty")
    return Task(
        dataset=MemoryDataset(samples, name=f"globalbias-{source if source in ('bundled', 'upstream') else 'local'}"),
        solver=generate(),
        scorer=sentence_logprob(),
        config=GenerateConfig(max_tokens=1, prompt_logprobs=1, temperature=0.0),
        version=TASK_VERSION,
        metadata={"probe": "globalbias", "source": str(source), "faithful": faithful,
                  "encoder_decoder": encoder_decoder},
    )
