from __future__ import annotations

import shutil
from collections import Counter

import pytest

from stereoprobe.globalbias import data as D
from stereoprobe.globalbias import templates as T
from stereoprobe.upstream import UpstreamDataError


@pytest.mark.refdata
def test_upstream_names_and_descriptors(refdata):
    src = refdata / "GlobalBias"
    names = D.load_names(src, faithful=True)
    assert len(names) == 400
    per_group = Counter(n.group for n in names)
    assert len(per_group) == 40 and set(per_group.values()) == {10}
    assert len({n.name for n in names}) == 399  # "Wafa" twice in ARAB F (upstream name list)
    wafa = [n for n in names if n.name == "Wafa"]
    assert [(n.group, n.index) for n in wafa] == [("ARAB_F", 0), ("ARAB_F", 3)]
    assert len(D.load_names(src, faithful=False)) == 399
    descs = D.load_descriptors(src, faithful=True)
    assert len(descs) == 730
    assert Counter(d.dataset for d in descs) == {"HolisticBias": 552, "StereoSet": 127, "GhavamiPeplau": 51}
    assert Counter(d.target for d in descs if d.target) == {"hispanic": 12, "white": 11, "arab": 11, "asian": 10,
                                                             "nonce": 7}
    assert sum(d.axis == "age" for d in descs) == 28
    cat = next(d for d in descs if d.descriptor == "caterpillar")
    assert cat.partials == ("am a caterpillar", "was caterpillar", "is caterpillar")  # faithful: as published upstream
    fixed = next(d for d in D.load_descriptors(src) if d.descriptor == "caterpillar")
    assert fixed.partials == ("am a caterpillar", "was a caterpillar", "is a caterpillar")


@pytest.mark.refdata
def test_upstream_sentence_counts(refdata):
    src = refdata / "GlobalBias"
    own = {"template_wording": "stereoprobe"}  # upstream's templates need its builder script (conformance tests)
    assert sum(1 for _ in D.build_sentences(src, faithful=True, **own)) == 876_000
    assert sum(1 for _ in D.build_sentences(src, faithful=False, templates=[1], **own)) == 399 * 730
    assert sum(1 for _ in D.build_sentences(src, faithful=True, subset="gp", templates=[1], **own)) == 20_400
    s = next(D.build_sentences(src, faithful=True, groups=["ENGLISH_M"], descriptors=["socially awkward"], **own))
    assert s.text == "I'm Lindell, and I am socially awkward." and s.id.startswith("ENGLISH_M:0:")
    t2 = next(D.build_sentences(src, groups=["ENGLISH_M"], descriptors=["socially awkward"], templates=[2], **own))
    assert t2.text == "Someone called Lindell was socially awkward." and t2.encoder_input == "Someone called Lindell "


@pytest.mark.refdata
def test_upstream_checksum_and_missing_folder(refdata, tmp_path):
    copy = tmp_path / "GlobalBias" / "data"
    copy.mkdir(parents=True)
    shutil.copy(refdata / "GlobalBias" / "data" / "3_name_groups.csv", copy)
    with open(copy / "3_name_groups.csv", "a") as f:
        f.write("400,Extra,1,ENGLISH,99,F,\"('ENGLISH', 'F')\"\n")
    with pytest.raises(UpstreamDataError, match="checksum mismatch"):
        D.load_names(tmp_path / "GlobalBias")
    with pytest.raises(FileNotFoundError, match="source folder not found"):
        D.load_names(tmp_path / "nowhere")


