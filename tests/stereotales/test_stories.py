from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from _stories_fixtures import release_rows, story_sample, write_log  # noqa: E402

from stereoprobe.stereotales.mining.stories import (  # noqa: E402
    ID_COLUMNS,
    MixedInputsError,
    StoriesError,
    read_stories,
    read_story_excerpts,
)

NA_SEED = "north america (e.g. United States, Canada)"
NA_SCHEMA = "north america (e.g. United States, Canada, etc)"


def prof(**kw: str) -> dict[str, str]:
    base = {"gender": "woman", "geographic_origin": "europe", "income_level": "unknown"}
    base.update(kw)
    return base


def test_log_rows_follow_contract_c(tmp_path: Path) -> None:
    samples = [
        # the extractor read "man" for the base attribute: the prompted value must win
        story_sample("en:gender:0:g:0", attribute="gender", value="woman", profile=prof(gender="man")),
        story_sample("en:geo:0:g:0", attribute="geographic_origin", value=NA_SEED, profile=prof()),
    ]
    write_log(tmp_path / "a.eval", samples)
    st = read_stories([tmp_path])
    df = st.frame.sort_values("sample_id").reset_index(drop=True)
    assert list(df.columns[: len(ID_COLUMNS)]) == list(ID_COLUMNS)
    assert st.attributes == ["gender", "geographic_origin", "income_level"]
    assert df.loc[0, "sample_id"] == "en:gender:0:g:0" and df.loc[0, "gender"] == "woman"
    # seed spelling normalised to the extraction vocabulary, both in the key and in the profile column
    assert df.loc[1, "attribute_value_key"] == NA_SCHEMA and df.loc[1, "geographic_origin"] == NA_SCHEMA
    assert df["model"].tolist() == ["mockllm/a", "mockllm/a"]
    assert df["epoch"].tolist() == [1, 1] and not df["refused"].any()
    assert st.issues.empty


def test_newest_log_wins_and_errors_are_counted_once(tmp_path: Path) -> None:
    old = [
        story_sample("s1", attribute="gender", value="man", profile=prof(income_level="low income")),
        story_sample("s2", attribute="gender", value="man", profile=prof()),
        story_sample("s3", attribute="gender", value="man", profile=prof(), error="APIConnectionError: boom old"),
    ]
    new = [
        story_sample("s1", attribute="gender", value="man", profile=prof(income_level="high income")),
        story_sample("s2", attribute="gender", value="man", profile=prof(), error="rate limit"),
        story_sample("s3", attribute="gender", value="man", profile=prof(), error="RateLimitError: Error code: 429 boom new"),
        story_sample("s1", attribute="gender", value="man", profile=prof(), epoch=2),
    ]
    write_log(tmp_path / "z_old.eval", old, created="2026-01-01T10:00:00+00:00")
    write_log(tmp_path / "a_new.eval", new, created="2026-01-02T10:00:00+00:00", status="error")
    # another model with the same ids is a different story
    write_log(tmp_path / "other.eval", old[:1], model="mockllm/b")
    st = read_stories([tmp_path])
    df = st.frame.set_index(["model", "sample_id", "epoch"]).sort_index()
    assert len(df) == 4  # a: s1 (2 epochs), s2; b: s1 — s3 failed everywhere
    assert df.loc[("mockllm/a", "s1", 1), "income_level"] == "high income"  # newest copy
    assert df.loc[("mockllm/a", "s2", 1), "gender"] == "man"  # failed in the retry, kept from the old log
    assert df.loc[("mockllm/b", "s1", 1), "income_level"] == "low income"
    errors = st.issues[st.issues.kind == "error"]
    assert errors[["model", "sample_id"]].values.tolist() == [["mockllm/a", "s3"]]
    # the newest copy's error, as the one writer of outside input writes it (class and status, never the text)
    assert errors["detail"].iloc[0] == ("RateLimitError (HTTP 429 Too Many Requests): provider error; its text is "
                                        "not written (it may quote a credential)")
    src = st.sources.set_index("path")
    assert src.loc[str(tmp_path / "a_new.eval"), "status"] == "error"
    assert src.loc[str(tmp_path / "a_new.eval"), "samples_used"] == 2


