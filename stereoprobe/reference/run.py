"""``stereoprobe reference``: the project's own commands run on the papers' published model outputs.

Steps (:func:`run_reference`): obtain the upstream outputs at the pinned commits through
:mod:`stereoprobe.upstream` (checksummed; offline from ``$STEREOPROBE_UPSTREAM_DIR``), all of them before anything
is written; copy them, named by the model the paper names, under ``OUT/upstream/``; run what ``stereoprobe
globalbias`` runs on the Llama 3 8B APX results, what ``stereoprobe profiles`` runs on the four models' character
profiles (with Table 8's consistency against the APX results) and what ``stereoprobe leaderboard`` runs on those
models, through the same library functions (each step's ``run_info.json`` records the equivalent command);
compare every printed figure with ours (:mod:`stereoprobe.reference.compare`) into ``OUT/paper_vs_stereoprobe/``;
end with the index of ``OUT``. The whole folder replaces ``OUT`` in one step
(:func:`stereoprobe.outputs.atomic_output_dir`).
"""

from __future__ import annotations

import json
import shlex
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from stereoprobe import upstream
from stereoprobe.errors import InputError
from stereoprobe.inputs import Step, no_step
from stereoprobe.outputs import atomic_output_dir
from stereoprobe.reference.figures import paper_figures
from stereoprobe.reference.options import ReferenceOptions
from stereoprobe.reference.page import write_comparison
from stereoprobe.report.run_info import command_line, set_command_line

__all__ = ["GLOBALBIAS", "ReferenceOptions", "ReferenceRun", "model_id", "obtain_upstream", "run_reference"]

GLOBALBIAS = "GlobalBias"  # the upstream source key (stereoprobe/upstream_sources.yaml)
STEPS = ("globalbias", "globalbias_profiles", "leaderboard", "paper_vs_stereoprobe")


class UpstreamMissing(InputError):
    """The upstream outputs are neither in ``$STEREOPROBE_UPSTREAM_DIR``, nor cached, nor downloadable."""


@dataclass(frozen=True)
class ReferenceRun:
    """What a run wrote: the output folder, the comparison rows and the upstream files it read."""

    out: Path
    comparison: pd.DataFrame
    files: dict[str, Path]


def model_id(label: str) -> str:
    """The model name stereoprobe's tables use for a model the paper names (``Llama 3 8B`` -> ``Llama-3-8B``)."""
    return label.replace(" ", "-")


def _needed() -> dict[str, str]:
    figs = paper_figures()
    return {**figs.apx_models, **figs.profile_models}


def obtain_upstream() -> dict[str, Path]:
    """Every upstream output the reference run reads, verified: {pinned path: local path}.

    Raises :class:`UpstreamMissing` (one line: which folder to point ``$STEREOPROBE_UPSTREAM_DIR`` at) when a file
    is neither in that folder, nor cached, nor downloadable; a file that fails its checksum keeps
    :class:`~stereoprobe.upstream.UpstreamDataError`'s own message."""
    src = upstream.sources()[GLOBALBIAS]
    found: dict[str, Path] = {}
    for path in _needed():
        try:
            found[path] = upstream.fetch(GLOBALBIAS, path)
        except upstream.UpstreamDataError as exc:
            if "checksum mismatch" in str(exc):
                raise
            raise UpstreamMissing(
                f"the upstream model outputs are not available here ({path} missing): point "
                f"{upstream.MIRROR_ENV} at a folder holding {GLOBALBIAS}/results/3_llama_3_results.csv and "
                f"{GLOBALBIAS}/data/10a_{{llama3,gpt3,claude,gpt4o}}_full.csv "
                f"({src.repository} @ {src.commit[:12]}); cause: {' '.join(str(exc).split())}") from None
    return found


@contextmanager
def _recorded_as(argv: list[str]) -> Iterator[None]:
    """Within the block, ``run_info.json`` records ``stereoprobe ARGV`` (the command the step is equivalent to);
    the running command line is restored afterwards."""
    previous = command_line()
    set_command_line(["stereoprobe", *argv])
    try:
        yield
    finally:
        set_command_line(shlex.split(previous) if previous else None)


