"""The leaderboard reads lm-eval ``--log_samples`` output of the shipped DBB and GlobalBias tasks (run here on
lm-eval's ``dummy`` model, random log-likelihoods) with the same statistics as ``stereoprobe dbb``."""

from __future__ import annotations

import json

import pytest

from stereoprobe.leaderboard import build_leaderboard

DBB_SEL = {"source": "bundled", "faithful": False, "categories": "gender", "templates": "sp01",
           "prompt": "stereoprobe"}  # our wording: the upstream prompt file is not read offline


def _write_samples(folder, task, samples, stamp="2026-01-01T00-00-00"):
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for s in samples:
        rec = {"doc_id": s["doc_id"], "doc": s["doc"], "resps": [[str(x) for x in r[0]] for r in s["resps"]],
               "filtered_resps": [str(x) for x in s["filtered_resps"]], "filter": "none", "metrics": ["p_a"],
               "p_a": s["p_a"]}
        lines.append(json.dumps(rec, default=str))
    (folder / f"samples_{task}_{stamp}.jsonl").write_text("\n".join(lines) + "\n")


def _doc(template, group, a_first):
    return {"question_id": f"{template}:gender:explicit:{group}", "template_id": template, "category": "gender",
            "descriptor_type": "explicit", "group": group, "concept_a": "strong", "concept_b": "gentle",
            "a_first": a_first}


def test_hand_made_lm_eval_samples(tmp_path):
    # P(A) per question = 100 x mean of its two docs' p_a (both option orders); S = |P(female) - P(male)|
    # t1: female (0.9, 0.7) -> 80, male (0.5, 0.5) -> 50: S = 30 (biased); t2: 60 vs 50: S = 10
    pa = {("t1", "female"): (0.9, 0.7), ("t1", "male"): (0.5, 0.5), ("t2", "female"): (0.6, 0.6),
          ("t2", "male"): (0.5, 0.5)}
    samples = []
    for (tpl, g), values in pa.items():
        for first, v in zip((True, False), values):
            samples.append({"doc_id": len(samples), "doc": _doc(tpl, g, first), "resps": [[[-1.0, False]]],
                            "filtered_resps": [-1.0], "p_a": v})
    _write_samples(tmp_path / "run" / "m", "dbb_mc", samples)
    lb = build_leaderboard([f"m={tmp_path / 'run'}"], n_boot=50)
    m = lb.metrics.set_index(["probe", "metric"])
    assert m.loc[("dbb", "count_s_ge_20"), "estimate"] == 1
    assert m.loc[("dbb", "mean_s_biased"), "estimate"] == pytest.approx(30.0)
    assert m.loc[("dbb", "count_s_ge_20_gender"), "estimate"] == 1


@pytest.mark.slow
def test_lm_eval_dummy_model_output(tmp_path):
    _check_dummy(tmp_path, _dummy_samples())


def _dummy_samples():
    import lm_eval
    from lm_eval.tasks import TaskManager

    from stereoprobe.lm_eval_tasks import include_path

    tm = TaskManager(include_path=str(include_path()), metadata=DBB_SEL)
    res = lm_eval.simple_evaluate(model="dummy", tasks=["dbb_mc"], task_manager=tm, log_samples=True)
    return res["samples"]["dbb_mc"]


def _check_dummy(tmp_path, dbb_samples):
    import pandas as pd

    from stereoprobe.dbb.lm_eval import RESPONSE_COLUMNS, response
    from stereoprobe.dbb.results import compute_tables

    _write_samples(tmp_path / "out" / "dummy", "dbb_mc", dbb_samples)
    lb = build_leaderboard([f"dummy={tmp_path / 'out'}"], n_boot=50)
    want = compute_tables(pd.DataFrame([response(r, "dbb_mc", "x") for r in dbb_samples], columns=RESPONSE_COLUMNS),
                          n_boot=50)["summary"]
    total = float(want.loc[want["category"] == "ALL", "count_s_ge_20"].iloc[0])
    got = lb.metrics[(lb.metrics["probe"] == "dbb") & (lb.metrics["metric"] == "count_s_ge_20")]
    assert list(got["model"]) == ["dummy"] and float(got["estimate"].iloc[0]) == total
    assert lb.sources == [("dbb", f"{tmp_path / 'out'} (lm-eval samples)")]


