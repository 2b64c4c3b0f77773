"""Expansion of DBB question templates (paper §3 and Table 5; upstream src/questions_final.ipynb)."""

from __future__ import annotations

from collections import Counter

import pytest

from stereoprobe.dbb import data as D

# Paper Table 5: groups per category, descriptor types, test instances per template and type.
GROUPS = {"age": 2, "gender": 2, "race": 5, "ses": 2, "religion": 4}
TYPES = {"age": 3, "gender": 4, "race": 4, "ses": 2, "religion": 3}
PAIRS = {"age": 1, "gender": 1, "race": 10, "ses": 1, "religion": 6}


def _check_counts(templates, descriptors):
    n = len(templates)
    qs = D.expand(templates, descriptors)
    inst = D.pair_instances(qs, descriptors)
    q_per_type = Counter((q.category, q.type) for q in qs)
    i_per_type = Counter((i.category, i.type) for i in inst)
    for cat in GROUPS:
        for t in range(1, TYPES[cat] + 1):
            assert q_per_type[(cat, t)] == n * GROUPS[cat], (cat, t)
            assert i_per_type[(cat, t)] == n * PAIRS[cat], (cat, t)
    assert len(q_per_type) == 16 and len(i_per_type) == 16
    assert len(qs) == 50 * n and len(inst) == 67 * n
    assert len({q.id for q in qs}) == len(qs) and len({i.id for i in inst}) == len(inst)
    return qs, inst


def test_expansion_counts_bundled():
    ts = D.bundled_templates()
    assert len(ts) >= 8
    _check_counts(ts, D.bundled_descriptors())


@pytest.mark.refdata
def test_expansion_counts_upstream(refdata):
    ts = D.load_upstream_templates(local=refdata)
    assert len(ts) == 1547
    qs, inst = _check_counts(ts, D.load_upstream_descriptors(local=refdata))
    assert len(qs) == 77_350 and len(inst) == 103_649  # paper Table 5: 77,350 questions, 103,649 instances (pairs)
    per_cat = Counter(i.category for i in inst)
    assert per_cat == {"age": 4641, "gender": 6188, "race": 61880, "ses": 3094, "religion": 27846}  # Table 5
    # 3 upstream s1 options carry no placeholder
    flagged = {q.template_id for q in qs if "option_a_no_placeholder" in q.flags}
    assert len(flagged) == 3


@pytest.mark.refdata
def test_upstream_descriptors_match_bundled(refdata):
    assert D.load_upstream_descriptors(local=refdata) == D.bundled_descriptors()


def test_paper_type_numbering():
    d = D.bundled_descriptors()
    # paper Table 10 vs descriptors.json order: paper Gender 3 = JSON 3 (Emily/John), Race 3 = names only,
    # Religion 1 = practices (JSON 2)
    assert d.type_of("gender", 3).descriptors["female"].text == "Emily"
    assert d.type_of("gender", 4).json_index == 2
    assert d.type_of("race", 3).descriptors["asian"].text == "Aki"
    assert d.type_of("religion", 1).json_index == 2
    assert "Bible study" in d.type_of("religion", 1).descriptors["Christian"].text


T = D.QuestionTemplate("t1", "After work, [[X]] sat down.", "[[X]]'s phone rang and [[X]] left.",
                       "With a sigh, [[X]] stayed.")
T_NOX = D.QuestionTemplate("t2", "[[X]] waited.", "The bus was late.", "[[X]] walked home.")


def _q(qs, qid):
    return next(q for q in qs if q.id == qid)


def test_substitution_default_fixes_case_and_both_forms():
    qs = D.expand([T])
    q = _q(qs, "t1:gender:1:female")
    assert q.context == "After work, Mother sat down."
    assert q.option_a == "Her phone rang and she left."
    assert q.option_b == "With a sigh, she stayed."
    q = _q(qs, "t1:age:3:old")
    assert q.context == "After work, the old man sat down."
    q = _q(qs, "t1:race:4:asian")
    assert q.context == "After work, Yue, an American-Born Chinese, sat down."


