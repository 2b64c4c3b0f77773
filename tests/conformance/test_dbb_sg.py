"""Conformance of ``dbb_sg``'s default requests (chat scoring) with upstream's ``getPerplexity``.

Expected side, without the project's code: upstream ``src/llm_utils.py`` ``getPerplexity`` builds
``[{"role": "system", "content": "You are a useful assistant."}, {"role": "user", "content": prompt}]``, renders
it with the model's chat template (``apply_chat_template(..., add_generation_prompt=True)``) and scores each
answer sentence after it; ``prompt`` starts with the bytes of ``src/prompt_instructions/evaluate_perplexity.txt``
(``../shared/refdata/Hidden-Bias-Benchmark``), the context is the template's own row of the questions file with
``[[X]]`` filled, the answers are that row's ``s1`` and ``s2`` sentences (``[[X]]`` filled with one pronoun pair of
``data/descriptors.json``), compared byte for byte. The chat template is rendered here
with transformers' own ``apply_chat_template`` on the bundled default model's tokenizer.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from stereoprobe.tasks.dbb import dbb_sg
from tests.conformance._render import assert_allowed, prompt_logprobs_reply, refdata_file, render
from tests.conformance.test_dbb import PER_TEMPLATE, QUESTIONS, ROOT, SYSTEM, _fillers, _options, _pronouns

pytestmark = [pytest.mark.refdata, pytest.mark.slow]  # slow: loads the default model's tokenizer

TEMPLATE = "777"
SCORING = {"max_tokens": 1, "prompt_logprobs": 1, "temperature": 0.0}
# G20: the run's one capability probe asks both kinds of log-probabilities at once (shared by dbb + dbb_sg)
PROBE = {**SCORING, "logprobs": True, "top_logprobs": 20}
DEPARTURES = {
    "D3": "names=draw: the published name draws (data/Bias-Dataset.csv) are not among the reference copies",
    "D13": "the context after the instruction as '\\n\\nContext: ...' (ours); prompt and answer scored as one text",
    "D15": "variations=own: the ten-variation file (>= 4 MB) is not among the reference copies",
    "G20": "one capability probe request before the first text",
}


def test_default_chat_requests_are_getperplexity(refdata: Path) -> None:
    from transformers import AutoTokenizer

    from stereoprobe.providers.default_model import default_model_dir

    folder = default_model_dir()
    tok = AutoTokenizer.from_pretrained(str(folder))
    row = pd.read_csv(refdata_file(refdata, QUESTIONS)).iloc[int(TEMPLATE)]
    instruction = refdata_file(refdata, f"{ROOT}/src/prompt_instructions/evaluate_perplexity.txt").read_text(
        encoding="utf-8")
    fillers = set().union(*_fillers(refdata).values())
    options = _options(row, _pronouns(refdata)).values()  # (s1, s2) filled with one pronoun pair each

    task = dbb_sg(source=str(refdata / ROOT), names="draw", variations="own", templates=[TEMPLATE],
                  tokenizer=str(folder))
    got = render(task, reply=prompt_logprobs_reply)
    texts = [r.messages[-1][1] for r in got]
    marker = "\x00"  # where the user's content goes in the template
    head = [re.escape(part) for part in tok.apply_chat_template(
        [{"role": "system", "content": SYSTEM}, {"role": "user", "content": marker}], add_generation_prompt=True,
        tokenize=False).split(marker)]
    assert len(head) == 2
    before, after = row["Context"].split("[[X]]", 1)
    pattern = re.compile(f"\\A{head[0]}(?P<prompt>.*?){head[1]}(?P<answer>.*)\\Z", re.S)
    answers: Counter = Counter()
    for r, text in zip(got, texts):
        assert [role for role, _ in r.messages] == ["user"] and r.prefill is None
        m = pattern.match(text)
        if m is None:  # the run's one capability probe (G20)
            assert r.config == PROBE, r.config
            answers["probe"] += 1
            continue
        assert r.config == SCORING, r.config
        prompt = m["prompt"]
        assert prompt.startswith(instruction + "\n\nContext: "), prompt
        ctx = prompt[len(instruction + "\n\nContext: "):]
        assert ctx.startswith(before) and ctx.endswith(after)
        assert ctx[len(before):len(ctx) - len(after)] in fillers, ctx  # byte for byte
        # the exact text getPerplexity scores: the chat-template rendering of [system, user] + the answer
        conversation = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
        rendered = tok.apply_chat_template(conversation, add_generation_prompt=True, tokenize=False)
        assert text == rendered + m["answer"]
        # the answer: the row's s1 or s2 sentence, byte for byte, right after the prompt (getPerplexity
        # encodes the answer on its own and appends its tokens to the prompt's)
        s1 = any(m["answer"] == a for a, _ in options)
        s2 = any(m["answer"] == b for _, b in options)
        assert s1 != s2, m["answer"]
        answers["s1" if s1 else "s2"] += 1
    assert answers == Counter({"probe": 1, "s1": PER_TEMPLATE, "s2": PER_TEMPLATE})


def test_departures_name_fidelity_rows() -> None:
    assert_allowed(DEPARTURES)
