"""Grouped likelihood samples (one per name group x template): same numbers and tables as one sample per
sentence, per-text failures recorded, interrupted runs + retries, eval-set folders."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from inspect_ai import Task, eval_retry, eval_set
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import modelapi

from fake_model import FakeModel, expected_sum, fake_model
from stereoprobe.cli import main
from stereoprobe.likelihood import SCORER, read_results
from stereoprobe.scorers.likelihood import text_logprobs
from stereoprobe.solvers.likelihood import score_texts
from stereoprobe.tasks.globalbias import globalbias

SELECTION = {"source": "bundled", "groups": ["CHINESE", "ARAB", "ENGLISH"], "templates": [1, 2]}
FAIL = {"on": True}


def _arab_f_name() -> str:
    from stereoprobe.globalbias.data import load_names

    return next(n.name for n in load_names("bundled") if n.group == "ARAB_F")


class FlakyModel(FakeModel):
    """The fake model, failing (a non-retryable error) on the first ARAB_F name while ``FAIL["on"]``."""

    async def generate(self, input, tools, tool_choice, config):  # type: ignore[override]  # noqa: A002
        if FAIL["on"] and _arab_f_name() in input[-1].text:
            raise RuntimeError("connection reset (simulated interruption)")
        return await super().generate(input, tools, tool_choice, config)


@modelapi(name="gb-flaky")
def _flaky() -> type[FlakyModel]:
    return FlakyModel


def _tables(out) -> dict[str, pd.DataFrame]:
    return {n: pd.read_csv(out / f"{n}.csv") for n in ("bias_scores", "associations", "min_groups", "validation")}


def _same_tables(a, b) -> None:
    """Same tables up to the model's name."""
    ta, tb = _tables(a), _tables(b)
    for name in ta:
        pd.testing.assert_frame_equal(ta[name].drop(columns="model"), tb[name].drop(columns="model"),
                                      check_exact=False, rtol=1e-12, obj=name)


def test_grouped_samples_give_the_per_sentence_numbers_and_tables(tmp_path):
    grouped = globalbias(**SELECTION)
    per_sentence = globalbias(**SELECTION, unit="sentence")
    assert len(grouped.dataset) == 6 * 2 and grouped.dataset[0].id == "CHINESE_F:t1"
    assert sum(s.metadata["n_texts"] for s in grouped.dataset) == len(per_sentence.dataset) == 18 * 16 * 2
    [lg] = inspect_eval(grouped, model=fake_model(), log_dir=str(tmp_path / "g"), display="none")
    [ls] = inspect_eval(per_sentence, model=fake_model(), log_dir=str(tmp_path / "s"), display="none",
                        max_samples=500)
    assert lg.status == ls.status == "success"
    texts = {s.id: s.input for s in ls.samples}
    n = 0
    for smp in lg.samples:
        for r in read_results(smp.scores[SCORER]):
            exp_sum, exp_n = expected_sum(texts[r.id])
            assert r.sum_logprob == pytest.approx(exp_sum, abs=1e-12) and r.n_tokens == exp_n
            assert r.n_bytes == len(texts[r.id].encode("utf-8"))
            n += 1
    assert n == len(texts)
    mg, ms = lg.results.scores[0].metrics, ls.results.scores[0].metrics
    assert mg["mean_perplexity"].value == pytest.approx(ms["sentence_mean_perplexity"].value, rel=1e-12)
    assert mg["texts"].value == n and mg["unscored"].value == 0
    assert main(["globalbias", str(tmp_path / "g"), "--out", str(tmp_path / "og")]) == 0
    assert main(["globalbias", str(tmp_path / "s"), "--out", str(tmp_path / "os")]) == 0
    _same_tables(tmp_path / "og", tmp_path / "os")