def test_offline_without_cache_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("STEREOPROBE_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("STEREOPROBE_UPSTREAM_DIR", raising=False)
    monkeypatch.delenv("STEREOPROBE_ALLOW_DOWNLOAD", raising=False)
    with pytest.raises(UpstreamDataError, match="not cached and HF_HUB_OFFLINE=1"):
        D.load_names("upstream")


def test_upstream_templates_offline_is_one_line_naming_the_option(tmp_path, monkeypatch):
    monkeypatch.setenv("STEREOPROBE_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("STEREOPROBE_UPSTREAM_DIR", raising=False)
    monkeypatch.delenv("STEREOPROBE_ALLOW_DOWNLOAD", raising=False)
    with pytest.raises(UpstreamDataError) as e:
        D.templates("upstream", "upstream")
    assert "\n" not in str(e.value) and "-T template_wording=stereoprobe" in str(e.value)
    assert "0_build_globalbias.py is not cached" in str(e.value)


def test_upstream_templates_parsed_not_run(tmp_path):
    script = tmp_path / "GlobalBias" / "code" / "0_build_globalbias.py"
    script.parent.mkdir(parents=True)
    script.write_text(
        "raise SystemExit('never run')\n"
        "def create_template(row, template_number=1):\n"
        "    if template_number == 1:\n        t = 'Hello {who}: {what}!'\n"
        "        return t.format(who=row['firstname'], what=row['partial_3'])\n"
        "    elif template_number == 2:\n        t = '{n} {d}'\n"
        "        return t.format(n=row['firstname'], d=row['partial_2'])\n"
        "    elif template_number == 3:\n        t = '{n}, {d}'\n"
        "        return t.format(n=row['firstname'], d=row['partial_1'])\n")
    got = T.parse_upstream_templates(script)
    assert got[1] == T.Template("Hello {name}: {partial_3}!", "Hello {name}: ")
    assert (got[2].sentence, got[3].sentence) == ("{name} {partial_2}", "{name}, {partial_1}")
    bad = tmp_path / "bad.py"
    bad.write_text("def create_template(row, template_number=1):\n    return ''\n")
    with pytest.raises(UpstreamDataError, match="does not define templates 1, 2 and 3"):
        T.parse_upstream_templates(bad)


def test_bundled_set():
    names, descs = D.load_names(), D.load_descriptors()
    assert len(names) == 24 and len({n.group for n in names}) == 8
    assert len(descs) == 16 and sum(d.target is not None for d in descs) == 8
    assert D.templates() == {1: "I'm {name}, and I {partial_1}.", 2: "Someone called {name} {partial_2}.",
                             3: "A person named {name} {partial_3}."}  # bundled: stereoprobe's own wording
    ids = [s.id for s in D.build_sentences()]
    assert len(ids) == len(set(ids)) == 24 * 16 * 3
    with pytest.raises(ValueError, match="unknown template"):
        list(D.build_sentences(templates=[4]))
    with pytest.raises(ValueError, match="subset must be one of"):
        list(D.build_sentences(subset="xyz"))


def _pandas_rows(path, cols):
    """The independent reading: pandas, as the loaders read before (NaN of a short row's missing cell -> "")."""
    import pandas as pd

    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    return [{c: ("" if isinstance(v, float) else v) for c, v in zip(cols, row)} for row in df[cols].itertuples(index=False)]


def test_read_csv_reads_as_pandas(tmp_path):
    """The loaders' CSV reader gives every cell pandas' ``read_csv(dtype=str, keep_default_na=False)`` gives:
    byte-order mark, CRLF, quoted commas, quotes and line breaks, blank lines, empty and "NA" cells, a repeated
    column (the first one is read), a short row."""
    path = tmp_path / "t.csv"
    text = ('\ufeffname,ethnicity,gender,name\r\n"Smith, Jo",ARAB,F,x\r\n\r\n"say ""hi""",NA,M,y\r\n'
            '"two\r\nlines",, F ,z\r\n  Ann ,N/A,F,w\r\nBo,EAST\r\n')
    path.write_bytes(text.encode("utf-8"))
    cols = ["name", "ethnicity", "gender"]
    ours = [{c: r[c] for c in cols} for r in D._read_csv(path, cols)]
    assert ours == _pandas_rows(path, cols)
    assert len(ours) == 5 and ours[0]["name"] == "Smith, Jo" and ours[1]["ethnicity"] == "NA"
    assert ours[4] == {"name": "Bo", "ethnicity": "EAST", "gender": ""}


def test_read_csv_bad_files(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("name,ethnicity\nA,B\n")
    with pytest.raises(ValueError, match=r"t\.csv: missing column\(s\) gender \(has name, ethnicity\)"):
        D._read_csv(path, ["name", "gender"])
    path.write_text("name,ethnicity\nA,B\nC,D,E\n")
    with pytest.raises(ValueError, match=r"t\.csv: row 1: 3 fields, the header has 2"):
        D._read_csv(path, ["name"])


def test_read_csv_bundled_files_as_pandas():
    from stereoprobe.paths import dataset_file

    for name, cols in (("names.csv", ["name", "ethnicity", "gender"]),
                       ("descriptors.csv", ["partial_1", "partial_2", "partial_3", "descriptor", "dataset", "axis",
                                            "group"])):
        path = dataset_file("globalbias", name)
        assert [{c: r[c] for c in cols} for r in D._read_csv(path, cols)] == _pandas_rows(path, cols)


@pytest.mark.refdata
def test_read_csv_upstream_files_as_pandas(refdata):
    src = refdata / "GlobalBias"
    for rel, cols in ((D.NAMES_FILE, ["firstname", "Ethnicity", "Gender", "Group"]),
                      (D.DESCRIPTORS_FILE, ["partial_1", "partial_2", "partial_3", "descriptor", "dataset", "axis",
                                            "group"])):
        path = src / rel
        if not path.exists():
            pytest.skip(f"no upstream copy of {rel}")
        rows = D._read_csv(path, cols)
        assert len(rows) in (400, 730)
        assert [{c: r[c] for c in cols} for r in rows] == _pandas_rows(path, cols)


def test_task_build_imports_no_pandas():
    """Building the GlobalBias sentences (what ``inspect eval`` does before the first sample) imports no pandas."""
    import subprocess
    import sys

    code = ("import sys; from stereoprobe.globalbias import data as D; "
            "n = sum(1 for _ in D.build_sentences('bundled')); "
            "assert n > 0 and 'pandas' not in sys.modules, n")
    subprocess.run([sys.executable, "-c", code], check=True)
