"""The probe registry: a fourth probe is its package, its descriptor and its files in ``tasks/``, ``scorers/``, and
the leaderboard, the planner, the command line, the index page and inspect's registry pick it up without an edit
to any existing module. The toy probe below is written as docs/adding-a-probe.md says, into a folder beside the
repository that the fixture adds to the packages' search paths (as if its files were dropped into the tree)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import stereoprobe
from stereoprobe import probes
from stereoprobe.probes import ProbeDescriptor, columns, register, registered

# the toy probe's files, by their place in the repository's layout (docs/adding-a-probe.md, steps 1-4)
TOY_FILES = {
    "stereoprobe/toy/__init__.py": '"""A made-up probe."""',
    "stereoprobe/toy/contract.py": """
        TASK = "toy_task"
        TABLES = ("summary",)
        SCORE_COLUMNS = ["model", "item", "score"]
    """,
    "stereoprobe/toy/compute.py": """
        import pandas as pd
        from stereoprobe.toy.contract import SCORE_COLUMNS

        def compute(scores: dict[str, list[float]]) -> pd.DataFrame:
            rows = [(m, f"i{k}", float(v)) for m, values in scores.items() for k, v in enumerate(values)]
            return pd.DataFrame(rows, columns=SCORE_COLUMNS)
    """,
    "stereoprobe/toy/leaderboard.py": """
        from stereoprobe.leaderboard.headline import metric_row
        from stereoprobe.leaderboard.pairwise import compare_continuous, model_pairs, pair_row, paired_items

        def toy_metrics(src, level=0.95, bonus=0.0):
            df = src.get("toy", "summary")
            if df is None:
                return []
            return [metric_row(m, "toy", "mean_score", g["score"].mean() + bonus, n=len(g), method="mean")
                    for m, g in df.groupby("model", sort=True)]

        def toy_pairwise(src, n_boot=2000, seed=0, level=0.95):
            df = src.get("toy", "summary")
            rows = []
            for a, b in model_pairs(df["model"].unique()):
                m = paired_items(df, ["item"], a, b)
                est, ci, p = compare_continuous(m["score_a"].to_numpy(float), m["score_b"].to_numpy(float),
                                                m["item"].to_numpy(), n_boot, seed, level)
                rows.append(pair_row("toy", "score", a, b, est, ci, p, len(m), "Wilcoxon"))
            return rows

        def toy_lm_eval(files, n_boot=2000):
            import json

            import pandas as pd

            assert n_boot == 50  # the leaderboard's option, passed by name
            rows = [(f.parent.name, json.loads(line)["doc"]["item"], json.loads(line)["score"])
                    for f in files for line in f.read_text().splitlines()]
            return {"summary": pd.DataFrame(rows, columns=["model", "item", "score"])}
    """,
    "stereoprobe/cli/toy.py": """
        def register(sub):
            p = sub.add_parser("toy", help="the toy probe's post-processing command")
            p.add_argument("--say", default="toy ran")
            p.set_defaults(func=lambda args: print(args.say) or 0)
    """,
    "stereoprobe/toy/probe.py": """
        from stereoprobe.probes import Board, Metric, PlanTask, ProbeDescriptor, Setting, columns, register
        from stereoprobe.toy import contract as C

        DESCRIPTOR = register(ProbeDescriptor(
            name="toy", title="Toy probe: made-up scores",
            tables={"summary": columns(C.SCORE_COLUMNS, "model", "item", "score")},
            domains={"summary": {"score": (0.0, 10.0)}},
            boards=(Board("toy", "Toy probe: made-up scores", (Metric("mean_score", "lower"),)),),
            settings={"bonus": Setting(0.0, "Toy: added to every mean score", low=0, high=1)},
            metrics="stereoprobe.toy.leaderboard:toy_metrics", pairwise="stereoprobe.toy.leaderboard:toy_pairwise",
            tasks={C.TASK: PlanTask("widgets", per_epoch=True)}, commands=("stereoprobe.cli.toy",),
            order=35,
        ))
    """,
    "tasks/toy.py": """
        from inspect_ai import Task, task
        from inspect_ai.dataset import MemoryDataset, Sample

        from stereoprobe.scorers.toy import toy_scorer
        from stereoprobe.toy.contract import TASK

        @task(name=TASK)
        def toy_task() -> Task:
            return Task(dataset=MemoryDataset([Sample(input="widget", target="1")]), scorer=toy_scorer())
    """,
    "scorers/toy.py": """
        from inspect_ai.scorer import Score, Target, accuracy, scorer
        from inspect_ai.solver import TaskState

        @scorer(metrics=[accuracy()])
        def toy_scorer():
            async def score(state: TaskState, target: Target) -> Score:
                return Score(value=1.0)

            return score
    """,
}


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import stereoprobe.cli
    import stereoprobe.scorers
    import stereoprobe.tasks

    tree = tmp_path / "tree"
    for rel, text in TOY_FILES.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(textwrap.dedent(text))
    for package, folder in ((stereoprobe, "stereoprobe"), (stereoprobe.cli, "stereoprobe/cli"),
                            (stereoprobe.tasks, "tasks"), (stereoprobe.scorers, "scorers")):
        monkeypatch.setattr(package, "__path__", [*package.__path__, str(tree / folder)])
    monkeypatch.setattr(probes, "_DISCOVERED", False)  # find the descriptors again, the toy's among them
    descriptor = probes.get("toy")
    yield descriptor
    probes.unregister("toy")
    for name in [m for m in sys.modules if m.startswith(("stereoprobe.toy", "stereoprobe.cli.toy",
                                                           "stereoprobe.tasks.toy", "stereoprobe.scorers.toy"))]:
        del sys.modules[name]


def _toy_folder(root: Path, scores: dict[str, list[float]]) -> Path:
    from stereoprobe.toy.compute import compute

    from stereoprobe.report.html import Section, write_report
    from stereoprobe.tables import write_table

    out = root / "toy"
    out.mkdir(parents=True)
    write_table(compute(scores), out, "summary")
    write_report(out / "report.html", "Toy", [Section("Scores").text("made-up")])
    return out


SCORES = {"m1": [1.0, 2.0, 3.0, 6.0], "m2": [2.0, 2.5, 3.5, 8.0]}


def test_shipped_probes_are_found_in_display_order():
    names = [d.name for d in registered()]
    assert names[:5] == ["stereotales", "judge", "dbb", "globalbias", "profiles"]
    assert {m.rsplit(".", 2)[-2] for m in probes.descriptor_modules()} >= {"mining", "judge", "dbb", "globalbias"}


def test_columns_must_be_the_contracts():
    assert columns(["a", "b"], "b") == ("b",)
    with pytest.raises(ValueError, match="not in the contract"):
        columns(["a", "b"], "c")


def test_a_toy_probe_reaches_the_leaderboard(toy, tmp_path: Path):
    from stereoprobe.leaderboard import build_leaderboard, write_leaderboard
    from stereoprobe.leaderboard.report import MAIN_METRICS, PROBE_TITLES
    from stereoprobe.leaderboard.sources import MARKERS, REQUIRED, TABLES

    assert TABLES["toy"] == ("summary",) and MARKERS["toy"] == ("summary",)
    assert REQUIRED[("toy", "summary")] == ("model", "item", "score")  # not DBB's summary columns
    assert MAIN_METRICS["toy"] == ["mean_score"] and PROBE_TITLES["toy"] == toy.title
    folder = _toy_folder(tmp_path / "results", SCORES)
    lb = build_leaderboard([str(folder)], n_boot=50, settings={"bonus": 0.5})
    est = lb.metrics.set_index(["model", "metric"])["estimate"]
    for model, values in SCORES.items():  # the mean of the numbers written above (+ the probe setting)
        assert est[(model, "mean_score")] == pytest.approx(sum(values) / len(values) + 0.5)
    assert lb.metrics["probe"].unique().tolist() == ["toy"]
    [pair] = lb.pairwise.to_dict("records")
    assert (pair["model_a"], pair["model_b"]) == ("m1", "m2")
    assert pair["estimate"] == pytest.approx(np.mean(np.subtract(SCORES["m1"], SCORES["m2"])))
    assert "toy.mean_score" in lb.wide.columns
    write_leaderboard(lb, tmp_path / "board")
    assert toy.title in (tmp_path / "board" / "leaderboard.html").read_text()


def test_a_toy_probe_checks_its_own_ranges_and_options(toy, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    import pandas as pd

    from stereoprobe.cli import main
    from stereoprobe.errors import InputError
    from stereoprobe.leaderboard import build_leaderboard

    folder = _toy_folder(tmp_path / "results", SCORES)
    # its setting is an option of the leaderboard command, with the descriptor's range
    out = tmp_path / "board"
    assert main(["leaderboard", str(folder), "--out", str(out), "--n-boot", "50", "--bonus", "0.25"]) == 0
    metrics = pd.read_csv(out / "metrics.csv").set_index(["model", "metric"])["estimate"]
    assert metrics[("m1", "mean_score")] == pytest.approx(np.mean(SCORES["m1"]) + 0.25)
    assert main(["leaderboard", str(folder), "--out", str(out), "--bonus", "2"]) == 2
    assert "--bonus" in capsys.readouterr().err
    # its summary table has its own range (0 to 10), not DBB's summary's
    bad = _toy_folder(tmp_path / "bad", {"m1": [1.0, 11.0]})
    with pytest.raises(InputError, match=r"summary\.parquet: column 'score' is not a number in \[0, 10\]"):
        build_leaderboard([str(bad)], n_boot=50)


def test_a_toy_probe_registers_its_task_with_inspect(toy):
    from inspect_ai._util.registry import registry_find

    from stereoprobe._registry import import_modules

    assert "stereoprobe.tasks.toy" in import_modules("stereoprobe.tasks")
    assert "stereoprobe.scorers.toy" in import_modules("stereoprobe.scorers")
    names = {getattr(t, "__registry_info__").name for t in registry_find(lambda i: i.type == "task")}
    assert any(n.rsplit("/", 1)[-1] == "toy_task" for n in names), sorted(names)


def test_a_toy_probe_reads_its_lm_eval_samples(toy, tmp_path: Path):
    import dataclasses
    import json

    from stereoprobe.errors import InputError
    from stereoprobe.leaderboard import build_leaderboard

    register(dataclasses.replace(toy, lm_eval="stereoprobe.toy.leaderboard:toy_lm_eval", lm_eval_tasks=("toy_lm",)))
    for model, values in SCORES.items():  # lm-eval's layout: <out>/<model>/samples_<task>_<time>.jsonl
        (tmp_path / "out" / model).mkdir(parents=True)
        lines = [json.dumps({"doc_id": k, "doc": {"item": f"i{k}"}, "score": v}) for k, v in enumerate(values)]
        (tmp_path / "out" / model / "samples_toy_lm_2026-01-01T00-00-00.jsonl").write_text("\n".join(lines))
    lb = build_leaderboard([str(tmp_path / "out")], n_boot=50)
    est = lb.metrics.set_index(["model", "metric"])["estimate"]
    for model, values in SCORES.items():
        assert est[(model, "mean_score")] == pytest.approx(sum(values) / len(values))
    assert lb.sources == [("toy", f"{tmp_path / 'out'} (lm-eval samples)")]
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="lm-eval samples of dbb_mc, dbb_sg, toy_lm or globalbias"):
        build_leaderboard([str(tmp_path / "empty")], n_boot=50)


def test_descriptor_needs_lm_eval_tasks_with_its_reader():
    with pytest.raises(ValueError, match="lm_eval and lm_eval_tasks"):
        ProbeDescriptor(name="bad", title="Bad", lm_eval="m:f")


def test_a_toy_probe_reaches_the_planner(toy):
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample

    from stereoprobe.plan.core import UNITS, plan_task

    task = Task(dataset=MemoryDataset([Sample(input=f"widget {i}") for i in range(3)]), name="toy_task", epochs=2)
    plan = plan_task(task, model="mockllm/model", count=len)
    assert UNITS["toy_task"] == "widgets"
    assert (plan.unit, plan.items, plan.samples) == ("widgets", 6, 3)  # per epoch: 3 samples x 2 epochs


def test_a_toy_probe_reaches_the_command_line(toy, capsys: pytest.CaptureFixture[str]):
    from stereoprobe.cli import main, order

    names = order()
    assert names.index("dbb_export_lm_eval") < names.index("toy") < names.index("globalbias")  # order 35
    assert main(["toy", "--say", "hello toy"]) == 0
    assert capsys.readouterr().out.strip() == "hello toy"


def test_a_toy_probe_reaches_the_index_page(toy, tmp_path: Path):
    from stereoprobe.report.index import build_index, probe_of

    folder = _toy_folder(tmp_path, SCORES)  # no run_info.json: recognised by its marker table
    tables = sorted(folder.glob("*.csv"))
    assert probe_of(None, tables) is toy
    page = build_index(tmp_path).read_text()
    assert toy.title in page and '<a href="toy/">' in page  # the tables column links the folder


def test_registry_view_follows_registration():
    view = probes.RegistryView(lambda: {d.name: d.order for d in registered()})
    assert "late" not in view
    register(ProbeDescriptor(name="late", title="Late", order=999))
    try:
        assert view["late"] == 999 and list(view)[-1] == "late"
    finally:
        probes.unregister("late")
    assert "late" not in view


def test_descriptor_rejects_markers_outside_its_tables():
    with pytest.raises(ValueError, match="markers"):
        ProbeDescriptor(name="bad", title="Bad", tables={"a": ("model",)}, markers=("b",))
