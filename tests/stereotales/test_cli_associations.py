from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

sys.path.insert(0, str(Path(__file__).parent))
from _stories_fixtures import ATTRS, planted_stories, release_rows, story_sample, write_log  # noqa: E402

from stereoprobe.cli import main  # noqa: E402

CONTRACT_E = ["model", "slice", "base_attribute", "base_value", "compared_attribute", "compared_value", "n",
              "fraction", "lift", "lift_ci_low", "lift_ci_high", "p_by", "cramers_v", "effect"]
BASIC = "basic (e.g. less than high school, or high school)"
PLANTED = ("income_level", "low income", "education", BASIC)


@pytest.fixture(scope="module")
def planted() -> pd.DataFrame:
    return planted_stories(per_cell=20)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, planted) -> Path:
    d = tmp_path_factory.mktemp("assoc")
    release_rows(planted, ATTRS).to_parquet(d / "stories.parquet")
    out = d / "out"
    assert main(["associations", str(d / "stories.parquet"), "--out", str(out), "--by-language"]) == 0
    return out


def independent_cell_stats(frame: pd.DataFrame, model: str, min_row_sum: int = 10) -> dict:
    """fraction, lift and BY-adjusted one-sided Fisher p of every cell, computed with pandas/scipy/statsmodels."""
    sub = frame[(frame.model == model) & (frame.target_attribute == "income_level")]
    sub = sub[~sub.education.isin(["unknown", "other"])]
    ct = pd.crosstab(sub.income_level, sub.education)
    ct = ct[ct.sum(axis=1) >= min_row_sum]
    ct = ct.loc[:, ct.sum(axis=0) > 0]
    n = ct.to_numpy().sum()
    out, pvals = {}, []
    for a in ct.index:
        for b in ct.columns:
            k = ct.loc[a, b]
            r, c = ct.loc[a].sum(), ct[b].sum()
            p = stats.fisher_exact([[k, r - k], [c - k, n - r - c + k]], alternative="greater").pvalue
            pvals.append(p)
            out[(a, b)] = {"n": n, "fraction": k / r, "lift": k / (r * c / n)}
    adj = multipletests(pvals, method="fdr_by")[1]
    for key, p in zip(out, adj):
        out[key]["p_by"] = p
    return out


def test_associations_csv_has_contract_columns_and_finds_the_planted_association(run_dir, planted) -> None:
    df = pd.read_csv(run_dir / "associations.csv")
    assert list(df.columns[: len(CONTRACT_E)]) == CONTRACT_E
    pq = pd.read_parquet(run_dir / "associations.parquet")
    assert list(pq.columns) == list(df.columns) and len(pq) == len(df)
    glob = df[df.slice == "all"]
    # exactly the planted association, for both models, in the global run (the rest is independent noise)
    assert {tuple(r) for r in glob[["base_attribute", "base_value", "compared_attribute", "compared_value"]].values} == {PLANTED}
    assert sorted(glob.model) == ["prov1/m1", "prov2/m2"]
    for row in glob.itertuples():
        ref = independent_cell_stats(planted, row.model)[("low income", BASIC)]
        assert row.n == ref["n"]
        assert row.fraction == pytest.approx(ref["fraction"], rel=1e-12)
        assert row.lift == pytest.approx(ref["lift"], rel=1e-12)
        assert row.p_by == pytest.approx(ref["p_by"], rel=1e-9)
        assert row.lift >= 2 and row.effect in ("medium", "large") and row.lift_ci_low < row.lift < row.lift_ci_high


def test_across_models_and_explorer(run_dir) -> None:
    df = pd.read_csv(run_dir / "associations.csv")
    across = pd.read_csv(run_dir / "associations_across_models.csv")
    row = across[(across.slice == "all") & (across.base_value == "low income") & (across.compared_value == BASIC)]
    assert len(row) == 1
    g = df[(df.slice == "all")]
    assert row.models_count.item() == 2 and row.models_total.item() == 2
    assert row.mean_percentage.item() == pytest.approx(round(100 * g.fraction.mean(), 1))
    assert row.mean_lift.item() == pytest.approx(round(g.lift.mean(), 3))
    ex = pd.read_csv(run_dir / "explorer_global.csv")
    assert set(ex.models) == {"2/2"}
    m = ex.merge(g, on=["model", "base_attribute", "base_value", "compared_attribute", "compared_value"], suffixes=("", "_a"))
    assert len(m) == len(g) == 2
    assert (m.percentage == (100 * m.fraction).round(1)).all() and (m.lift == m.lift_a).all()