def test_refusals_and_extra_english_are_counted(tmp_path: Path) -> None:
    samples = [
        story_sample("r1", attribute="gender", value="woman", profile=prof(income_level="low income"), refused=True),
        story_sample("x1", attribute="gender", value="woman", profile=prof(), scenario_key=None),
        story_sample("ok", attribute="gender", value="woman", profile=prof()),
        story_sample("f1", attribute="gender", value="man", profile=prof(), extraction_failed=True),
    ]
    write_log(tmp_path / "a.eval", samples)
    st = read_stories([tmp_path / "a.eval"])
    assert st.n_refused == 1
    f1 = st.frame.set_index("sample_id").loc["f1"]
    assert f1["extraction_failed"] and not f1["refused"] and f1["geographic_origin"] == "unknown"
    assert f1["gender"] == "man" and f1["n_extractors_ok"] == 0
    r = st.frame.set_index("sample_id").loc["r1"]
    assert r["refused"] and r["refusal_label"] == "refusal"
    assert r["gender"] == "woman" and r["income_level"] == "unknown" and r["geographic_origin"] == "unknown"
    assert st.issues[["sample_id", "kind"]].values.tolist() == [["x1", "no_scenario"]]


def test_task_versions_of_different_n_are_refused_by_the_one_rule(tmp_path: Path) -> None:
    """The leaderboard's rule (issue 41.6): versions 3-A and 4-A (different N) are not comparable, one line
    naming both runs and the option that accepts them."""
    s = [story_sample("s1", attribute="gender", value="man", profile=prof())]
    write_log(tmp_path / "v3.eval", s, version="3-A")
    write_log(tmp_path / "v4.eval", s, version="4-A", model="mockllm/b")
    with pytest.raises(MixedInputsError) as refused:
        read_stories([tmp_path])
    line = str(refused.value)
    assert "\n" not in line and line.startswith("associations: runs of different task versions are not comparable")
    assert "mockllm/a (3-A, v3.eval)" in line and "mockllm/b (4-A, v4.eval)" in line and "--accept-versions" in line


def test_task_versions_of_different_n_are_read_with_the_users_note(tmp_path: Path) -> None:
    s = [story_sample("s1", attribute="gender", value="man", profile=prof())]
    write_log(tmp_path / "v3.eval", s, version="3-A")
    write_log(tmp_path / "v4.eval", s, version="4-A", model="mockllm/b")
    st = read_stories([tmp_path], accept_versions="pilot only")
    assert sorted(st.frame["model"].astype(str)) == ["mockllm/a", "mockllm/b"]


def test_task_versions_that_differ_in_the_interface_only_are_comparable(tmp_path: Path) -> None:
    """4-A and 4-B share N: results comparable, read without a note (refused before, as any difference)."""
    s = [story_sample("s1", attribute="gender", value="man", profile=prof())]
    write_log(tmp_path / "a.eval", s, version="4-A")
    write_log(tmp_path / "b.eval", s, version="4-B", model="mockllm/b")
    assert len(read_stories([tmp_path]).frame) == 2


def test_mixed_taxonomies_are_refused(tmp_path: Path) -> None:
    write_log(tmp_path / "a.eval", [story_sample("s1", attribute="gender", value="man", profile=prof())])
    write_log(
        tmp_path / "b.eval",
        [story_sample("s1", attribute="gender", value="man", profile=prof(), fingerprint="fp-2")],
        model="mockllm/b",
    )
    with pytest.raises(MixedInputsError, match="taxonomy_fingerprint"):
        read_stories([tmp_path])