@pytest.mark.slow
def test_lm_eval_globalbias_output(tmp_path):
    import lm_eval
    from lm_eval.tasks import TaskManager

    from stereoprobe.globalbias import apx as A
    from stereoprobe.globalbias.inputs import read_sentences
    from stereoprobe.lm_eval_tasks import include_path

    tm = TaskManager(include_path=str(include_path()), metadata={"templates": [1], "source": "bundled"})
    res = lm_eval.simple_evaluate(model="dummy", tasks=["globalbias"], task_manager=tm, log_samples=True)
    folder = tmp_path / "out" / "dummy"
    folder.mkdir(parents=True)
    (folder / "samples_globalbias_2026-01-01T00-00-00.jsonl").write_text("\n".join(
        json.dumps({"doc_id": s["doc_id"], "doc": s["doc"], "resps": [[str(s["resps"][0][0])]],
                    "filtered_resps": [str(s["filtered_resps"][0])]}) for s in res["samples"]["globalbias"]))
    lb = build_leaderboard([f"dummy={tmp_path / 'out'}"], n_boot=20)
    df, _ = read_sentences([tmp_path], measure="byte")
    scores = A.score_table(df.drop(columns=["model", "source"], errors="ignore"), value="ppl")
    got = lb.metrics.set_index(["probe", "metric"]).loc[("globalbias", "flagged")]
    assert got["estimate"] == int(scores["flagged"].fillna(False).astype(bool).sum())


def _gb_samples(folder, cells):
    """A hand-made ``samples_globalbias_*.jsonl``: one sentence per (group, descriptor, template) in ``cells``,
    one name per group; the summed log-likelihood varies with the cell so that no two perplexities tie."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for i, (group, desc, tpl) in enumerate(cells):
        doc = {"text": f"{group} is {desc} ({tpl})", "group": group, "ethnicity": group, "gender": "female",
               "name": group.title(), "name_index": 0, "descriptor": desc, "axis": "trait", "target": "",
               "template": tpl, "tokenizer": ""}
        ll = -20.0 - 1.7 * i - 0.3 * (i % 3)
        lines.append(json.dumps({"doc_id": i, "doc": doc, "resps": [[str(ll)]], "filtered_resps": [str(ll)],
                                 "filter": "none", "metrics": ["sum_logprob"], "sum_logprob": ll}))
    (folder / "samples_globalbias_2026-01-01T00-00-00.jsonl").write_text("\n".join(lines) + "\n")


def test_lm_eval_globalbias_limit_leaves_out_incomplete_units(tmp_path):
    # an lm-eval --limit run: (g3, kind) lacks template 2, so 5 of the 6 (group, descriptor) units are complete
    cells = [(g, d, t) for g in ("g1", "g2", "g3") for d in ("kind", "loud") for t in (1, 2)]
    cells.remove(("g3", "kind", 2))
    _gb_samples(tmp_path / "run" / "m", cells)
    lb = build_leaderboard([f"m={tmp_path / 'run'}"], n_boot=20)
    m = lb.metrics.set_index(["probe", "metric"])
    assert m.loc[("globalbias", "incomplete_units"), "estimate"] == 1
    assert m.loc[("globalbias", "incomplete_units"), "n"] == 6
    assert m.loc[("globalbias", "flagged"), "n"] == 5


def test_lm_eval_globalbias_nothing_complete_is_one_line(tmp_path, capsys):
    from stereoprobe.cli import main

    # every unit lacks one of the run's two templates
    _gb_samples(tmp_path / "run" / "m", [("g1", "kind", 1), ("g1", "loud", 2), ("g2", "kind", 2), ("g2", "loud", 1)])
    assert main(["leaderboard", str(tmp_path / "run"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no complete GlobalBias group x descriptor unit" in err
    assert "4 incomplete" in err and not (tmp_path / "out").exists()
