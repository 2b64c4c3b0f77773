"""Hugging Face Hub: each probe's benchmark definition (``tasks/<probe>.hub.yaml``, the Hub's ``eval.yaml``
format) names the task ids the ``.eval_results`` export writes; the export parses with huggingface_hub's own
parser; ``--hub-model-id LABEL=org/name`` files a model's results under its Hub id."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml
from huggingface_hub import EvalResultEntry, parse_eval_result_entries

from stereoprobe.cli import main
from stereoprobe.leaderboard import build_leaderboard
from stereoprobe.leaderboard.summary import load_hub_definition
from stereoprobe.listings import listing_names, load_listing, tasks_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PROBES = [p for p in listing_names() if load_listing(p).get("hub")]


def test_every_listing_with_a_hub_section_has_a_definition() -> None:
    assert set(PROBES) == {"dbb", "globalbias", "stereotales"}


@pytest.mark.parametrize("probe", PROBES)
def test_hub_definition_follows_the_hub_eval_yaml_format(probe) -> None:
    from inspect_ai._util.registry import registry_lookup

    import stereoprobe._registry  # noqa: F401  (registers the solvers and scorers)

    d = load_hub_definition(probe)
    assert isinstance(d["name"], str) and d["name"] and isinstance(d["description"], str) and d["description"]
    assert d["evaluation_framework"] == "inspect-ai"
    ids = [t["id"] for t in d["tasks"]]
    assert len(ids) == len(set(ids))
    for t in d["tasks"]:  # what the Hub requires of an inspect-ai benchmark's tasks
        assert {"input", "target"} <= set(t["field_spec"])
        for kind, key in (("solver", "solvers"), ("scorer", "scorers")):
            assert t[key] and all(registry_lookup(kind, s["name"]) is not None for s in t[key]), (probe, t["id"])
    # the definition's tasks are the listing's hub tasks, one sub-leaderboard each
    assert ids == [t["task_id"] for t in load_listing(probe)["hub"]["tasks"]]


def test_hub_definitions_ship_in_the_wheel() -> None:
    root = Path(__file__).parents[2]
    data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "*.hub.yaml" in data["stereoprobe.tasks"]
    assert {p.name for p in tasks_dir().glob("*.hub.yaml")} == {f"{p}.hub.yaml" for p in PROBES}


def _export(probe_root: Path, tmp_path: Path, *extra: str) -> tuple[int, Path]:
    hub = tmp_path / "hub"
    rc = main(["leaderboard", str(probe_root), "--out", str(tmp_path / "lb"), "--n-boot", "100",
               "--hub-eval-results", str(hub), "--hub-source-url", "https://example.org/logs", "-q", *extra])
    return rc, hub


def test_export_parses_with_huggingface_hub_and_matches_the_definitions(probe_root, tmp_path) -> None:
    rc, hub = _export(probe_root, tmp_path)
    assert rc == 0
    lb = build_leaderboard([probe_root], n_boot=100)
    by_dataset = {load_listing(p)["hub"]["dataset_id"]: p for p in PROBES}
    written: dict[str, set[str]] = {}
    files = sorted(hub.glob("*/.eval_results/*.yaml"))
    assert files
    for f in files:
        entries = parse_eval_result_entries(yaml.safe_load(f.read_text()))
        assert entries and all(isinstance(e, EvalResultEntry) for e in entries)
        model = f.parent.parent.name
        for e in entries:
            probe = by_dataset[e.dataset_id]
            written.setdefault(probe, set()).add(e.task_id)
            assert e.source_url == "https://example.org/logs" and e.source_name
            task = next(t for t in load_listing(probe)["hub"]["tasks"] if t["task_id"] == e.task_id)
            m = lb.metrics
            row = m[(m["model"] == model) & (m["probe"] == task["probe"]) & (m["metric"] == task["metric"])]
            assert float(e.value) == pytest.approx(float(row["estimate"].iloc[0]), rel=1e-12)
    for probe, ids in written.items():  # every task id the export writes is one the Hub definition declares
        assert ids <= {t["id"] for t in load_hub_definition(probe)["tasks"]}, probe
    assert set(written) == set(PROBES)


def test_hub_model_id_files_results_under_the_hub_id(probe_root, tmp_path) -> None:
    rc, hub = _export(probe_root, tmp_path, "--hub-model-id", "m1=org/model-one")
    assert rc == 0
    assert sorted(p.name for p in hub.iterdir() if p.is_dir()) == ["m2", "org__model-one"]
    assert list((hub / "org__model-one" / ".eval_results").glob("*.yaml"))


@pytest.mark.parametrize("value, message", [
    ("nobody=org/x", "no model labelled 'nobody'"),
    ("m1=not-an-id", "is not a Hub model id"),
    ("m1", "expected LABEL=org/name"),
])
def test_bad_hub_model_id_is_one_line_and_writes_nothing(probe_root, tmp_path, capsys, value, message) -> None:
    rc, hub = _export(probe_root, tmp_path, "--hub-model-id", value)
    err = capsys.readouterr().err.strip()
    assert rc == 2 and message in err and len(err.splitlines()) == 1
    assert not hub.exists() and not (tmp_path / "lb").exists()