def test_other_tasks_are_ignored_and_only_other_tasks_is_an_error(tmp_path: Path) -> None:
    write_log(tmp_path / "dbb.eval", [story_sample("s1", attribute="gender", value="man", profile=prof())], task="dbb")
    # the shared input layer's message names the wanted task and what was found instead
    with pytest.raises(StoriesError, match="no log of task 'stereotales'.*found 'dbb' \\(1 log\\)"):
        read_stories([tmp_path])
    write_log(tmp_path / "st.eval", [story_sample("s1", attribute="gender", value="man", profile=prof())])
    st = read_stories([tmp_path])
    assert len(st.frame) == 1
    assert st.sources.set_index("task").loc["dbb", "used"] == False  # noqa: E712


def _release_frame() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"model": "m1", "language": "du", "sample_id": "du:gender:0:g:0", "target_attribute": "gender",
             "attribute_value_key": "man", "gender": "woman", "professional_field": "trades and manual labor"},
            {"model": "m1", "language": "en", "sample_id": "en:pf:9:g:0", "target_attribute": "professional_field",
             "attribute_value_key": "trades and manual labor (e.g. construction, manufacturing)",
             "gender": "man", "professional_field": "unknown"},
            {"model": "m2", "language": "en", "sample_id": "en:gender:1:g:0", "target_attribute": "gender",
             "attribute_value_key": "woman", "gender": "unknown", "professional_field": "unknown"},
        ]
    )


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_release_layout(tmp_path: Path, fmt: str) -> None:
    rel = release_rows(_release_frame(), ["gender", "professional_field"])
    extra = rel.iloc[[0]].assign(sample_id="additional_en:1", scenario_key=None)
    folder = tmp_path / "StereoTales"
    (folder / "du" / "stories").mkdir(parents=True)
    (folder / "additional_en" / "stories").mkdir(parents=True)
    if fmt == "parquet":
        rel.to_parquet(folder / "du" / "stories" / "eval-00000-of-00001.parquet")
        extra.to_parquet(folder / "additional_en" / "stories" / "eval-00000-of-00001.parquet")
    else:
        rel.to_csv(folder / "du" / "stories" / "eval.csv", index=False)
        extra.to_csv(folder / "additional_en" / "stories" / "eval.csv", index=False)
    st = read_stories([folder])
    df = st.frame.set_index("sample_id")
    assert st.attributes == ["gender", "professional_field"]
    assert df.loc["du:gender:0:g:0", "language"] == "nl"  # release code du -> ISO nl
    # base value from attribute_value_key, normalised; the extractor's reading of the base attribute replaced
    assert df.loc["du:gender:0:g:0", "gender"] == "man"
    assert df.loc["en:pf:9:g:0", "attribute_value_key"] == "trades and manual labor"
    assert df.loc["en:pf:9:g:0", "professional_field"] == "trades and manual labor"
    # an all-unknown profile is how the pipeline records a refusal
    assert df.loc["en:gender:1:g:0", "refused"] and not df.loc["en:pf:9:g:0", "refused"]
    assert df.loc["en:gender:1:g:0", "gender"] == "woman"
    assert st.issues[["sample_id", "kind"]].values.tolist() == [["additional_en:1", "no_scenario"]]
    ex = read_story_excerpts([folder], [("m1", "en:pf:9:g:0", 1)], max_chars=10)
    assert ex == {("m1", "en:pf:9:g:0", 1): "Story en:…"}


def test_release_bad_json_names_file_and_row(tmp_path: Path) -> None:
    rel = release_rows(_release_frame(), ["gender", "professional_field"])
    rel.loc[1, "extracted_attributes_json"] = "{not json"
    rel.to_csv(tmp_path / "r.csv", index=False)
    with pytest.raises(StoriesError, match=r"r\.csv: row 1 \(sample_id 'en:pf:9:g:0'\).*extracted_attributes_json"):
        read_stories([tmp_path / "r.csv"])
    rel.drop(columns=["attribute_value_key"]).to_csv(tmp_path / "r.csv", index=False)
    with pytest.raises(StoriesError, match="attribute_value_key"):
        read_stories([tmp_path / "r.csv"])