def test_substitution_faithful_reproduces_upstream():
    qs = D.expand([T], faithful=True)
    q = _q(qs, "t1:gender:1:female")
    assert q.option_a == "Her phone rang and [[X]] left."  # only the possessive is replaced upstream
    assert q.option_b == "With a sigh, She stayed."
    q = _q(qs, "t1:race:4:asian")
    assert q.context == "After work, Yue, an American-Born Chinese,  sat down."


def test_stale_option_bug_only_when_faithful():
    fixed = D.expand([T, T_NOX])
    q = _q(fixed, "t2:gender:1:male")
    assert q.option_a == "The bus was late." and "option_a_no_placeholder" in q.flags
    faithful = D.expand([T, T_NOX], faithful=True)
    last_of_t1 = [q for q in faithful if q.template_id == "t1"][-1]  # upstream row order: religion JSON 2 last
    assert last_of_t1.category == "religion" and last_of_t1.json_index == 2 and last_of_t1.group == "Buddhist"
    for q in faithful:
        if q.template_id == "t2":
            assert q.option_a == last_of_t1.option_a  # the previous row's option, reused (upstream stale variable)


def test_names_seeded_and_subset_stable():
    a = D.expand([T, T_NOX], seed=3)
    b = D.expand([T_NOX], seed=3)
    assert [q for q in a if q.template_id == "t2"] == b
    draws = {D.draw_name(s, "t1", "ses", 1, D.bundled_descriptors().names)[0] for s in range(60)}
    assert len(draws) >= 8  # the seed changes the draw
    ses = [q for q in a if q.category == "ses" and q.type == 1 and q.template_id == "t1"]
    assert {q.group for q in ses} == {"poor", "rich"} and len({q.name for q in ses}) == 1


def test_race_pronouns_faithful_use_white_entry():
    d = D.bundled_descriptors()
    # make the black entry of type 3 female to see which pronouns the options take
    import dataclasses
    t3 = d.type_of("race", 3)
    descs = dict(t3.descriptors)
    descs["black"] = dataclasses.replace(descs["black"], pronouns=("She", "Her"))
    types = {**d.types, "race": tuple(dataclasses.replace(t, descriptors=descs) if t.type == 3 else t
                                       for t in d.types["race"])}
    d2 = dataclasses.replace(d, types=types)
    q_fixed = _q(D.expand([T], d2), "t1:race:3:black")
    q_faith = _q(D.expand([T], d2, faithful=True), "t1:race:3:black")
    assert q_fixed.option_b == "With a sigh, she stayed."
    assert q_faith.option_b == "With a sigh, He stayed."


def test_clear_errors(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("foo,bar\n1,2\n")
    with pytest.raises(D.DBBDataError, match="bad.csv.*expected columns"):
        D.read_templates_csv(bad)
    nox = tmp_path / "nox.csv"
    nox.write_text("template_id,context,option_a,option_b\nq1,No placeholder here.,a,b\n")
    with pytest.raises(D.DBBDataError, match=r"line 2 \(template q1\): context has no"):
        D.read_templates_csv(nox)
    with pytest.raises(D.DBBDataError, match="neither"):
        D.load_source(str(tmp_path / "missing"))
    with pytest.raises(D.DBBDataError, match="unknown DBB categories"):
        D.expand([T], categories=["caste"])


def test_upstream_offline_error(tmp_path, monkeypatch):
    from stereoprobe.upstream import UpstreamDataError

    monkeypatch.setenv("STEREOPROBE_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("STEREOPROBE_UPSTREAM_DIR", raising=False)
    monkeypatch.delenv("STEREOPROBE_ALLOW_DOWNLOAD", raising=False)
    with pytest.raises(UpstreamDataError, match="local copy"):
        D.load_source("upstream")
    with pytest.raises(UpstreamDataError, match="not found under the local folder"):
        D.load_upstream_templates(local=tmp_path)


def test_variations_bundled():
    ts = D.bundled_templates()
    v = D.bundled_variations(ts)
    assert all(len(x) == 3 and x[0].variation == 0 for x in v.values())
    assert v["sp01"][0].option_a == ts[0].option_a
