"""``stereoprobe globalbias`` on a grouped log: the same output folder, byte for byte, whichever way its figures
are rendered, and no inspect import to read the log."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

import stereoprobe.report.render_pool as render_pool
from fake_model import fake_model
from stereoprobe.cli import main
from stereoprobe.tasks.globalbias import globalbias


@pytest.fixture(scope="module")
def grouped_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    logs = tmp_path_factory.mktemp("gb-post") / "logs"
    task = globalbias(source="bundled", groups=["CHINESE", "ARAB"], templates=[1, 2])
    [log] = inspect_eval(task, model=fake_model(), log_dir=str(logs), display="none")
    assert log.status == "success"
    return logs


def _files(folder: Path) -> dict[str, bytes]:
    """Every file of an output folder; ``run_info.json`` without the time and command line of its run."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            data = p.read_bytes()
            if p.name == "run_info.json":
                info = json.loads(data)
                assert info.pop("created") and info.pop("command")
                data = json.dumps(info, sort_keys=True).encode()
            out[str(p.relative_to(folder))] = data
    return out


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="figures are forked on Linux only")
def test_the_output_folder_is_the_same_with_figures_forked_or_drawn_one_by_one(
        grouped_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import stereoprobe.report.html as report_html

    monkeypatch.setattr(report_html, "_TABLE_IDS", [0])  # the page's table ids count from 1 in each run
    monkeypatch.setattr(render_pool, "workers_for", lambda n: 0)  # one after the other, in this process
    assert main(["globalbias", str(grouped_log), "--out", str(tmp_path / "here"), "--quiet"]) == 0
    monkeypatch.setattr(report_html, "_TABLE_IDS", [0])
    monkeypatch.setattr(render_pool, "workers_for", lambda n: 2 if n > 1 else 0)
    assert main(["globalbias", str(grouped_log), "--out", str(tmp_path / "forked"), "--quiet"]) == 0
    here, forked = _files(tmp_path / "here"), _files(tmp_path / "forked")
    assert sum(name.endswith(".png") for name in here) >= 3  # histogram, heatmap, Figure 1 plots
    assert forked == here


@pytest.mark.slow
def test_reading_a_log_imports_no_inspect(grouped_log: Path, tmp_path: Path) -> None:
    code = ("import sys\nfrom stereoprobe.cli import main\n"
            f"assert main(['globalbias', {str(grouped_log)!r}, '--out', {str(tmp_path / 'o')!r}, '--quiet']) == 0\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'inspect_ai')[:3])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
    assert (tmp_path / "o" / "bias_scores.csv").is_file()


@pytest.mark.parametrize("measure", ["token", "byte"])
def test_perplexities_at_once_are_the_per_sentence_perplexities_bit_for_bit(measure: str) -> None:
    import numpy as np

    from stereoprobe.globalbias.inputs import _perplexities, _ppl

    rng = np.random.default_rng(4)
    lp = -rng.gamma(2.0, 12.0, 5000)
    nt = rng.integers(1, 40, 5000).astype(float)
    nb = rng.integers(1, 200, 5000).astype(float)
    nb[::97] = np.nan  # a sentence log without byte counts
    at_once = _perplexities(lp, nt, nb, measure)
    one_by_one = np.array([_ppl(a, b, c, measure) for a, b, c in zip(lp, nt, nb)])
    assert at_once.tobytes() == one_by_one.tobytes()