def test_logs_and_release_are_not_mixed(tmp_path: Path) -> None:
    write_log(tmp_path / "a.eval", [story_sample("s1", attribute="gender", value="man", profile=prof())])
    release_rows(_release_frame(), ["gender"]).to_csv(tmp_path / "r.csv", index=False)
    with pytest.raises(MixedInputsError, match="mix inspect eval logs"):
        read_stories([tmp_path])


def test_log_excerpts_come_from_the_used_copy(tmp_path: Path) -> None:
    write_log(tmp_path / "old.eval", [story_sample("s1", attribute="gender", value="man", profile=prof(), story="old")],
              created="2026-01-01T10:00:00+00:00")
    write_log(tmp_path / "new.eval",
              [story_sample("s1", attribute="gender", value="man", profile=prof(), story="new   text\nhere")],
              created="2026-01-03T10:00:00+00:00")
    assert read_story_excerpts([tmp_path], [("mockllm/a", "s1", 1)]) == {("mockllm/a", "s1", 1): "new text here"}


def test_fast_eval_reader_matches_inspect_reader(tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log_samples

    from stereoprobe.logs import iter_raw_samples
    from stereoprobe.stereotales.mining.stories_logs import _view

    samples = [
        story_sample("s1", attribute="gender", value="man", profile=prof(), story="a story " * 400),
        story_sample("s2", attribute="gender", value="woman", profile=prof(), refused=True),
        story_sample("s3", attribute="gender", value="woman", profile=prof(), error="bad gateway"),
        story_sample("s1", attribute="gender", value="man", profile=prof(), epoch=2),
    ]
    path = write_log(tmp_path / "a.eval", samples)
    fast = sorted((_view(d) for d in iter_raw_samples(path)), key=lambda v: (v.id, v.epoch))
    ref = sorted((_view(s.model_dump(mode="json")) for s in read_eval_log_samples(str(path), all_samples_required=False)),
                 key=lambda v: (v.id, v.epoch))
    assert fast == ref and len(fast) == 4
    # .json logs go through inspect's reader and give the same stories frame
    write_log(tmp_path / "j" / "a.json", samples)
    a = read_stories([tmp_path / "a.eval"]).frame.drop(columns=[]).sort_values(["sample_id", "epoch"])
    b = read_stories([tmp_path / "j"]).frame.sort_values(["sample_id", "epoch"])
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))


