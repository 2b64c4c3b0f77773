"""``stereoprobe reference`` end to end on tiny hand-written upstream-shaped files (tests/reference/upstream_fixture.py):
the upstream source is patched to pin the fixtures' SHA-256, so the checksum path is the real one. Without the
files: one line naming STEREOPROBE_UPSTREAM_DIR, exit code 2, nothing written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from stereoprobe import upstream
from stereoprobe.cli import main
from stereoprobe.reference.docs import END, START, evaluation_reports, section_of
from reference.upstream_fixture import write_upstream

pytestmark = pytest.mark.slow  # three commands on the fixtures (about 20 s of CPU)


def _pin(monkeypatch: pytest.MonkeyPatch, sums: dict[str, str]) -> None:
    real = upstream.sources()["GlobalBias"]
    pinned = upstream.UpstreamSource(key="GlobalBias", repository=real.repository, commit=real.commit, files=sums)
    monkeypatch.setattr(upstream, "sources", lambda: {"GlobalBias": pinned})


@pytest.fixture()
def mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "mirror"
    _pin(monkeypatch, write_upstream(root))
    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(root))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("STEREOPROBE_ALLOW_DOWNLOAD", raising=False)
    monkeypatch.setenv("STEREOPROBE_CACHE", str(tmp_path / "cache"))
    return root


def test_absent_upstream_one_line_nothing_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("STEREOPROBE_ALLOW_DOWNLOAD", raising=False)
    monkeypatch.setenv("STEREOPROBE_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "results" / "reference"
    assert main(["reference", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "point STEREOPROBE_UPSTREAM_DIR at a folder holding GlobalBias/" in err
    # the cause of the failed fetch is kept (issue 42.5): here, not cached and the hub offline
    assert "; cause: " in err and "is not cached and HF_HUB_OFFLINE=1" in err.split("; cause: ")[1]
    assert not (tmp_path / "results").exists()


def test_a_failed_download_keeps_its_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Offline with downloads allowed (as `make reference` runs): the one line keeps the download's own reason
    (here the refused connection of a dead port), not only "missing" (issue 42.5)."""
    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("STEREOPROBE_ALLOW_DOWNLOAD", "1")
    monkeypatch.setenv(upstream.RAW_BASE_ENV, "http://127.0.0.1:9")  # the discard port: nothing listens
    monkeypatch.setenv("STEREOPROBE_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "results" / "reference"
    assert main(["reference", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "point STEREOPROBE_UPSTREAM_DIR at a folder holding GlobalBias/" in err
    cause = err.split("; cause: ")[1]
    assert "could not download" in cause and "http://127.0.0.1:9/" in cause and "Connection refused" in cause
    assert not (tmp_path / "results").exists()


def test_checksum_mismatch_is_refused(mirror: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = mirror / "GlobalBias" / "data" / "10a_gpt3_full.csv"
    path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert main(["reference", "--out", str(tmp_path / "ref")]) == 2
    assert "checksum mismatch" in capsys.readouterr().err
    assert not (tmp_path / "ref").exists()


def test_reference_run_writes_reports_and_docs(mirror: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("globalbias.md", "dbb.md", "stereotales.md"):
        (docs / name).write_text(f"# {name}\n\nHand-written text.\n", encoding="utf-8")
    out = tmp_path / "ref"
    argv = ["reference", "--out", str(out), "--docs", str(docs), "--permutations", "2", "--folds", "2",
            "--n-boot", "50"]
    assert main(argv) == 0
    # off a terminal (pytest's captured stderr is none), each step says when it starts and when it ends
    # (issue 42.5: `make reference` ran 16 minutes with no output in a CI log)
    err = capsys.readouterr().err.splitlines()
    steps = ["reference: stereoprobe globalbias", "reference: stereoprobe profiles",
             "reference: stereoprobe leaderboard", "reference: paper vs stereoprobe comparison"]
    lines = [line for line in err if line.startswith("reference: ")]
    assert lines[0::2] == [f"{step} …" for step in steps]
    assert [re.sub(r"\d+ s$", "N s", line) for line in lines[1::2]] == [f"{step}: done in N s" for step in steps]
    for rel in ("index.html", "globalbias/report.html", "globalbias_profiles/report.html",
                "leaderboard/leaderboard.html", "paper_vs_stereoprobe/report.html",
                "paper_vs_stereoprobe/comparison.csv", "upstream/Llama-3-8B.csv", "upstream/GPT-4o.csv"):
        assert (out / rel).is_file(), rel
    assert not list(out.rglob(".*.lock"))
    # the models are named as the paper names them, in every table
    lb = pd.read_csv(out / "leaderboard" / "leaderboard.csv")
    assert set(lb["model"]) == {"Llama-3-8B", "Llama-3-70B", "GPT-3.5", "Claude-3-Opus", "GPT-4o"}
    # the steps' records name the final folder, not the build folder beside it
    info = json.loads((out / "globalbias" / "run_info.json").read_text(encoding="utf-8"))
    assert info["command"].startswith("stereoprobe globalbias ") and f"{out}/upstream/Llama-3-8B.csv" in info["command"]
    ref_info = json.loads((out / "paper_vs_stereoprobe" / "run_info.json").read_text(encoding="utf-8"))
    assert ref_info["probe"] == "reference" and ref_info["command"].startswith("stereoprobe reference --out")
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "paper_vs_stereoprobe/report.html" in index and "globalbias_profiles/report.html" in index
    assert "stereoprobe results — ref<" in index and ".tmp-" not in index

    rows = pd.read_csv(out / "paper_vs_stereoprobe" / "comparison.csv", keep_default_na=False)
    v = rows.set_index(["figure", "item"])
    # the fixture makes CHINESE_F the only group below the 1 % line for "good at math" (Figure 1's groups)
    assert v.loc[("Figure 1", '"good at math": groups flagged'), "verdict"] == "reproduced exactly"
    # 6 descriptors, not the paper's 730: differs; every row has a verdict of the three kinds
    assert v.loc[("Section 5.1", "descriptors"), ["paper", "stereoprobe", "verdict"]].tolist() == ["730", "6",
                                                                                                   "differs"]
    assert set(rows["verdict"]) <= {"reproduced exactly", "differs"} | {f"within {x}" for x in ("0.05",)}
    page = (out / "paper_vs_stereoprobe" / "report.html").read_text(encoding="utf-8")
    for text in ("Table 9: paper vs stereoprobe", "Table 13: paper vs stereoprobe", "DBB: no upstream model outputs",
                 "StereoTales: no upstream model outputs", "GPT-4o-results.zip"):
        assert text in page, text

    # the docs' marked sections are what the generator gives for this run; the hand-written text stays
    expected = evaluation_reports(out)
    for name, body in expected.items():
        text = (docs / name).read_text(encoding="utf-8")
        assert text.startswith(f"# {name}\n\nHand-written text.\n") and START in text and END in text
        assert section_of(text) == body
    assert "| Llama-3-70B | profiles.svm_accuracy_gender | " in expected["globalbias.md"]
    assert "18.3 % (Table 6)" in expected["globalbias.md"]  # the paper's value beside ours
    # a second run leaves the docs unchanged (the section is replaced, not appended)
    before = {n: (docs / n).read_text(encoding="utf-8") for n in expected}
    assert main(argv) == 0
    assert {n: (docs / n).read_text(encoding="utf-8") for n in expected} == before
