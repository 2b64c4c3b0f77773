"""DBB results from eval logs: responses, complete questions, test instances, summaries (the steps of
:mod:`stereoprobe.dbb.api`, the Python API of ``stereoprobe dbb``).

Logs are read through :mod:`stereoprobe.inputs` (files, folders, ``inspect eval-set`` folders; one record
per run × sample × epoch across all files, the newest complete copy winning; error samples counted, never
scored). A question is **complete** when all the epochs its run asked for were scored (logprob mode: both
option orders), an instance when both of its questions are complete; a question of the run's dataset that
has no scored response at all (an interrupted run) is incomplete too. Incomplete units are excluded from
every statistic and counted in the tables (``incomplete``, ``runs``, ``summary.n_incomplete``), the console
line and the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from stereoprobe import inputs as I
from stereoprobe.dbb import contract as C
from stereoprobe.dbb import stats as ST
from stereoprobe.dbb.questions import parse_question_id
from stereoprobe.errors import InputError


#: wraps an iterable with a progress display: ``progress(iterable, description)`` (the input layer's type)
Progress = I.Progress


def read_responses(inputs: Sequence[str | Path], stats: Any = None, progress: Progress | None = None
                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One row per scored response (sample × epoch) of every dbb/dbb_sg log (and of lm-eval ``--log_samples``
    output of the dbb_mc / dbb_sg tasks), and one row per run.

    The response table carries ``expected_epochs`` (the run's epochs per question); the runs table lists
    logs, responses, error samples and the run's question ids (``expected_ids``, a ``;``-joined string)."""
    from stereoprobe.inputs import ReadStats, iter_samples, partition
    from stereoprobe.logs import read_eval_spec

    stats = stats if stats is not None else ReadStats()
    rows: list[dict[str, Any]] = []
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    specs: dict[Path, dict[str, Any]] = {}
    part = partition(inputs, ("logs", "lm_eval"), what="DBB inputs", lm_eval_task=tuple(C.LM_EVAL_TASKS))
    lm_rows = _lm_eval_rows(part.lm_eval, stats) if part.lm_eval else []
    if not part.logs and not lm_rows:
        raise InputError(f"no dbb/dbb_sg logs nor lm-eval samples of {', '.join(C.LM_EVAL_TASKS)} in "
                         f"{', '.join(map(str, inputs))}")
    samples = (iter_samples(part.logs, task=tuple(C.TASKS), stats=stats, distinct=("mode",), string_ids=True)
               if not lm_rows or _has_dbb_logs(part.logs) else iter([]))
    for info, s in (progress(samples, "DBB: reading logs") if progress else samples):
        if info.path not in specs:
            specs[info.path] = read_eval_spec(info.path)
        run = _log_run(runs, info, specs[info.path])
        rows += _sample_rows(s, info, run, info.epochs)
    for r in lm_rows:
        run = runs.setdefault((r["model"], r["variant"]), {"model": r["model"], "variant": r["variant"],
                                                           "task": r.pop("task"), "logs": set(), "responses": 0,
                                                           "epochs": r["expected_epochs"], "ids": set(),
                                                           "settings": "lm-eval samples"})
        run["logs"].add(r.pop("log"))
        run["ids"].add(r["question_id"])
        if _unscored(r.get(C.KEY_A), r.get(C.KEY_VALID, 1.0), run):
            continue
        run["responses"] += 1
        rows.append(r)
    return pd.DataFrame(rows, columns=C.RESPONSE_COLUMNS + ["expected_epochs"]), _runs_table(runs, stats)