def _step(argv: list[str], run: Callable[[], object], step: Step = no_step) -> None:
    """Run one step (``run``), recorded as the command ``argv``, inside ``step`` (the command line prints a
    line per step); bad input names the step."""
    with step(f"reference: stereoprobe {argv[0]}"), _recorded_as(argv):
        try:
            run()
        except InputError as exc:
            raise InputError(f"stereoprobe {argv[0]} on the upstream outputs: {exc}") from None


def _run_steps(build: Path, apx: list[Path], profiles: list[Path], opts: ReferenceOptions,
               step: Step = no_step) -> None:
    """GlobalBias on the APX results, the character profiles and the leaderboard, into ``build``."""
    from stereoprobe.globalbias import GlobalBiasOptions, ProfilesOptions, analyze, analyze_profiles, write
    from stereoprobe.leaderboard import build_leaderboard, write_leaderboard

    gb_out, pr_out, lb_out = build / "globalbias", build / "globalbias_profiles", build / "leaderboard"
    _step(["globalbias", *map(str, apx), "--out", str(gb_out)],
          lambda: write(analyze(apx, GlobalBiasOptions()), gb_out), step)
    profiles_options = ProfilesOptions(n_permutations=opts.permutations, folds=opts.folds)
    _step(["profiles", *map(str, profiles), "--apx", str(gb_out), "--out", str(pr_out),
           "--permutations", str(opts.permutations), "--folds", str(opts.folds)],
          lambda: write(analyze_profiles(profiles, profiles_options, apx_scores=gb_out), pr_out), step)
    _step(["leaderboard", str(gb_out), str(pr_out), "--out", str(lb_out), "--n-boot", str(opts.n_boot),
           "--seed", str(opts.seed)],
          lambda: write_leaderboard(build_leaderboard([gb_out, pr_out], n_boot=opts.n_boot, seed=opts.seed), lb_out),
          step)


def _relocate_records(build: Path, out: Path) -> None:
    """The steps ran in the build folder beside ``out``: their run_info.json name ``out``, where they end up."""
    for info in build.rglob("run_info.json"):
        text = info.read_text(encoding="utf-8")
        info.write_text(text.replace(json.dumps(str(build))[1:-1], json.dumps(str(out))[1:-1]), encoding="utf-8")


def run_reference(out: str | Path, options: ReferenceOptions | None = None, command: str | None = None,
                  step: Step = no_step) -> ReferenceRun:
    """Write the reference reports to ``out`` (see the module docstring); nothing is written when an upstream
    file is missing. ``step``: wraps each step (the command line prints a line as each starts and ends)."""
    from stereoprobe.report.index import build_index

    opts = options or ReferenceOptions()
    files = obtain_upstream()  # unwrapped: a missing file stays one line on the console
    figs = paper_figures()
    out = Path(out).absolute()
    with atomic_output_dir(out, owner="reference") as build:
        staged = build / "upstream"
        staged.mkdir()
        copies: dict[str, Path] = {}
        for path, label in {**figs.apx_models, **figs.profile_models}.items():
            copies[path] = staged / f"{model_id(label)}{Path(path).suffix}"
            shutil.copyfile(files[path], copies[path])
        _run_steps(build, [copies[p] for p in figs.apx_models], [copies[p] for p in figs.profile_models], opts,
                   step)
        models = {Path(p).stem.removeprefix("10a_").removesuffix("_full"): model_id(label)
                  for p, label in figs.profile_models.items()}
        with step("reference: paper vs stereoprobe comparison"):
            comparison = write_comparison(build, build / "paper_vs_stereoprobe", models, files, opts, command)
        _relocate_records(build, out)
        for lock in build.rglob(".*.lock"):
            lock.unlink()
        index = build_index(build)  # titled by the build folder's name: named after OUT, where it ends up
        index.write_text(index.read_text(encoding="utf-8").replace(build.name, out.name), encoding="utf-8")
    return ReferenceRun(out=out, comparison=comparison, files=files)
