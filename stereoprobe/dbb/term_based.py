"""The term-based comparison of the DBB paper (Pan et al., Findings of EMNLP 2025, Tables 1 and 6): BBQ,
CrowS-Pairs and StereoSet figures read from run outputs, next to DBB's, each row labelled with its protocol.

The paper prompted the three benchmarks generatively with its Table 11 prompt and reports refusal rates; that
protocol is the inspect task ``stereoprobe/dbb_baselines``, whose logs map onto every Table 1 and Table 6
column. Outputs of other implementations are read too, under a different protocol (``protocol`` column):

- lm-evaluation-harness results files (``results_*.json``; ``lm-eval run --output_path``): every metric of a
  task whose name starts with ``bbq``, ``crows_pairs`` or ``stereoset``, scored by log-likelihood (no
  generated answer, so no refusals: a different protocol from the paper's). The paper's columns are mapped
  where lm-eval has the same measure: BBQ-ambig = ``amb_bias_score`` (0 = no bias), BBQ-disambig =
  ``accuracy_disamb`` × 100 (100 = no bias), CS = ``pct_stereotype`` × 100 of ``crows_pairs_english`` (50 = no
  bias).
- inspect logs (``.eval`` / ``.json``, e.g. inspect_evals' ``bbq`` and ``stereoset``): every metric of the
  log's results, listed as written (no column mapping: the implementations define their own scores).

Rows: ``model, benchmark, task, metric, value, paper_column, paper_value, source, protocol, path``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from stereoprobe.errors import InputError, reason
from stereoprobe.inputs import partition, read_results_file
from stereoprobe.inputs.discovery import RESULTS_FILE
from stereoprobe.model_labels import model_label

BENCHMARKS = {"bbq": "BBQ", "crows_pairs": "CrowS-Pairs", "stereoset": "StereoSet"}
# (task prefix, lm-eval metric) -> (paper column, factor)
PAPER_COLUMNS = {("bbq", "amb_bias_score"): ("BBQ-ambig (0)", 1.0),
                 ("bbq", "accuracy_disamb"): ("BBQ-disambig (↑)", 100.0),
                 ("crows_pairs_english", "pct_stereotype"): ("CS (50)", 100.0)}
COLUMNS = ["model", "benchmark", "task", "metric", "value", "paper_column", "source", "protocol", "path"]
PROTOCOL_GENERATIVE = "generative, paper Table 11 prompt (the paper's protocol)"
PROTOCOL_LM_EVAL = "lm-eval log-likelihood (a different protocol: no generated answer, no refusals)"
PROTOCOL_INSPECT = "inspect log of another implementation (its own protocol)"
BASELINES_TASK = "dbb_baselines"
#: dbb_baselines metric -> the paper's column (Table 1 measures, Table 6 refuse rates)
BASELINE_COLUMNS = {
    "bbq_ambig_bias_score": "BBQ-ambig (0)", "bbq_disambig_accuracy": "BBQ-disambig (↑)",
    "crows_pairs_pct_stereotype": "CS (50)", "stereoset_intrasentence_icat": "SS-intra (↑)",
    "stereoset_intersentence_icat": "SS-inter (↑)",
    "bbq_ambig_refusal_rate": "refuse % BBQ-ambig", "bbq_disambig_refusal_rate": "refuse % BBQ-disambig",
    "crows_pairs_refusal_rate": "refuse % CS", "stereoset_intrasentence_refusal_rate": "refuse % SS-intra",
    "stereoset_intersentence_refusal_rate": "refuse % SS-inter",
}


def _benchmark(task: str) -> str | None:
    low = task.lower().split("/")[-1]
    for prefix, name in BENCHMARKS.items():
        if low.startswith(prefix):
            return name
    return None


def _files(inputs: Iterable[str | Path]) -> list[Path]:
    """lm-eval results files and inspect logs under ``inputs``, split by the input layer."""
    part = partition(inputs, ("logs", "lm_eval_results"), what="term-based benchmark outputs")
    return part.lm_eval_results + part.logs


def _lm_eval_rows(path: Path, data: dict[str, Any]) -> list[dict[str, Any]]:
    model = model_label(data.get("model_name") or (data.get("config") or {}).get("model_args") or path.parent.name)
    rows = []
    for task, metrics in (data.get("results") or {}).items():
        bench = _benchmark(task)
        if bench is None or not isinstance(metrics, dict):
            continue
        for key, value in metrics.items():
            name = key.split(",")[0]
            if name == "alias" or name.endswith("_stderr") or not isinstance(value, (int, float)):
                continue
            col = PAPER_COLUMNS.get((task, name))
            rows.append({"model": model, "benchmark": bench, "task": task, "metric": name, "value": float(value),
                         "paper_column": col[0] if col else "",
                         "paper_value": float(value) * col[1] if col else math.nan,
                         "source": "lm-eval", "protocol": PROTOCOL_LM_EVAL, "path": str(path)})
    return rows


def _inspect_rows(path: Path) -> list[dict[str, Any]]:
    """Metrics of an inspect log of a term-based benchmark; a ``.json`` file that is no inspect log is skipped."""
    from inspect_ai.log import read_eval_log

    try:
        log = read_eval_log(str(path), header_only=True)
    except Exception as e:  # noqa: BLE001 (any unreadable file is one line for the user)
        if path.suffix == ".json":
            return []
        raise InputError(f"{path}: not a readable inspect log ({reason(e)})") from None
    task = log.eval.task.split("/")[-1]
    ours = task == BASELINES_TASK
    bench = _benchmark(str((log.eval.task_args or {}).get("benchmark", "bbq")) if ours else task)
    if bench is None or log.results is None:
        return []
    rows = []
    for sc in log.results.scores:
        for name, m in sc.metrics.items():
            col = BASELINE_COLUMNS.get(name, "") if ours else ""
            rows.append({"model": log.eval.model, "benchmark": bench, "task": task,
                         "metric": f"{sc.name}/{name}", "value": float(m.value), "paper_column": col,
                         "paper_value": float(m.value) if col else math.nan, "source": "inspect",
                         "protocol": PROTOCOL_GENERATIVE if ours else PROTOCOL_INSPECT, "path": str(path)})
    return rows


def read_term_based(inputs: Sequence[str | Path]) -> pd.DataFrame:
    """Metrics of BBQ / CrowS-Pairs / StereoSet runs found under ``inputs`` (lm-eval results files and inspect
    logs); other files are skipped. An input with none of them is an :class:`InputError`."""
    rows: list[dict[str, Any]] = []
    for path in _files(inputs):
        if RESULTS_FILE.match(path.name):
            data = read_results_file(path)
            if "results" in data:
                rows += _lm_eval_rows(path, data)
                continue
        rows += _inspect_rows(path)
    if not rows:
        raise InputError(f"no BBQ, CrowS-Pairs or StereoSet results (lm-eval results_*.json or inspect logs) in "
                         f"{', '.join(map(str, inputs))}")
    return pd.DataFrame(rows, columns=COLUMNS[:6] + ["paper_value"] + COLUMNS[6:])


def paper_table(term: pd.DataFrame) -> pd.DataFrame:
    """One row per model and protocol with the paper's Table 1 (and, from ``dbb_baselines`` logs, Table 6)
    columns that the inputs provide."""
    mapped = term[term["paper_column"] != ""]
    if mapped.empty:
        return pd.DataFrame(columns=["model", "protocol"])
    return mapped.pivot_table(index=["model", "protocol"], columns="paper_column", values="paper_value",
                              aggfunc="first").reset_index()
