"""Upstream's published name draws (data/Bias-Dataset.csv) rebuild the paper's Age, SES and Religion questions.

The fixtures are written here the way upstream ``src/questions_final.ipynb`` writes its dataset (50 rows per
raw question: age, gender, race, SES, religions; descriptor index in JSON order; groups), with the Context of
each named row typed from the notebook's formulas (``name + "'s " + age descriptor``, ``name + suffix``);
rows without a name are never read for names and hold a filler.
"""

from __future__ import annotations

import csv
import hashlib
import os
from pathlib import Path

import pytest

from stereoprobe import upstream
from stereoprobe.dbb import data as D
from stereoprobe.dbb.published import UPSTREAM_DATASET, published_names

# upstream descriptors.json texts in JSON order (typed from the file; paper Table 10)
AGE_OLD = ["grandmother, who lived in a nursing home,", "grandfather, who had been retired for several years,"]
AGE_YOUNG = ["daughter, a freshman in college,", "son, a GEN-X,"]
SES = {"poor": [", who lived with paycheck to paycheck,", ", who is broke,"],
       "rich": [", who was on the board of several charities,", ", who is wealthy,"]}
RELIGION = {
    "Christian": [", a Christian,", ", who wore a delicate silver cross necklace that rested gently against the "
                  "collarbone,", ", who actively participated in Bible study groups,"],
    "Jewish": [", a Jewish,", ", who often wore a small Star of David pendant and sometimes a kippah,",
               ", who frequently attended Torah study sessions and community gatherings,"],
    "Muslim": [", a Muslim,", ", who wore loose, long-sleeved attire that covered the arms and legs,",
               ", who fasted from dawn to sunset during a special time of the year,"],
    "Buddhist": [", a Buddhist,", ", who wore a string of wooden prayer beads,",
                 ", who practiced vegetarianism out of respect for all living things,"],
}
N_OTHER = {"age": 2, "gender": 8, "race": 20}  # rows without a name: age index 2 (two rows), gender, race


def upstream_rows(context: str, names: dict[str, list[str]]) -> list[str]:
    """The 50 Contexts of one raw question in the notebook's order; ``names`` = {"age": [n0, n1], "ses": [n0,
    n1], "religion": [n0, n1, n2]} by JSON index."""
    rows = []
    for i in range(2):
        rows += [context.replace("[[X]]", names["age"][i] + "'s " + AGE_OLD[i]),
                 context.replace("[[X]]", names["age"][i] + "'s " + AGE_YOUNG[i])]
    rows += ["filler"] * (N_OTHER["age"] + N_OTHER["gender"] + N_OTHER["race"])
    for i in range(2):
        rows += [context.replace("[[X]]", names["ses"][i] + SES[g][i]) for g in ("poor", "rich")]
    for i in range(3):
        rows += [context.replace("[[X]]", names["religion"][i] + RELIGION[r][i]) for r in RELIGION]
    assert len(rows) == 50
    return rows


def write_dataset(path: Path, templates: list[D.QuestionTemplate], names: list[dict[str, list[str]]]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["Context", "ans1", "ans2", "Label", "bias type1", "bias type2", "explanation", "bias_type",
                    "target"])
        for t, nm in zip(templates, names):
            for c in upstream_rows(t.context, nm):
                w.writerow([c, "", "", 1, "", "", "", "", ""])
    return path


NAMES = [{"age": ["Aisha", "Lee"], "ses": ["Taylor", "Kai"], "religion": ["Smith", "Amara", "Donald"]},
         {"age": ["James", "Zhang"], "ses": ["Sofia", "Amari"], "religion": ["Jessica", "Taylor", "Lee"]}]
PRONOUNS = {"Taylor": ("She", "Her"), "Kai": ("He", "His"), "Smith": ("She", "Her"), "Amara": ("She", "Her"),
            "Donald": ("He", "His"), "Sofia": ("She", "Her"), "Amari": ("He", "His"), "Jessica": ("She", "Her"),
            "Lee": ("He", "His")}


def test_published_names_rebuild_the_named_questions(tmp_path):
    ts = D.bundled_templates()[:2]
    desc = D.bundled_descriptors()
    path = write_dataset(tmp_path / "Bias-Dataset.csv", ts, NAMES)
    got = published_names(path, ts, desc)
    assert len(got) == 2 * 7  # age types 1-2, SES 1-2, Religion 1-3 per template
    qs = D.expand(ts, desc, faithful=True, names=got)
    contexts = [row for t, nm in zip(ts, NAMES) for row in upstream_rows(t.context, nm)]
    by_id = {q.id: q for q in qs}
    named = [q for q in qs if q.name is not None]
    assert len(named) == 2 * 20
    for q in named:
        assert q.context in contexts
        nm = NAMES[[t.template_id for t in ts].index(q.template_id)]
        key = {"age": "age", "ses": "ses", "religion": "religion"}[q.category]
        # JSON index of the type -> the name written at that index
        assert q.name == nm[key][q.json_index]
        if q.category != "age":  # SES and religion options take the name's pronouns (age: the descriptor's)
            assert q.pronouns == PRONOUNS[q.name]
    # e.g. template sp01, SES 2 (JSON index 1, "who is broke"): Kai, He
    q = by_id["sp01:ses:2:poor"]
    assert q.context == ts[0].context.replace("[[X]]", "Kai, who is broke,")
    # the default seeded draw is a different mechanism: same ids, names from the seed
    drawn = {q.id: q.name for q in D.expand(ts, desc, faithful=True, seed=0)}
    assert set(drawn) == set(by_id)