def _log_run(runs: dict[tuple[str, str], dict[str, Any]], info: Any, spec: dict[str, Any]) -> dict[str, Any]:
    """The run (model x variant) of a log's sample, created on its first sample and updated with the log: its
    files, epochs, question (or template) ids, protocol note and settings."""
    from stereoprobe.report.run_settings import run_settings, settings_text

    meta = spec.get("metadata") or {}
    # the mode the task recorded (its default when -T mode was not given), else the task argument
    mode = meta.get("mode") or info.task_args.get("mode")
    variant = C.variant_name(info.task, mode)
    epochs = info.epochs
    run = runs.setdefault((info.model, variant), {"model": info.model, "variant": variant, "task": info.task,
                                                  "logs": set(), "responses": 0, "epochs": epochs,
                                                  "ids": set(), "protocol": _protocol(mode, epochs)})
    run["logs"].add(info.path.name)
    run["epochs"] = max(run["epochs"], epochs)
    sample_ids = [str(i) for i in (info.dataset.get("sample_ids") or ())]
    if meta.get("unit") == "template":  # sample ids are templates: a template never scored is counted
        run.setdefault("groups", set()).update(sample_ids)
    else:
        run["ids"].update(sample_ids)
    run["settings"] = "; ".join(f"{k}={meta[k]}" for k in ("source", "faithful", "names", "mode",
                                                          "option_order", "scoring", "variations") if k in meta)
    run["model_settings"] = settings_text(run_settings(spec))  # -M arguments, model roles, generation settings
    return run


def _sample_rows(s: dict[str, Any], info: Any, run: dict[str, Any], epochs: int) -> list[dict[str, Any]]:
    """The response rows of one scored sample of ``run`` (its log ran ``epochs`` epochs): one, or one per question
    of a grouped sample; none when the sample was not scored (counted as a missing epoch of its question)."""
    score = (s.get("scores") or {}).get(C.TASKS[info.task])
    if score is None:
        return []
    md, variant = s.get("metadata") or {}, run["variant"]
    v = score.get("value")
    where = f"{info.path}: sample {s['id']!r} epoch {s.get('epoch', 1)}"
    if not isinstance(v, dict) or C.KEY_A not in v or C.KEY_VALID not in v:
        raise InputError(f"{where}: unexpected score value {v!r} (not a {info.task} log of this stereoprobe "
                         "version?)")
    if C.GROUP_IDS in (score.get("metadata") or {}):
        run.setdefault("groups_seen", set()).add(str(s["id"]))
        return _group_rows(score["metadata"], info.model, variant, md, epochs, run, where)
    _check_share(where, C.KEY_A, v[C.KEY_A])
    _check_share(where, C.KEY_VALID, v[C.KEY_VALID])
    if _unscored(v[C.KEY_A], v[C.KEY_VALID], run):
        return []
    run["responses"] += 1
    run["ids"].add(str(s["id"]))
    return [{
        "model": info.model, "variant": variant, "question_id": str(s["id"]), "epoch": int(s["epoch"]),
        **{k: md.get(k, "") for k in C.META_KEYS},
        C.KEY_A: float(v[C.KEY_A]), C.KEY_VALID: float(v[C.KEY_VALID]),
        "refusal": float(v[C.KEY_VALID]) < 0.5, "expected_epochs": epochs,
    }]


def _runs_table(runs: dict[tuple[str, str], dict[str, Any]], stats: Any) -> pd.DataFrame:
    """One row per run: logs, responses, error samples, epochs, settings and the run's question ids."""
    by_run = getattr(stats, "by_run", {}) or {}
    return pd.DataFrame([{
        "model": r["model"], "variant": r["variant"], "task": r["task"], "logs": ", ".join(sorted(r["logs"])),
        "responses": r["responses"], "errors": int(by_run.get((r["task"], r["model"]), {}).get("errors", 0)),
        "epochs": r["epochs"], "settings": r.get("settings", ""), "model_settings": r.get("model_settings", ""),
        "templates_not_scored": len(r.get("groups", set()) - r.get("groups_seen", set())),
        "unscored": int(r.get("unscored", 0)),
        "protocol": r.get("protocol", ""),
        "expected_ids": ";".join(sorted(r["ids"])),
    } for r in runs.values()])