def test_per_text_failures_are_recorded_and_counted(tmp_path):
    items = [{"id": "a", "text": "Ann is tall."}, {"id": "b", "text": "Ann NOLOGPROBS here."},
             {"id": "c", "text": "Bo is here now.", "context": "Bo is"}]
    task = Task(dataset=[Sample(input="3 texts", id="s", metadata={"texts": items})], solver=score_texts(),
                scorer=text_logprobs())
    [log] = inspect_eval(task, model=fake_model(), log_dir=str(tmp_path), display="none")
    assert log.status == "success"
    res = {r.id: r for r in read_results(log.samples[0].scores[SCORER])}
    assert res["a"].ok and res["a"].sum_logprob == pytest.approx(expected_sum("Ann is tall.")[0])
    assert not res["b"].ok and "prompt_logprobs" in res["b"].error and res["b"].sum_logprob is None
    # context: only the tokens after "Bo is" are summed ("here", "now.")
    full, _ = expected_sum("Bo is here now.")
    ctx, _ = expected_sum("Bo is")
    assert res["c"].n_tokens == 2 and res["c"].sum_logprob == pytest.approx(full - ctx)
    assert res["c"].n_bytes == len(" here now.")
    m = log.results.scores[0].metrics
    assert m["unscored"].value == 1 and m["texts"].value == 3
    ppl = [math.exp(-res[k].sum_logprob / res[k].n_tokens) for k in ("a", "c")]
    assert m["mean_perplexity"].value == pytest.approx(sum(ppl) / 2)


def test_interrupted_run_plus_retry_equals_uninterrupted(tmp_path):
    task_args = dict(SELECTION)
    [full] = inspect_eval(globalbias(**task_args), model=fake_model(), log_dir=str(tmp_path / "full"), display="none")
    assert full.status == "success"
    FAIL["on"] = True
    try:
        [first] = inspect_eval(globalbias(**task_args), model="gb-flaky/model", log_dir=str(tmp_path / "mixed"),
                               display="none")
    finally:
        FAIL["on"] = False
    assert first.status == "error"  # stopped at the first failing sample, finished samples kept
    # the interrupted log alone: ARAB_F was not scored (or only for some templates: incomplete, left out)
    assert main(["globalbias", first.location, "--out", str(tmp_path / "o1")]) == 0
    assert "ARAB_F" not in set(pd.read_csv(tmp_path / "o1" / "bias_scores.csv")["group"])
    [retry] = eval_retry(first, log_dir=str(tmp_path / "mixed"), display="none")
    assert retry.status == "success"
    assert main(["globalbias", str(tmp_path / "mixed"), "--out", str(tmp_path / "o2")]) == 0
    assert main(["globalbias", str(tmp_path / "full"), "--out", str(tmp_path / "o3")]) == 0
    _same_tables(tmp_path / "o2", tmp_path / "o3")


def test_incomplete_units_are_left_out_and_counted(tmp_path):
    from stereoprobe.globalbias.completeness import split_complete

    rows = [("m", g, f"{g}{k}", "d", t, 1.0) for g in ("A_F", "B_F") for k in range(2) for t in (1, 2)]
    rows += [("m", g, f"{g}{k}", "e", t, 1.0) for g in ("A_F", "B_F") for k in range(2) for t in (1, 2)
             if not (g == "B_F" and k == 1 and t == 2)]
    df = pd.DataFrame(rows, columns=["model", "group", "name", "descriptor", "template", "ppl"])
    kept, missing = split_complete(df)
    assert len(kept) == len(df) - 3  # the B_F x e unit (3 of 4 cells) goes
    assert missing.to_dict("records") == [{"model": "m", "group": "B_F", "descriptor": "e", "present": 3,
                                           "expected": 4}]


def test_eval_set_folder(tmp_path):
    ok, logs = eval_set(globalbias(**SELECTION), model=fake_model(), log_dir=str(tmp_path / "set"), display="none")
    assert ok
    assert main(["globalbias", str(tmp_path / "set"), "--out", str(tmp_path / "o")]) == 0
    [plain] = inspect_eval(globalbias(**SELECTION), model=fake_model(), log_dir=str(tmp_path / "plain"),
                           display="none")
    assert main(["globalbias", str(tmp_path / "plain"), "--out", str(tmp_path / "p")]) == 0
    _same_tables(tmp_path / "o", tmp_path / "p")