def test_reads_a_real_stereotales_log(tmp_path: Path, monkeypatch) -> None:
    """The reader on a log written by the stereotales task itself (mockllm subject, judge and extractors)."""
    import json
    import re

    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from stereoprobe.stereotales.taxonomy import build_samples, load_taxonomy
    from stereoprobe.tasks.stereotales import stereotales

    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    tax = load_taxonomy()
    attrs = [a.key for a in tax.attributes]
    prompt_to_id = {s.input: s.id for s in build_samples(tax, languages="en", attributes="gender", scenario_groups="hobbies")}
    refused_id, failed_id = "en:gender:0:hobbies:0", "en:gender:1:hobbies:1"
    story = re.compile(r"Story about (\S+?)\.")

    def mock(name, answer):
        def fn(input, tools, tool_choice, config) -> ModelOutput:
            text = input[-1].text
            m = story.search(text)
            out = ModelOutput.from_content(model="mockllm", content=answer(m.group(1) if m else prompt_to_id.get(text, text)))
            out.usage = ModelUsage(input_tokens=5, output_tokens=5, total_tokens=10)
            return out

        return get_model(f"mockllm/{name}", custom_outputs=fn, memoize=False)

    def extractor(sid):
        if sid == failed_id:
            raise ConnectionError("simulated outage")
        return json.dumps({"evidences": "e", "attributes": {**{a: "unknown" for a in attrs}, "gender": "woman",
                                                            "income_level": "low income"}})

    subject = mock("subject", lambda sid: f"Story about {sid}.")
    judge = mock("judge", lambda sid: json.dumps({"reason": "r", "label": "refusal" if sid == refused_id else "complied"}))
    [log] = inspect_eval(stereotales(languages="en", attributes="gender", scenario_groups="hobbies", seeds="bundled",
                                     role_prompts="bundled", run_settings="none", role_settings="none"), model=subject,
                         model_roles={"refusal": judge, "extractor": [mock(f"x{i}", extractor) for i in range(3)]},
                         log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success"
    st = read_stories([tmp_path / "logs"])
    df = st.frame.set_index("sample_id")
    assert len(df) == 12 and st.issues.empty
    assert st.attributes == attrs
    assert (df["model"] == "mockllm/subject").all() and (df["language"] == "en").all()
    # the base attribute holds the prompted value, not the extractors' constant "woman"
    assert df.loc["en:gender:0:hobbies:2", "gender"] == "man" and df.loc["en:gender:0:hobbies:2", "income_level"] == "low income"
    assert df.loc[refused_id, "refused"] and df.loc[refused_id, "income_level"] == "unknown"
    assert df.loc[failed_id, "extraction_failed"] and not df.loc[failed_id, "refused"]
    assert st.sources.iloc[0]["taxonomy_fingerprint"] == tax.fingerprint()
    assert read_story_excerpts([tmp_path / "logs"], [("mockllm/subject", failed_id, 1)]) == {
        ("mockllm/subject", failed_id, 1): f"Story about {failed_id}."}


def test_release_folder_with_other_tables_and_json(tmp_path: Path) -> None:
    """A copy of the whole release holds other configs (associations, human study) and JSON metadata."""
    root = tmp_path / "StereoTales"
    (root / "en_stories").mkdir(parents=True)
    (root / "associations_global").mkdir()
    release_rows(_release_frame(), ["gender", "professional_field"]).to_parquet(root / "en_stories" / "train.parquet")
    pd.DataFrame({"base_attribute": ["gender"], "avg_lift": [2.0]}).to_parquet(root / "associations_global" / "train.parquet")
    (root / "dataset_infos.json").write_text('{"en": {"features": {}}}')
    st = read_stories([root])
    assert len(st.frame) == 3
    src = st.sources.set_index("path")
    assert src.loc[str(root / "associations_global" / "train.parquet"), "used"] == False  # noqa: E712
    assert "not a stories table" in src.loc[str(root / "associations_global" / "train.parquet"), "note"]
    # named explicitly, the same file is an error
    with pytest.raises(StoriesError, match="lacks column"):
        read_stories([root / "associations_global" / "train.parquet"])


def test_truncated_eval_archive_is_a_clear_error(tmp_path: Path) -> None:
    path = write_log(tmp_path / "a.eval", [story_sample("s1", attribute="gender", value="man", profile=prof())])
    from stereoprobe.errors import InputError

    data = path.read_bytes()
    (tmp_path / "cut.eval").write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"cut\.eval: not a complete \.eval archive"):
        read_stories([tmp_path / "cut.eval"])


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_release_read_in_chunks_gives_the_same_frame(tmp_path: Path, monkeypatch, fmt: str) -> None:
    import stereoprobe.stereotales.mining.stories_release as stories_mod

    base = pd.concat([_release_frame().assign(sample_id=lambda d, k=k: d.sample_id + f"#{k}") for k in range(3)],
                     ignore_index=True)
    rel = release_rows(base, ["gender", "professional_field"])
    path = tmp_path / f"r.{fmt}"
    rel.to_parquet(path) if fmt == "parquet" else rel.to_csv(path, index=False)
    whole = read_stories([path]).frame
    monkeypatch.setattr(stories_mod, "RELEASE_CHUNK_ROWS", 2)
    chunked = read_stories([path])
    pd.testing.assert_frame_equal(whole, chunked.frame)
    assert chunked.sources.iloc[0]["rows_read"] == 9
    rel.loc[7, "extracted_attributes_json"] = "[1, 2]"
    rel.to_parquet(path) if fmt == "parquet" else rel.to_csv(path, index=False)
    with pytest.raises(StoriesError, match=r"row 7 .*not a JSON object"):  # absolute row number across chunks
        read_stories([path])
