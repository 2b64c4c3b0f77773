"""The DBB lm-eval tasks: wiring on lm-eval's dummy model, and agreement with the inspect tasks on the
bundled default model (slow)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stereoprobe.lm_eval_tasks import include_path

SEL = {"source": "bundled", "faithful": False, "prompt": "stereoprobe", "categories": "gender", "templates": "sp01"}


def _tm(**meta):
    from lm_eval.tasks import TaskManager

    return TaskManager(include_path=str(include_path()), include_defaults=False, metadata=meta)  # our tasks only: fast


def test_docs_match_inspect_ids_and_export(tmp_path):
    from stereoprobe.cli import main
    from stereoprobe.errors import InputError
    from stereoprobe.lm_eval_tasks.docs_builder import build_docs, read_jsonl
    from stereoprobe.tasks.dbb import dbb

    mc = build_docs("mc", **SEL)
    ids = {s.id for s in dbb(**SEL).dataset}
    assert {d["question_id"] for d in mc} == ids and len(mc) == 2 * len(ids)
    out = tmp_path / "mc.jsonl"
    assert main(["dbb-export-lm-eval", "--variant", "mc", "--source", "bundled", "--no-faithful",
                 "--prompt", "stereoprobe", "--categories", "gender", "--limit-templates", "1", "--out", str(out)]) == 0
    assert read_jsonl(out) == mc
    with pytest.raises(InputError, match="dbb-export-lm-eval"):
        read_jsonl(tmp_path / "missing.jsonl")


def test_mc_task_runs_on_dummy_model():
    import lm_eval

    res = lm_eval.simple_evaluate(model="dummy", tasks=["dbb_mc"], task_manager=_tm(**SEL), log_samples=True)
    r = res["results"]["dbb_mc"]
    assert res["results"]["dbb_mc"]["sample_len"] == 16
    # recompute the aggregation by hand from the per-doc letter log-likelihoods
    p = {}
    for s in res["samples"]["dbb_mc"]:
        (la, _), (lb, _) = [x[0] for x in s["resps"]]
        pf = np.exp(la) / (np.exp(la) + np.exp(lb))
        p.setdefault(s["doc"]["question_id"], []).append(pf if s["doc"]["a_first"] else 1 - pf)
    pa = {k: 100 * np.mean(v) for k, v in p.items()}
    s_vals = [abs(pa[f"sp01:gender:{t}:female"] - pa[f"sp01:gender:{t}:male"]) for t in range(1, 5)]
    assert r["count_s_ge_20,none"] == sum(s >= 20 for s in s_vals)


@pytest.mark.slow
def test_lm_eval_agrees_with_inspect_on_default_model(tmp_path):
    import lm_eval
    from inspect_ai import eval as inspect_eval
    from lm_eval.models.huggingface import HFLM

    from stereoprobe.dbb.results import compute_tables, read_responses
    from stereoprobe.providers.default_model import default_model_dir
    from stereoprobe.tasks.dbb import dbb, dbb_sg

    sel = {"categories": "ses", "templates": "sp01"}  # 4 questions, 2 test instances: keeps the test short
    bundled = {"source": "bundled", "faithful": False, "prompt": "stereoprobe"}  # the same selection for both routes
    logs = inspect_eval([dbb(**sel, **bundled, mode="logprob"), dbb_sg(**sel, **bundled, scoring="raw")],
                        model="transformers/default", display="none",
                        log_dir=str(tmp_path), log_realtime=False)
    assert all(lg.status == "success" for lg in logs)
    resp, _ = read_responses([str(tmp_path)])
    ours = compute_tables(resp, n_boot=50)["questions"]

    mdir = str(default_model_dir())
    lm = HFLM(pretrained=mdir, batch_size=16, device="cpu", dtype="float32")
    got = {}
    for task, chat, variant in [("dbb_mc", True, "mcq-logprob"), ("dbb_sg", False, "sg")]:
        res = lm_eval.simple_evaluate(model=lm, tasks=[task], task_manager=_tm(**sel, **bundled, tokenizer=mdir),
                                      log_samples=True, apply_chat_template=chat)
        per_q = {}
        for s in res["samples"][task]:
            per_q.setdefault(s["doc"]["question_id"], []).append(float(s["p_a"]))
        theirs = pd.Series({k: 100 * np.mean(v) for k, v in per_q.items()})
        mine = ours[ours["variant"] == variant].set_index("question_id")["p_a"]
        got[variant] = (mine.sort_index(), theirs.sort_index())
        assert list(mine.sort_index().index) == list(theirs.sort_index().index)
    # DBB-SG: the same quantity (raw text, trailing-token NLL): equal up to float32 batching noise
    m, t = got["sg"]
    assert np.abs(m.to_numpy() - t.to_numpy()).max() < 0.05  # measured: < 0.001
    # MCQ: lm-eval scores the exact letters "a"/"b" as continuations; inspect sums the letter variants among
    # the first token's top-20 ("a", " a", "A", "a)"): close, not identical
    m, t = got["mcq-logprob"]
    assert np.abs(m.to_numpy() - t.to_numpy()).max() < 2.0  # measured on gender/sp01: S differs by < 0.01
    for variant, (m, t) in got.items():
        s_m = [abs(m[f"sp01:ses:{k}:poor"] - m[f"sp01:ses:{k}:rich"]) for k in (1, 2)]
        s_t = [abs(t[f"sp01:ses:{k}:poor"] - t[f"sp01:ses:{k}:rich"]) for k in (1, 2)]
        assert np.abs(np.array(s_m) - np.array(s_t)).max() < (0.05 if variant == "sg" else 2.0)