def _protocol(mode: str | None, epochs: int) -> str:
    """A note when a run departs from the paper's protocol (a mode's minimum epochs: sampled, 10, §5), else ""."""
    need = C.mode(mode).min_epochs if mode in C.MODE_RECORDS else 0
    if epochs < need:
        return f"WARNING: {epochs} epoch{'s' if epochs != 1 else ''} per question; the {mode} protocol needs {need}"
    return ""


def _check_share(where: str, key: str, value: Any) -> None:
    """:class:`InputError` naming the sample when a share (P(A), validity) is not a number in [0, 1]
    (NaN, an undefined share, passes)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (value != value or 0 <= value <= 1):
        raise InputError(f"{where}: score field {key!r} is {value!r}, expected a number in [0, 1]")


def _unscored(a: Any, valid: Any, run: dict[str, Any]) -> bool:
    """Whether a response's share ``a`` or validity is NaN (an epoch the scorer could not score): it is left
    out and counted in ``run["unscored"]``, so its question is incomplete and out of every statistic (a NaN
    ``a`` summed as 0 turned a question's P(A) of 49.3 into 0.0)."""
    if a != a or valid != valid:
        run["unscored"] = run.get("unscored", 0) + 1
        return True
    return False


def _has_dbb_logs(paths: Sequence[str | Path]) -> bool:
    """Whether ``paths`` hold inspect logs of dbb / dbb_sg (used when lm-eval samples were found too); an
    unreadable log is an error, never skipped."""
    from stereoprobe.logs import read_header

    return any(read_header(p).task in C.TASKS for p in paths)


def _lm_eval_rows(paths: Sequence[Path], stats: Any) -> list[dict[str, Any]]:
    """Response rows from lm-eval ``--log_samples`` files of the shipped ``dbb_mc`` / ``dbb_sg`` tasks
    (:func:`stereoprobe.dbb.lm_eval.response`): dbb_mc has one doc per option order (epochs 1, 2)."""
    from stereoprobe.inputs import iter_lm_eval_samples
    from stereoprobe.dbb.lm_eval import response

    rows = []
    for rec in iter_lm_eval_samples(paths, task=tuple(C.LM_EVAL_TASKS), stats=stats):
        r = response({"doc": rec.doc, "doc_id": rec.doc_id, **rec.metrics}, rec.task, rec.model)
        r.pop("source", None)
        _check_share(f"{rec.path}: line {rec.line}", "p_a", r.get(C.KEY_A, rec.metrics.get("p_a")))
        rows.append({**r, "expected_epochs": 2 if rec.task == "dbb_mc" else 1, "task": rec.task,
                     "log": rec.path.name})
    return rows


def _group_rows(meta: dict[str, Any], model: str, variant: str, md: dict[str, Any], epochs: int,
                run: dict[str, Any], where: str = "") -> list[dict[str, Any]]:
    """Response rows of a grouped DBB-SG sample (one per question scored; failed questions only listed)."""
    rows = []
    for key in (C.GROUP_IDS, C.GROUP_A, C.GROUP_ERRORS):
        if not isinstance(meta.get(key), list):
            raise InputError(f"{where}: score metadata field {key!r} is not a list")
    valids = meta.get(C.GROUP_VALID) or [None] * len(meta[C.GROUP_IDS])
    lengths = {C.GROUP_IDS: len(meta[C.GROUP_IDS]), C.GROUP_A: len(meta[C.GROUP_A]),
               C.GROUP_VALID: len(valids) if isinstance(valids, list) else -1, C.GROUP_ERRORS: len(meta[C.GROUP_ERRORS])}
    if len(set(lengths.values())) > 1:  # a truncated list would drop questions without a word (zip stops early)
        raise InputError(f"{where}: score metadata lists differ in length "
                         f"({', '.join(f'{k} {n}' for k, n in lengths.items())}); the log was cut or edited")
    for qid, a, valid, err in zip(meta[C.GROUP_IDS], meta[C.GROUP_A], valids, meta[C.GROUP_ERRORS]):
        run["ids"].add(str(qid))
        if err is not None or a is None:
            continue
        # DBB-SG: one share per question; MCQ logprob: one value per option order (epoch 1, 2, ...)
        if isinstance(a, list) and isinstance(valid, list) and len(a) != len(valid):
            raise InputError(f"{where} question {qid!r}: score metadata lists {C.GROUP_A!r} ({len(a)}) and "
                             f"{C.GROUP_VALID!r} ({len(valid)}) differ in length; the log was cut or edited")
        answers = list(zip(a, valid)) if isinstance(a, list) and isinstance(valid, list) else [(a, 1.0)]
        for e, (a_e, v_e) in enumerate(answers, start=1):
            _check_share(f"{where} question {qid!r}", C.GROUP_A, a_e)
            _check_share(f"{where} question {qid!r}", C.GROUP_VALID, v_e)
            if _unscored(a_e, 1.0 if v_e is None else v_e, run):
                continue
            run["responses"] += 1
            rows.append({"model": model, "variant": variant, "question_id": str(qid), "epoch": e,
                         **parse_question_id(qid), "concept_a": md.get("concept_a", ""),
                         "concept_b": md.get("concept_b", ""), C.KEY_A: float(a_e), C.KEY_VALID: float(v_e),
                         "refusal": float(v_e) < 0.5, "expected_epochs": len(answers)})
    return rows


def question_completeness(resp: pd.DataFrame, runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per model, variant and question: responses seen, epochs expected, ``complete``. Questions of a run's
    dataset without any scored response are included (0 responses, incomplete)."""
    cols = ["model", "variant", "question_id", "n_epochs", "expected_epochs"]
    if resp.empty:
        seen = pd.DataFrame(columns=cols)
    else:
        r = resp if "expected_epochs" in resp.columns else resp.assign(expected_epochs=float("nan"))
        seen = (r.groupby(["model", "variant", "question_id"], sort=False)
                .agg(n_epochs=("epoch", "nunique"), expected_epochs=("expected_epochs", "max")).reset_index())
        # no epoch count in the input (e.g. lm-eval samples): the most epochs any question of the run has
        most = seen.groupby(["model", "variant"])["n_epochs"].transform("max")
        seen["expected_epochs"] = seen["expected_epochs"].fillna(most)
    rows = [seen]
    if runs is not None and not runs.empty and "expected_ids" in runs.columns:
        have = set(zip(seen["model"], seen["variant"], seen["question_id"]))
        extra = [{"model": run.model, "variant": run.variant, "question_id": qid, "n_epochs": 0,
                  "expected_epochs": int(run.epochs)}
                 for run in runs.itertuples(index=False) for qid in str(run.expected_ids).split(";")
                 if qid and (run.model, run.variant, qid) not in have]
        if extra:
            rows.append(pd.DataFrame(extra))
    out = pd.concat(rows, ignore_index=True) if len(rows) > 1 else seen
    out["complete"] = out["n_epochs"].astype(int) >= out["expected_epochs"].astype(int)
    return out


def compute_tables(resp: pd.DataFrame, threshold: float = ST.THRESHOLD, n_boot: int = 2000, seed: int = 0,
                   top: int = 5, runs: pd.DataFrame | None = None, progress: Progress | None = None
                   ) -> dict[str, pd.DataFrame]:
    """questions, instances, incomplete, summary and top_associations tables from a responses table (and the
    runs table of :func:`read_responses`, for questions that were never scored)."""
    comp = question_completeness(resp, runs)
    qs, insts, sums, tops = [], [], [], []
    keys = sorted(set(zip(comp["model"], comp["variant"])))
    for model, variant in (progress(keys, "DBB: statistics and bootstrap per run") if progress else keys):
        c = comp[(comp["model"] == model) & (comp["variant"] == variant)]
        r = resp[(resp["model"] == model) & (resp["variant"] == variant)]
        q = ST.question_table(r) if not r.empty else pd.DataFrame(columns=C.QUESTION_COLUMNS)
        missing = sorted(set(c["question_id"]) - set(q["question_id"]))
        if missing:
            q = pd.concat([q, pd.DataFrame([{"model": model, "question_id": m, **parse_question_id(m),
                                             "concept_a": "", "concept_b": "", "n_responses": 0, "n_valid": 0.0,
                                             "p_a": float("nan")} for m in missing])], ignore_index=True)
        done = set(c.loc[c["complete"], "question_id"])
        q["complete"] = q["question_id"].isin(done)
        q.loc[~q["complete"], "p_a"] = float("nan")
        i = ST.instance_table(q)
        qc = q[q["complete"]]
        rc = r[r["question_id"].isin(done)]
        s = ST.summary_table(i, rc, threshold=threshold, n_boot=n_boot, seed=seed, questions=qc) if len(i) else \
            pd.DataFrame(columns=C.SUMMARY_COLUMNS)
        t = ST.top_associations(i, k=top)
        for df in (q, i, s, t):
            df.insert(1, "variant", variant)
        qs.append(q), insts.append(i), sums.append(s), tops.append(t)
    inc = comp[~comp["complete"]].reset_index(drop=True)

    def cat(dfs: list[pd.DataFrame]) -> pd.DataFrame:
        return pd.concat(dfs, ignore_index=True) if dfs else pd.DataFrame()

    return {"questions": cat(qs), "instances": cat(insts), "incomplete": inc, "summary": cat(sums),
            "top_associations": cat(tops)}


def run_table(runs: pd.DataFrame, tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The runs table with complete/incomplete question and instance counts (``expected_ids`` dropped)."""
    out = runs.drop(columns=["expected_ids"], errors="ignore").copy()
    q, i = tables["questions"], tables["instances"]
    for col, df, flag in (("questions_complete", q, True), ("questions_incomplete", q, False),
                          ("instances_incomplete", i, False)):
        cnt = df[df["complete"] == flag].groupby(["model", "variant"]).size() if len(df) else pd.Series(dtype=int)
        out[col] = [int(cnt.get((m, v), 0)) for m, v in zip(out["model"], out["variant"])]
    return out


def summary_lines(tables: dict[str, pd.DataFrame], runs: pd.DataFrame, threshold: float) -> list[str]:
    """One console line per run: biased instances, mean S, refusal rates, incomplete units."""
    summ = tables["summary"]
    lines = []
    tot = summ[summ["category"] == "ALL"] if len(summ) else summ
    for r in tot.itertuples(index=False):
        mean_s = "–" if pd.isna(r.mean_s_biased) else f"{r.mean_s_biased:.2f}"
        lines.append(f"{r.model} [{r.variant}]: {r.count_s_ge_20} of {r.n} complete instances with S >= "
                     f"{threshold:g} (mean S {mean_s}); refusal rate {100 * r.refusal_rate:.2f}% of "
                     f"responses, {100 * r.question_refusal_rate:.2f}% of questions; {r.n_incomplete} incomplete "
                     "instances left out")
    for r in runs.itertuples(index=False):
        if getattr(r, "protocol", ""):
            lines.append(f"{r.model} [{r.variant}]: {r.protocol} (paper §5); its S values are noisier than the "
                         "paper's")
        if getattr(r, "unscored", 0):
            lines.append(f"{r.model} [{r.variant}]: {r.unscored} response(s) without a number (NaN share or "
                         "validity) left out as unscored; their questions count as incomplete")
        if getattr(r, "templates_not_scored", 0):
            lines.append(f"{r.model} [{r.variant}]: {r.templates_not_scored} templates not scored (error samples "
                         "or an interrupted run); run `inspect eval-retry` on the log")
        if r.questions_incomplete or r.errors:
            lines.append(f"{r.model} [{r.variant}]: {r.questions_incomplete} incomplete questions "
                         f"({r.errors} error samples); run `inspect eval-retry` on the log to complete them")
    return lines
