from __future__ import annotations

import shutil
from collections import Counter

import pytest

from stereoprobe.globalbias import data as D
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
    assert sum(1 for _ in D.build_sentences(src, faithful=True)) == 876_000
    assert sum(1 for _ in D.build_sentences(src, faithful=False, templates=[1])) == 399 * 730
    assert sum(1 for _ in D.build_sentences(src, faithful=True, subset="gp", templates=[1])) == 20_400
    s = next(D.build_sentences(src, faithful=True, groups=["ENGLISH_M"], descriptors=["socially awkward"]))
    assert s.text == "My name is Lindell, I am socially awkward." and s.id.startswith("ENGLISH_M:0:")
    t2 = next(D.build_sentences(src, groups=["ENGLISH_M"], descriptors=["socially awkward"], templates=[2]))
    assert t2.text == "Lindell was socially awkward." and t2.encoder_input == "Lindell "


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


def test_bundled_set():
    names, descs = D.load_names(), D.load_descriptors()
    assert len(names) == 24 and len({n.group for n in names}) == 8
    assert len(descs) == 16 and sum(d.target is not None for d in descs) == 8
    assert D.templates() == {1: "My name is {name}, I {partial_1}.", 2: "{name} {partial_2}.", 3: "{name} {partial_3}."}
    ids = [s.id for s in D.build_sentences()]
    assert len(ids) == len(set(ids)) == 24 * 16 * 3
    with pytest.raises(ValueError, match="unknown template"):
        list(D.build_sentences(templates=[4]))
    with pytest.raises(ValueError, match="unknown subset"):
        list(D.build_sentences(subset="xyz"))
