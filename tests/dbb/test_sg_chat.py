"""DBB-SG chat scoring (the default, as upstream ``getPerplexity`` in src/llm_utils.py of
github.com/JP-25/Description-based-Bias-Benchmark): the option is the assistant's reply to [system, prompt]
under the chat template; checked against a plain transformers forward pass on the bundled default model."""

from __future__ import annotations

import math

import pytest
from tolerances import LOGPROB_ABS, LOGPROB_REL


@pytest.mark.slow
def test_chat_scoring_matches_a_plain_forward_pass(tmp_path):
    import torch
    from inspect_ai import eval as inspect_eval
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from stereoprobe.dbb import scoring as SC
    from stereoprobe.providers.default_model import default_model_dir
    from stereoprobe.tasks.dbb import dbb_sg

    sel = {"source": "bundled", "faithful": False, "prompt": "stereoprobe", "categories": "ses", "templates": "sp01"}
    log, grouped = inspect_eval([dbb_sg(**sel, unit="question"), dbb_sg(**sel)], model="transformers/default",
                                display="none", log_dir=str(tmp_path))
    assert log.status == "success" and grouped.status == "success", (log.error, grouped.error)
    [g] = grouped.samples
    by_q = g.metadata["sg_results"]
    mdir = str(default_model_dir())
    tok = AutoTokenizer.from_pretrained(mdir)
    lm = AutoModelForCausalLM.from_pretrained(mdir, dtype=torch.float32).eval()
    system = SC.prompts("stereoprobe")["sg"]["system"]
    assert system == "You are a useful assistant."  # upstream getPerplexity's system message
    for s in log.samples:
        md = s.metadata
        msgs = [{"role": "system", "content": system}, {"role": "user", "content": md["sg_prompt"]}]
        prefix = tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"]
        shares, expected = [], []
        for pair in md["sg_options"]:
            nll = []
            for option in pair:
                opt = tok(option, add_special_tokens=False)["input_ids"]
                ids = torch.tensor([list(prefix) + opt])
                with torch.no_grad():
                    logp = torch.log_softmax(lm(ids).logits[0, :-1].double(), -1)
                tgt = ids[0, 1:]
                lp = logp[torch.arange(len(tgt)), tgt][-len(opt):]
                nll.append(float(-lp.mean()))
            expected.append(nll)
            shares.append(1 / (1 + math.exp(nll[0] - nll[1])))
        got = s.scores["dbb_sg_scorer"]
        # mean per-token NLLs equal the forward pass's within float32 batching noise (tests/tolerances.py)
        for mine, batched, theirs in zip(got.metadata["sg_nll"], by_q[s.id]["nll"], expected):
            assert mine == pytest.approx(theirs, abs=LOGPROB_ABS, rel=LOGPROB_REL)
            assert batched == pytest.approx(mine, abs=LOGPROB_ABS, rel=LOGPROB_REL)  # grouped = per question
        # a share is a logistic function (slope <= 1/4) of a difference of two NLLs: error <= LOGPROB_ABS / 2
        assert got.value["a"] == pytest.approx(sum(shares) / len(shares), abs=LOGPROB_ABS)
