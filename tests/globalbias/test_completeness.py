"""GlobalBias completeness from what the run was asked to score (the log header's dataset sample ids and each
grouped sample's texts), not from what arrived: an interrupted log lists every unit it lacks, a group that never
arrived included; a truncated score list lists the descriptors it lost; values outside their domain are one
line naming the file and the field.

The run: the bundled data, groups CHINESE, ARAB, ENGLISH (6 name groups of 3 names, the bundled files), 16
descriptors, templates 1 and 2 (12 grouped samples ``{GROUP}:t{template}``). Expected counts are worked out
by hand from that design, not read from the code under test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from eval_edit import edit_eval, read_member
from fake_model import fake_model
from inspect_ai import eval as inspect_eval

from stereoprobe.cli import main
from stereoprobe.errors import InputError
from stereoprobe.globalbias.completeness import split_complete
from stereoprobe.globalbias.inputs import read_sentences
from stereoprobe.tasks.globalbias import globalbias

SELECTION = {"source": "bundled", "groups": ["CHINESE", "ARAB", "ENGLISH"], "templates": [1, 2]}
NAMES_PER_GROUP = 3  # the bundled name file: 3 names per gender x ethnicity group
DESCRIPTORS = 16  # the bundled descriptor file
GROUPS = ["ARAB_F", "ARAB_M", "CHINESE_F", "CHINESE_M", "ENGLISH_F", "ENGLISH_M"]


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    d = tmp_path_factory.mktemp("gb")
    [log] = inspect_eval(globalbias(**SELECTION), model=fake_model(), log_dir=str(d / "logs"), display="none")
    assert log.status == "success"
    return Path(log.location)


def _incomplete(path):
    sentences, rep = read_sentences([path], measure="byte")
    kept, incomplete = split_complete(sentences, rep.expected)
    return kept, incomplete, rep


def test_clean_run_is_complete(clean) -> None:
    kept, incomplete, rep = _incomplete(clean)
    assert incomplete.empty and rep.missing_samples == {}
    assert len(kept) == len(GROUPS) * NAMES_PER_GROUP * DESCRIPTORS * 2


def test_interrupted_log_lists_every_missing_unit(clean, tmp_path) -> None:
    """ENGLISH_M never arrived (both templates), ARAB_F lost template 2; no header.json (run cut)."""
    lost = {"samples/ENGLISH_M:t1_epoch_1.json", "samples/ENGLISH_M:t2_epoch_1.json", "samples/ARAB_F:t2_epoch_1.json"}
    cut = edit_eval(clean, tmp_path / "cut.eval", drop=lambda n: n in lost, interrupted=True)
    kept, incomplete, rep = _incomplete(cut)
    model = kept["model"].iloc[0]
    assert rep.missing_samples == {model: ["ARAB_F:t2", "ENGLISH_M:t1", "ENGLISH_M:t2"]}
    assert sorted(set(kept["group"])) == ["ARAB_M", "CHINESE_F", "CHINESE_M", "ENGLISH_F"]
    assert len(incomplete) == 2 * DESCRIPTORS  # every descriptor of the two groups, the absent one included
    by_group = incomplete.groupby("group").agg(units=("descriptor", "nunique"), present=("present", "max"),
                                               expected=("expected", "max"))
    assert by_group.loc["ENGLISH_M"].tolist() == [DESCRIPTORS, 0, 2]  # names unknown: one cell per template
    assert by_group.loc["ARAB_F"].tolist() == [DESCRIPTORS, NAMES_PER_GROUP, 2 * NAMES_PER_GROUP]
    assert "3 sample(s) of the runs' datasets never scored" in rep.summary()


def test_cli_writes_the_missing_units(clean, tmp_path, capsys) -> None:
    lost = {"samples/ENGLISH_M:t1_epoch_1.json", "samples/ENGLISH_M:t2_epoch_1.json"}
    edit_eval(clean, tmp_path / "logs" / "cut.eval", drop=lambda n: n in lost, interrupted=True)
    assert main(["globalbias", str(tmp_path / "logs"), "--out", str(tmp_path / "out"), "--measure", "byte"]) == 0
    import pandas as pd

    inc = pd.read_csv(tmp_path / "out" / "incomplete_units.csv")
    assert sorted(set(inc["group"])) == ["ENGLISH_M"] and len(inc) == DESCRIPTORS and (inc["present"] == 0).all()


def _truncate(n_keep: int, keys: tuple[str, ...]):
    def edit(name, s):
        if name == "samples/ARAB_M:t1_epoch_1.json":
            meta = s["scores"]["text_logprobs"]["metadata"]
            for k in keys:
                meta[k] = meta[k][:n_keep]
        return s

    return edit


@pytest.mark.parametrize("keys", [("ids", "sum_logprob", "n_tokens", "n_bytes"), ("sum_logprob",)],
                         ids=["all-score-lists", "one-score-list"])
def test_truncated_score_lists_list_the_lost_descriptors(clean, tmp_path, keys) -> None:
    """ARAB_M:t1 keeps its first 16 results (texts are name-major: its first name with every descriptor)."""
    first = read_member(clean, "samples/ARAB_M:t1_epoch_1.json")["metadata"]["texts"][:DESCRIPTORS]
    assert len({t["name_index"] for t in first}) == 1 and len({t["descriptor_index"] for t in first}) == DESCRIPTORS
    cut = edit_eval(clean, tmp_path / "trunc.eval", sample=_truncate(DESCRIPTORS, keys))
    kept, incomplete, _ = _incomplete(cut)
    assert sorted(set(incomplete["group"])) == ["ARAB_M"] and len(incomplete) == DESCRIPTORS
    # template 2: all 3 names; template 1: the first name only
    assert set(incomplete["present"]) == {NAMES_PER_GROUP + 1} and set(incomplete["expected"]) == {2 * NAMES_PER_GROUP}
    assert "ARAB_M" not in set(kept["group"])


def _set_first(field: str, value):
    def edit(name, s):
        if name == "samples/CHINESE_F:t1_epoch_1.json":
            if field == "template":
                s["metadata"]["template"] = value
            elif field == "texts":
                s["metadata"]["texts"] = value
            elif field == "descriptor":
                s["metadata"]["descriptors"]["0"]["descriptor"] = value
            elif field == "name":
                s["metadata"]["texts"][0]["name"] = value
            else:
                s["scores"]["text_logprobs"]["metadata"][field][0] = value
        return s

    return edit


# (case, field, value, fragment of the one error line)
BAD_VALUES = [
    ("positive-logprob", "sum_logprob", 0.25, "'sum_logprob' is 0.25 > 0"),
    ("logprob-as-text", "sum_logprob", "-3.5", "'sum_logprob' holds '-3.5'"),
    # issue 34.3: a NaN shifted every bias score of its descriptor; -inf made an infinite perplexity
    ("nan-logprob", "sum_logprob", float("nan"), "'sum_logprob' is nan, not a finite number"),
    ("minus-inf-logprob", "sum_logprob", float("-inf"), "'sum_logprob' is -inf, not a finite number"),
    ("token-count-a-list", "n_tokens", [3], "'n_tokens' holds [3]"),
    ("template-outside-the-run", "template", 3, "'template' is 3, not one of the run's templates [1, 2]"),
    ("template-as-text", "template", "1", "'template' is '1'"),
    ("texts-not-a-list", "texts", "all", "'texts' is not a list of objects"),
    ("descriptor-a-list", "descriptor", ["kind", "nice"], "field 'descriptor' is ['kind', 'nice'], expected text"),
    ("name-a-number", "name", 7, "field 'name' is 7, expected text"),
]


@pytest.mark.parametrize("case,field,value,fragment", BAD_VALUES, ids=[c[0] for c in BAD_VALUES])
def test_values_outside_their_domain_are_one_line(clean, tmp_path, capsys, case, field, value, fragment) -> None:
    bad = edit_eval(clean, tmp_path / "logs" / f"{case}.eval", sample=_set_first(field, value))
    with pytest.raises(InputError) as err:
        read_sentences([bad], measure="byte")
    assert f"{case}.eval: sample 'CHINESE_F:t1'" in str(err.value) and fragment in str(err.value)
    assert main(["globalbias", str(tmp_path / "logs"), "--out", str(tmp_path / "out")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0] and not (tmp_path / "out").exists()


def test_repeated_rows_in_tables(tmp_path) -> None:
    rows = "model,group,name,descriptor,template,ppl\n" + "".join(
        f"m,ARAB_F,{n},kind,{t},{10 + n + t}\n" for n in range(2) for t in (1, 2, 3))
    same = tmp_path / "same.csv"
    same.write_text(rows + "m,ARAB_F,0,kind,1,11\n")
    df, rep = read_sentences([same])
    assert len(df) == 6 and rep.duplicates == 1
    other = tmp_path / "conflict.csv"
    other.write_text(rows + "m,ARAB_F,0,kind,1,99\n")
    with pytest.raises(InputError, match=r"conflict\.csv: model 'm' group 'ARAB_F' .* template 1 appears 2 times"):
        read_sentences([other])
    outside = tmp_path / "template4.csv"
    outside.write_text(rows + "m,ARAB_F,0,kind,4,12\n")
    with pytest.raises(InputError, match=r"template4\.csv: column 'template' is not one of the templates \[1, 2, 3\]"):
        read_sentences([outside])


def test_the_first_half_of_a_limit_run_is_not_scored_as_complete(tmp_path) -> None:
    """``inspect eval --limit 6``: the header lists 6 of the 12 grouped samples; the other 6 are listed as
    incomplete units (a group with one template of two, or none) and the run is reported partial."""
    [log] = inspect_eval(globalbias(**SELECTION), model=fake_model(), log_dir=str(tmp_path / "logs"),
                         display="none", limit=6)
    kept, incomplete, rep = _incomplete(Path(log.location))
    ids = [str(i) for i in log.eval.dataset.sample_ids]
    assert len(ids) == 6 and log.eval.dataset.samples == 12
    both = sorted(g for g in GROUPS if {f"{g}:t1", f"{g}:t2"} <= set(ids))  # groups with both templates
    assert sorted(set(kept["group"])) == both
    assert sorted(set(incomplete["group"])) == sorted(set(GROUPS) - set(both))
    assert len(incomplete) == (len(GROUPS) - len(both)) * DESCRIPTORS
    model = kept["model"].iloc[0] if len(kept) else incomplete["model"].iloc[0]
    assert len(rep.missing_samples[model]) == 6
    assert "covers 6 of the dataset's 12 samples" in rep.log_stats.summary()


def test_a_group_missing_whole_from_header_and_samples_is_counted(clean, tmp_path) -> None:
    """ENGLISH_M absent from the samples AND the header's sample ids: the run asked for ENGLISH (both
    genders), so its 16 units are listed incomplete, with 0 present."""
    lost = {"ENGLISH_M:t1", "ENGLISH_M:t2"}
    from eval_edit import set_path

    header = read_member(clean, "header.json")
    keep = [i for i in header["eval"]["dataset"]["sample_ids"] if i not in lost]
    cut = edit_eval(clean, tmp_path / "cut.eval", drop=lambda n: any(n == f"samples/{i}_epoch_1.json" for i in lost),
                    header=lambda h: set_path(set_path(h, "eval.dataset.sample_ids", keep), "eval.dataset.samples", 10))
    kept, incomplete, rep = _incomplete(cut)
    assert sorted(set(incomplete["group"])) == ["ENGLISH_M"] and len(incomplete) == DESCRIPTORS
    assert (incomplete["present"] == 0).all()
    assert "ENGLISH_M" not in set(kept["group"])