def test_per_language_outputs(run_dir) -> None:
    df = pd.read_csv(run_dir / "associations.csv")
    assert set(df.slice) <= {"all", "en", "fr"}
    jac = pd.read_csv(run_dir / "language_jaccard.csv").set_index("language")
    by_lang = pd.read_csv(run_dir / "associations_by_language.csv")
    sets = {L: {tuple(r) for r in df[df.slice == L][["base_attribute", "base_value", "compared_attribute", "compared_value"]].values}
            for L in ("en", "fr")}
    union = sets["en"] | sets["fr"]
    expect = len(sets["en"] & sets["fr"]) / len(union) if union else np.nan
    assert jac.loc["en", "fr"] == pytest.approx(expect, nan_ok=True)
    for r in by_lang.itertuples():
        key = (r.base_attribute, r.base_value, r.compared_attribute, r.compared_value)
        assert r.languages_count == sum(key in s for s in sets.values())


def test_distribution_rate_and_example_tables(run_dir, planted) -> None:
    dist = pd.read_csv(run_dir / "attribute_distributions.csv")
    d = dist[(dist.model == "prov1/m1") & (dist.language == "all") & (dist.attribute == "gender")]
    sub = planted[(planted.model == "prov1/m1") & (planted.target_attribute != "gender")]
    expect = sub.gender.value_counts()
    assert dict(zip(d.value, d["count"])) == expect.to_dict()
    unk = pd.read_csv(run_dir / "unknown_rates.csv")
    u = unk[(unk.model == "prov1/m1") & (unk.language == "en") & (unk.attribute == "gender")]
    s2 = sub[sub.language == "en"]
    assert u.unknown_rate.item() == pytest.approx((s2.gender == "unknown").mean())
    ref = pd.read_csv(run_dir / "refusal_rates.csv")
    tot = ref[(ref.language == "all") & (ref.target_attribute == "all")].set_index("model")
    assert tot.loc["prov1/m1", "stories"] == (planted.model == "prov1/m1").sum()
    ex = pd.read_csv(run_dir / "association_examples.csv")
    assert len(ex) > 0
    assert (ex[ex.slice == "all"].groupby("model").language.nunique() == 2).all()  # spread over languages
    # each example story really shows its association
    stories = planted.set_index(["model", "sample_id"])
    for e in ex.itertuples():
        s = stories.loc[(e.model, e.sample_id)]
        assert s.attribute_value_key == e.base_value and s[e.compared_attribute] == e.compared_value
        assert e.excerpt.startswith(f"Story {e.sample_id}")
    info = json.loads((run_dir / "run_info.json").read_text())
    assert info["stories"] == len(planted) and info["config"]["min_row_sum"] == 10
    from stereoprobe.stereotales.mining.associations import MiningConfig, config_dict

    assert info["config"] == config_dict(MiningConfig())  # no option given: the engine's (paper) defaults
    assert sum(info["p_methods"].values()) == len(pd.read_csv(run_dir / "pair_tests.csv"))
    assert (run_dir / "report.html").is_file()


def test_logs_end_to_end_with_refusals_errors_and_options(tmp_path: Path) -> None:
    frame = planted_stories(models=("mockllm/a",), languages=("en",), per_cell=15, seed=3)
    samples = []
    for i, r in enumerate(frame.to_dict("records")):
        prof = {a: r[a] for a in ATTRS}
        samples.append(story_sample(r["sample_id"], attribute=r["target_attribute"], value=r["attribute_value_key"],
                                    profile=prof, refused=(i % 40 == 0), error="api down" if i % 45 == 1 else None,
                                    story=f"Tale of {r['sample_id']}."))
    write_log(tmp_path / "logs" / "run.eval", samples)
    out = tmp_path / "out"
    rc = main(["associations", str(tmp_path / "logs"), "--out", str(out), "--min-row-sum", "5", "--family", "run",
               "--p-method", "asymptotic", "--examples", "2", "--note", "test settings"])
    assert rc == 0
    info = json.loads((out / "run_info.json").read_text())
    n_err = sum(1 for i in range(len(frame)) if i % 45 == 1)
    n_ref = sum(1 for i in range(len(frame)) if i % 40 == 0 and i % 45 != 1)
    assert info["issues"] == {"error": n_err} and info["refused"] == n_ref and info["stories"] == len(frame) - n_err
    assert info["config"]["min_row_sum"] == 5 and info["config"]["fdr_family"] == "run"
    assert set(info["p_methods"]) == {"asymptotic"}
    assoc = pd.read_csv(out / "associations.csv")
    assert (assoc[["base_attribute", "base_value", "compared_attribute", "compared_value"]].apply(tuple, axis=1) == PLANTED).any()
    ex = pd.read_csv(out / "association_examples.csv")
    assert ex.groupby(["association_id", "model", "slice"]).size().max() <= 2
    assert all(e == f"Tale of {s}." for e, s in zip(ex.excerpt, ex.sample_id))
    ref = pd.read_csv(out / "refusal_rates.csv")
    tot = ref[(ref.language == "all") & (ref.target_attribute == "all")].iloc[0]
    assert tot.refused == n_ref and tot.errored == n_err
    assert "test settings" in (out / "report.html").read_text()


