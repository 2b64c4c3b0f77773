"""Model labels (names, never paths), run_info.json's shell-quoted command, figures as PNG files (+ SVG on request), the
profiles console line without placeholder rows."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pandas as pd
import pytest

from stereoprobe.model_labels import model_label

HUB = "/root/.cache/huggingface/hub/models--HuggingFaceTB--SmolLM2-135M-Instruct/snapshots/12fd25f7"


@pytest.mark.parametrize(("raw", "label"), [
    (f"pretrained={HUB},dtype=float32", "HuggingFaceTB/SmolLM2-135M-Instruct"),
    (HUB, "HuggingFaceTB/SmolLM2-135M-Instruct"),
    ({"pretrained": HUB, "dtype": "float32"}, "HuggingFaceTB/SmolLM2-135M-Instruct"),
    ("__root__.cache__huggingface__hub__models--meta-llama--Llama-3.1-8B__snapshots__0e9e39f", "meta-llama/Llama-3.1-8B"),
    ("pretrained=/data/models/Llama-3.1-8B-Instruct,trust_remote_code=True", "Llama-3.1-8B-Instruct"),
    ("pretrained=/runs/lr3e-4/checkpoint-1000", "lr3e-4/checkpoint-1000"),
    ("pretrained=meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct"),
    ("transformers//srv/models/models--Qwen--Qwen2.5-7B/snapshots/a1", "transformers/Qwen/Qwen2.5-7B"),
    ("transformers//srv/weights/my-model", "transformers/my-model"),
    ("vllm-completions/meta-llama/Llama-3.1-8B", "vllm-completions/meta-llama/Llama-3.1-8B"),
    ("transformers/default", "transformers/default"),
    ("openai/gpt-4o", "openai/gpt-4o"),
])
def test_model_label(raw, label) -> None:
    assert model_label(raw) == label


def _lm_eval_run(folder: Path, model_name: str) -> None:
    folder.mkdir(parents=True)
    t = "2026-11-26T07-00-00.000000"
    (folder / f"results_{t}.json").write_text(json.dumps(
        {"model_name": model_name, "config": {"model_args": f"pretrained={model_name}"}, "results": {}}))
    (folder / f"samples_dbb_sg_{t}.jsonl").write_text(json.dumps(
        {"doc_id": 0, "doc": {}, "resps": [[[-1.0, False]]], "filtered_resps": [[-1.0, False]]}) + "\n")


def test_lm_eval_records_are_labelled_by_model_name_not_path(tmp_path) -> None:
    from stereoprobe.inputs.lm_eval import iter_lm_eval_samples

    run = tmp_path / "__root__.cache__huggingface__hub__models--HuggingFaceTB--SmolLM2-135M-Instruct"
    _lm_eval_run(run, HUB)
    [rec] = list(iter_lm_eval_samples([tmp_path]))
    assert rec.model == "HuggingFaceTB/SmolLM2-135M-Instruct"


def test_term_based_lm_eval_rows_are_labelled_by_model_name(tmp_path) -> None:
    from stereoprobe.dbb.term_based import _lm_eval_rows

    data = {"config": {"model_args": f"pretrained={HUB},dtype=float32"},
            "results": {"crows_pairs_english": {"pct_stereotype,none": 0.6}}}
    rows = _lm_eval_rows(tmp_path / "results_x.json", data)
    assert rows and {r["model"] for r in rows} == {"HuggingFaceTB/SmolLM2-135M-Instruct"}


def test_run_info_command_is_shell_quoted(tmp_path) -> None:
    from stereoprobe.report.run_info import command_line, set_command_line, write_run_info

    argv = ["stereoprobe", "associations", "logs/my logs", "--out", str(tmp_path), "--note", "it's a demo; $HOME"]
    set_command_line(argv)
    try:
        path = write_run_info(tmp_path, probe="x")
        assert command_line("associations") == shlex.join(argv) and command_line("dbb") is None
    finally:
        set_command_line(None)
    info = json.loads(path.read_text())
    assert shlex.split(info["command"]) == argv  # pasted back into a shell, the same words
    assert "command" not in json.loads(write_run_info(tmp_path / "b", probe="x").read_text())  # outside the CLI


def _figure_sections(*titles: str) -> list:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from stereoprobe.report.html import Section

    sections = []
    for title in titles:
        fig, ax = plt.subplots()
        ax.plot([0, 1], [1, 0])
        sections.append(Section(title).figure(fig, caption="P(A) per category"))  # the same caption each time
    return sections


def test_figures_saved_as_png_beside_the_report_and_svg_on_request(tmp_path) -> None:
    from stereoprobe.report.html import write_report

    path = write_report(tmp_path / "report.html", "t", _figure_sections("one", "two"))
    names = sorted(p.name for p in (tmp_path / "figures").iterdir())
    assert names == ["report-p-a-per-category-2.png", "report-p-a-per-category.png"]  # PNG only by default
    assert (tmp_path / "figures" / "report-p-a-per-category.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = path.read_text()
    for n in names:
        assert f'href="figures/{n}"' in html
    assert ".svg" not in html and "stereoprobe-figure-" not in html  # every placeholder replaced by its link
    both = tmp_path / "svg"
    html = write_report(both / "report.html", "t", _figure_sections("one", "two"), svg=True).read_text()
    names = sorted(p.name for p in (both / "figures").iterdir())
    assert names == ["report-p-a-per-category-2.png", "report-p-a-per-category-2.svg",
                     "report-p-a-per-category.png", "report-p-a-per-category.svg"]
    assert "<svg" in (both / "figures" / "report-p-a-per-category.svg").read_text()
    for n in names:
        assert f'href="figures/{n}"' in html
    # a page built from demo settings: its figure files say DEMO in their names too (issue 42.10)
    demo = tmp_path / "demo"
    write_report(demo / "report.html", "t", _figure_sections("one"), demo="demo settings", svg=True)
    assert sorted(p.name for p in (demo / "figures").iterdir()) == ["DEMO-report-p-a-per-category.png",
                                                                     "DEMO-report-p-a-per-category.svg"]


def test_svg_choice_read_from_the_folders_run_info(tmp_path) -> None:
    """``svg`` unset: the folder's run_info.json decides (a report rebuilt from its folder keeps the choice)."""
    from stereoprobe.report.html import SVG_KEY, write_report

    (tmp_path / "run_info.json").write_text(json.dumps({"probe": "x", SVG_KEY: True}))
    write_report(tmp_path / "report.html", "t", _figure_sections("one"))
    assert sorted(p.suffix for p in (tmp_path / "figures").iterdir()) == [".png", ".svg"]
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "run_info.json").write_text(json.dumps({"probe": "x", SVG_KEY: "yes"}))  # only true asks
    write_report(tmp_path / "b" / "report.html", "t", _figure_sections("one"))
    assert [p.suffix for p in (tmp_path / "b" / "figures").iterdir()] == [".png"]