def test_masked_lm_truncation_default(tmp_path):
    """Masked LMs score at most ``mlm_max_length`` input tokens (default 22, lmppl's ``max_length``); the
    grouped samples carry it to the provider, causal models ignore it."""
    import asyncio

    import torch
    from inspect_ai.model import get_model
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    from stereoprobe.solvers.likelihood import score_items

    t = globalbias(**SELECTION)
    assert all(it["mlm_max_length"] == 22 for s in t.dataset for it in s.metadata["texts"])
    assert all("mlm_max_length" not in it for s in globalbias(**SELECTION, mlm_max_length=None).dataset
               for it in s.metadata["texts"])
    with pytest.raises(ValueError, match="mlm_max_length"):
        globalbias(**SELECTION, mlm_max_length=0)

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "my", "name", "is", "olga", ",", "i", "was", "a",
             "doctor", "."]
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n")
    tok = BertTokenizerFast(vocab={w: i for i, w in enumerate(words)}, do_lower_case=True)
    torch.manual_seed(0)
    bert = BertForMaskedLM(BertConfig(vocab_size=len(words), hidden_size=32, num_hidden_layers=1,
                                      num_attention_heads=2, intermediate_size=64, max_position_embeddings=64))
    bert.save_pretrained(tmp_path / "bert")
    tok.save_pretrained(tmp_path / "bert")
    model = get_model(f"transformers/{tmp_path / 'bert'}", device="cpu", memoize=False)
    text = "my name is olga, i was a doctor."  # 10 word pieces + [CLS] + [SEP]
    full, cut = asyncio.run(score_items([{"id": "a", "text": text}, {"id": "b", "text": text, "mlm_max_length": 5}],
                                        model))
    assert full.n_tokens == 10 and cut.n_tokens == 4  # [CLS] + 4 scored pieces


def test_batch_path_records_a_too_long_text_and_scores_the_others(tmp_path):
    """The transformers provider's batch path: a text longer than the context window is a per-text failure
    (recorded with its reason), the other texts of the request are scored as one request each would be."""
    import asyncio

    import torch
    from inspect_ai.model import get_model
    from transformers import BertTokenizerFast, LlamaConfig, LlamaForCausalLM

    from stereoprobe.solvers.likelihood import score_items

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "my", "name", "is", "olga", ",", "i", "was", "a",
             "doctor", "."]
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n")
    tok = BertTokenizerFast(vocab={w: i for i, w in enumerate(words)}, do_lower_case=True, bos_token="[CLS]",
                            eos_token="[SEP]")
    torch.manual_seed(0)
    llama = LlamaForCausalLM(LlamaConfig(vocab_size=len(words), hidden_size=32, intermediate_size=64,
                                         num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2,
                                         max_position_embeddings=8, bos_token_id=2, eos_token_id=3, pad_token_id=0))
    llama.save_pretrained(tmp_path / "llama")
    tok.save_pretrained(tmp_path / "llama")
    model = get_model(f"transformers/{tmp_path / 'llama'}", device="cpu", memoize=False)
    assert model.api.scores_text_batches
    items = [{"id": "short", "text": "my name is olga ."},
             {"id": "long", "text": "my name is olga , i was a doctor , i was a doctor ."},
             {"id": "ctx", "text": "olga was a doctor .", "context": "olga was"}]
    batch = asyncio.run(score_items(items, model))
    assert batch[1].error and "context window" in batch[1].error and batch[1].sum_logprob is None
    model.api.scores_text_batches = False  # one request per text on the same provider
    try:
        single = asyncio.run(score_items(items, model))
    finally:
        del model.api.scores_text_batches
    for k in (0, 2):
        assert batch[k].ok and batch[k].n_tokens == single[k].n_tokens
        assert abs(batch[k].sum_logprob - single[k].sum_logprob) <= 1e-5 * batch[k].n_tokens
    assert batch[2].n_tokens == 3  # "a doctor ." after the context
    assert single[1].error and "context window" in single[1].error