def test_published_names_errors_name_the_row(tmp_path):
    ts = D.bundled_templates()[:2]
    desc = D.bundled_descriptors()
    bad = [dict(NAMES[0]), NAMES[1]]
    bad[0] = {**NAMES[0], "ses": ["Nobody", "Kai"]}
    with pytest.raises(D.DBBDataError, match=r"line 36 \(template sp01, ses type 1, poor\).*not the template"):
        published_names(write_dataset(tmp_path / "a.csv", ts, bad), ts, desc)
    with pytest.raises(D.DBBDataError, match="100 rows; expected 1 templates x 50"):
        published_names(write_dataset(tmp_path / "b.csv", ts, NAMES), ts[:1], desc)
    # two groups of one (template, category, type) with different names
    rows = list(csv.reader(open(write_dataset(tmp_path / "c.csv", ts, NAMES), encoding="utf-8")))
    rows[36][0] = ts[0].context.replace("[[X]]", "Lee" + SES["rich"][0])  # rich row of SES 1 (poor: Taylor)
    with open(tmp_path / "c.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    with pytest.raises(D.DBBDataError, match="line 37 .*differs from 'Taylor'"):
        published_names(tmp_path / "c.csv", ts, desc)


def test_names_parameter_and_defaults(tmp_path, monkeypatch):
    from stereoprobe.dbb import questions as Q

    assert Q.name_source("bundled", None) == "draw" and Q.name_source("upstream", None) == "published"
    assert Q.name_source(str(tmp_path), None) == "published"  # a local copy of the upstream repository
    with pytest.raises(D.DBBDataError, match="names=published"):
        Q.name_source("bundled", "published")
    with pytest.raises(D.DBBDataError, match="names"):
        Q.name_source("upstream", "sometimes")
    # offline, nothing cached: the default names the way out
    monkeypatch.setenv("STEREOPROBE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("STEREOPROBE_ALLOW_DOWNLOAD", raising=False)
    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(tmp_path / "empty"))
    from stereoprobe.dbb.published import load_published_names

    with pytest.raises(upstream.UpstreamDataError, match="names=draw"):
        load_published_names(D.bundled_templates(), D.bundled_descriptors())


def _upstream_copy(refdata: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, names: bool) -> Path:
    """A copy of the upstream folder (symlinks to the reference files) with a published dataset written here
    for the 1,547 templates, pinned for the test by its git blob id."""
    key = "Hidden-Bias-Benchmark"
    root = tmp_path / "mirror" / key
    for rel in upstream.sources()[key].files:
        src = refdata / key / rel
        if src.is_file():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            os.symlink(src, root / rel)
    if names:
        ts = D.load_upstream_templates(local=root)
        pool = [n for n, *_ in D.load_upstream_descriptors(local=root).names]
        nm = [{"age": [pool[(r + k) % 12] for k in range(2)], "ses": [pool[(r + 3 + k) % 12] for k in range(2)],
               "religion": [pool[(r + 5 + k) % 12] for k in range(3)]} for r in range(len(ts))]
        (root / UPSTREAM_DATASET).unlink(missing_ok=True)
        path = write_dataset(root / UPSTREAM_DATASET, ts, nm)
        content = path.read_bytes()
        blob = hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()
        monkeypatch.setitem(upstream.sources()[key].files, UPSTREAM_DATASET, upstream.GIT_BLOB + blob)
    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(tmp_path / "mirror"))
    return root


@pytest.mark.refdata
def test_default_task_uses_the_published_names(refdata, tmp_path, monkeypatch):
    from stereoprobe.tasks.dbb import dbb

    _upstream_copy(refdata, tmp_path, monkeypatch, names=True)
    task = dbb(categories="ses", limit_templates=3)
    assert task.metadata["names"] == "published"
    pool = [n for n, *_ in D.load_upstream_descriptors(local=refdata / "Hidden-Bias-Benchmark").names]
    for s in task.dataset:
        r, typ = int(s.metadata["template_id"]), s.metadata["json_index"]
        assert s.metadata["name"] == pool[(r + 3 + typ) % 12]
    assert dbb(categories="ses", limit_templates=3, names="draw").metadata["names"] == "draw"