def test_profiles_summary_counts_no_placeholder_row() -> None:
    from stereoprobe.globalbias.profiles_report import ProfilesResult

    placeholder = pd.DataFrame({"model": ["m"], "Group": [None], "name": [None]})
    assert ProfilesResult(tables={}, profiles=placeholder).summary() == "0 parsed profile(s) of 1 model(s)"
    two = pd.DataFrame({"model": ["m", "m", "n"], "Group": ["ARAB_F", "CHINESE_M", None], "name": ["a", "b", None]})
    assert ProfilesResult(tables={}, profiles=two).summary() == "2 parsed profile(s) of 2 model(s)"


def test_figure_file_names_are_cut_at_a_word_boundary() -> None:
    """Issue 35.9: a long caption's file name keeps whole words and ends in a hash of the whole caption."""
    from stereoprobe.report.html import _slug

    caption = "StereoTales attribute distributions per language: small multiples of every compared attribute"
    name = _slug(caption)
    words = set(caption.lower().replace(":", "").split())
    *kept, tag = name.split("-")
    assert len(name) <= 60 and kept and all(w in words for w in kept) and len(tag) == 6
    assert _slug(caption + " again") != name  # two long captions with one beginning get two names
    assert _slug("P(A) per category") == "p-a-per-category"  # a short caption as before
