"""``stereoprobe dbb LOGS... --out DIR``: DBB bias scores from inspect eval logs of ``dbb`` / ``dbb_sg``.

Writes ``DIR/responses`` (one row per response), ``DIR/questions`` (P(A) per question), ``DIR/instances``
(one row per test instance and group pair: category, descriptor_type, groups, p_a_1, p_a_2, s),
``DIR/summary`` (per model, variant, category and descriptor type: n, count_s_ge_20, mean_s_biased,
refusal_rate, with CIs; an ``ALL`` row per model and variant), ``DIR/top_associations`` — each as CSV and
Parquet — and ``DIR/report.html``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

TASKS = {"dbb": "dbb_mcq_scorer", "dbb_sg": "dbb_sg_scorer"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("dbb", help="DBB: bias scores S, counts of S >= 20, refusal rates and report from eval logs")
    p.add_argument("inputs", nargs="+", help="eval log files or folders (dbb and dbb_sg tasks)")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--threshold", type=float, default=20.0, help="S threshold for a biased instance (paper: 20)")
    p.add_argument("--n-boot", type=int, default=2000, help="bootstrap draws for the CIs (over templates)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    p.add_argument("--top", type=int, default=5, help="top biased associations per category")
    p.set_defaults(func=_run)


def read_responses(inputs: list[str]) -> tuple[Any, Any]:
    """One row per response (sample × epoch) of every dbb/dbb_sg log; and a table of runs with error counts."""
    import pandas as pd

    from stereoprobe.logs import iter_samples

    rows: list[dict[str, Any]] = []
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    for info, s in iter_samples(inputs):
        if info.task not in TASKS:
            continue
        variant = "sg" if info.task == "dbb_sg" else f"mcq-{info.task_args.get('mode', 'logprob')}"
        run = runs.setdefault((info.model, variant), {"model": info.model, "variant": variant, "task": info.task,
                                                      "logs": set(), "responses": 0, "errors": 0})
        run["logs"].add(info.path.name)
        md = s.get("metadata") or {}
        scores = s.get("scores") or {}
        if s.get("error") is not None or not scores or TASKS[info.task] not in scores:
            run["errors"] += 1
            continue
        v = scores[TASKS[info.task]].get("value")
        if not isinstance(v, dict) or "a" not in v or "valid" not in v:
            raise ValueError(f"{info.path}: sample {s['id']} epoch {s['epoch']}: unexpected score value {v!r}")
        run["responses"] += 1
        rows.append({
            "model": info.model, "variant": variant, "question_id": str(s["id"]), "epoch": s["epoch"],
            "template_id": md.get("template_id"), "category": md.get("category"),
            "descriptor_type": md.get("descriptor_type"), "group": md.get("group"),
            "concept_a": md.get("concept_a", ""), "concept_b": md.get("concept_b", ""),
            "a": float(v["a"]), "valid": float(v["valid"]),
        })
    resp = pd.DataFrame(rows)
    runs_df = pd.DataFrame([{**r, "logs": ", ".join(sorted(r["logs"]))} for r in runs.values()])
    return resp, runs_df


def compute_tables(resp: Any, threshold: float = 20.0, n_boot: int = 2000, seed: int = 0, top: int = 5
                   ) -> dict[str, Any]:
    """questions, instances, summary and top_associations tables from a responses table."""
    import pandas as pd

    from stereoprobe.dbb import stats as ST
    from stereoprobe.dbb.data import bundled_descriptors

    order = {c: list(g) for c, g in bundled_descriptors().groups.items()}
    qs, insts, sums, tops = [], [], [], []
    for (model, variant), r in resp.groupby(["model", "variant"], sort=True):
        q = ST.question_table(r)
        i = ST.instance_table(q, order)
        s = ST.summary_table(i, r, threshold=threshold, n_boot=n_boot, seed=seed)
        t = ST.top_associations(i, k=top)
        for df in (q, i, s, t):
            df.insert(1, "variant", variant)
        qs.append(q), insts.append(i), sums.append(s), tops.append(t)
    return {"questions": pd.concat(qs, ignore_index=True), "instances": pd.concat(insts, ignore_index=True),
            "summary": pd.concat(sums, ignore_index=True), "top_associations": pd.concat(tops, ignore_index=True)}


def _run(args: argparse.Namespace) -> int:
    from stereoprobe.tables import write_table

    resp, runs = read_responses(args.inputs)
    if resp.empty:
        raise SystemExit(f"stereoprobe dbb: no scored dbb/dbb_sg samples in {', '.join(args.inputs)}")
    tables = compute_tables(resp, args.threshold, args.n_boot, args.seed, args.top)
    out = Path(args.out)
    write_table(resp, out, "responses")
    write_table(runs, out, "runs")
    for name, df in tables.items():
        write_table(df, out, name)
    from stereoprobe.dbb.report import write_dbb_report

    write_dbb_report(out / "report.html", runs, tables, args.threshold)
    summ = tables["summary"]
    tot = summ[summ["category"] == "ALL"]
    for r in tot.itertuples(index=False):
        print(f"{r.model} [{r.variant}]: {r.count_s_ge_20} of {r.n} instances with S >= {args.threshold:g} "
              f"(mean S {r.mean_s_biased:.2f}), refusal rate {100 * r.refusal_rate:.2f}%")
    print(f"wrote {out}/instances.csv, summary.csv, report.html")
    return 0