def test_bad_inputs_exit_2_with_a_message(tmp_path: Path, capsys) -> None:
    (tmp_path / "r.csv").write_text("generator_model,language\nm,en\n")
    assert main(["associations", str(tmp_path / "r.csv"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "r.csv" in err and "attribute_value_key" in err
    assert main(["associations", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2
    assert "no such file" in capsys.readouterr().err
    # an invalid option is an argparse error: one line, exit 2 (stereoprobe's parser no longer raises SystemExit)
    assert main(["associations", str(tmp_path / "r.csv"), "--out", str(tmp_path / "o"), "--p-method", "magic"]) == 2
    assert "--p-method" in capsys.readouterr().err
    assert main(["associations", str(tmp_path / "r.csv"), "--out", str(tmp_path / "o"), "--effects", "huge"]) == 2
    assert "--effects" in capsys.readouterr().err


def test_no_association_still_writes_every_table_with_headers(tmp_path: Path) -> None:
    values = ["man", "woman", "non-binary"]
    samples = [story_sample(f"en:gender:{i % 3}:g:{i}", attribute="gender", value=values[i % 3],
                            profile={a: "unknown" for a in ATTRS}, refused=(i % 5 == 0),
                            extraction_failed=(i % 5 == 1)) for i in range(12)]
    write_log(tmp_path / "logs" / "a.eval", samples)
    out = tmp_path / "out"
    assert main(["associations", str(tmp_path / "logs"), "--out", str(out), "--by-language", "--min-row-sum", "2"]) == 0
    assert (out / "language_jaccard.csv").is_file()
    assert main(["associations", str(tmp_path / "logs"), "--out", str(out), "--min-row-sum", "2"]) == 0
    assert not (out / "language_jaccard.csv").exists()  # a stale table of the earlier run is removed
    assoc = pd.read_csv(out / "associations.csv")
    assert assoc.empty and list(assoc.columns[: len(CONTRACT_E)]) == CONTRACT_E
    assert pd.read_csv(out / "associations_across_models.csv").empty
    ref = pd.read_csv(out / "refusal_rates.csv")
    tot = ref[(ref.language == "all") & (ref.target_attribute == "all")].iloc[0]
    assert (tot.stories, tot.refused, tot.extraction_failed) == (12, 3, 3)  # i%5==0: 0,5,10; i%5==1: 1,6,11
    assert tot.extraction_failure_rate == pytest.approx(3 / 9)
    assert "No association passes the filter" in (out / "report.html").read_text()


def test_a_results_folder_given_for_logs_is_named_as_such_with_its_logs(tmp_path: Path, capsys) -> None:
    """Issue 42.10: ``associations`` given the output folder of a stereoprobe command (run_info.json beside its
    tables) says so in one line and names the logs that folder was built from, not "no stories table"."""
    from stereoprobe.report.run_info import write_run_info

    folder = tmp_path / "results" / "stereotales"
    write_run_info(folder, "stereotales", inputs=[tmp_path / "logs" / "stereotales"])
    pd.DataFrame({"model": ["m"]}).to_csv(folder / "associations.csv", index=False)
    assert main(["associations", str(folder), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "output folder of a stereoprobe command" in err
    assert f"built from {tmp_path / 'logs' / 'stereotales'}: give those" in err
    assert not (tmp_path / "o").exists()  # nothing half-written


def test_report_figures_are_png_files_and_svg_on_request(run_dir, planted, tmp_path: Path) -> None:
    """PNG only by default; ``--svg`` adds an SVG beside each PNG, linked from the page, and a report rebuilt
    from the folder alone (as the judge step does) keeps the choice (run_info.json)."""
    from stereoprobe.stereotales.mining.report import write_associations_report

    pngs = sorted(p.name for p in (run_dir / "figures").iterdir())
    assert pngs and all(n.endswith(".png") for n in pngs)
    assert all(f'href="figures/{n}"' in (run_dir / "report.html").read_text() for n in pngs)
    release_rows(planted, ATTRS).to_parquet(tmp_path / "stories.parquet")
    out = tmp_path / "out"
    assert main(["associations", str(tmp_path / "stories.parquet"), "--out", str(out), "--svg"]) == 0
    assert json.loads((out / "run_info.json").read_text())["figure_svg"] is True
    for rebuilt in (False, True):
        if rebuilt:
            (out / "figures" / names[0]).unlink()
            write_associations_report(out)
        names = sorted(p.name for p in (out / "figures").iterdir())
        stems = sorted({n.rsplit(".", 1)[0] for n in names})
        assert names == sorted(f"{s}.{x}" for s in stems for x in ("png", "svg")), names
        html = (out / "report.html").read_text()
        assert all(f'href="figures/{n}"' in html for n in names)
