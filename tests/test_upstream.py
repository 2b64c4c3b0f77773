"""The pinned-upstream loader: checksums, local copies, clear errors."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from stereoprobe import upstream


def test_every_source_is_pinned_to_a_full_commit() -> None:
    for src in upstream.sources().values():
        assert len(src.commit) == 40 and int(src.commit, 16) >= 0
        assert src.files, src.key
        for sha in src.files.values():
            if sha.startswith(upstream.GIT_BLOB):  # a large file pinned by its git blob id (SHA-1)
                assert len(sha) == len(upstream.GIT_BLOB) + 40 and int(sha[len(upstream.GIT_BLOB):], 16) >= 0
            else:
                assert len(sha) == 64 and int(sha, 16) >= 0


def test_git_blob_pin_verified_like_git_hash_object(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file pinned by its git blob id passes when the content's blob id (``git hash-object``, computed here
    by hand: SHA-1 of "blob <size>\\0" + content) matches, and fails with the mismatch named otherwise."""
    src = upstream.sources()["Hidden-Bias-Benchmark"]
    rel = "data/Bias-Dataset.csv"
    assert src.files[rel].startswith(upstream.GIT_BLOB)
    (tmp_path / "data").mkdir()
    content = b"Context,ans1,ans2\nx,y,z\n"
    (tmp_path / rel).write_bytes(content)
    with pytest.raises(upstream.UpstreamDataError, match="checksum mismatch.*git-blob-sha1:"):
        upstream.fetch("Hidden-Bias-Benchmark", rel, local=tmp_path)
    blob_id = hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()
    monkeypatch.setitem(src.files, rel, upstream.GIT_BLOB + blob_id)
    assert upstream.fetch("Hidden-Bias-Benchmark", rel, local=tmp_path) == tmp_path / rel


def test_local_copy_verified(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = upstream.sources()["GlobalBias"]
    rel = "data/3_name_groups.csv"
    (tmp_path / "data").mkdir()
    (tmp_path / rel).write_text("not the upstream file\n")
    with pytest.raises(upstream.UpstreamDataError, match="checksum mismatch"):
        upstream.fetch("GlobalBias", rel, local=tmp_path)
    assert upstream.fetch("GlobalBias", rel, local=tmp_path, verify=False) == tmp_path / rel
    # a file with the right content passes: patch the expected checksum to that of our file
    good = hashlib.sha256((tmp_path / rel).read_bytes()).hexdigest()
    monkeypatch.setitem(src.files, rel, good)
    assert upstream.fetch("GlobalBias", rel, local=tmp_path) == tmp_path / rel


def test_unknown_file_and_source_are_named() -> None:
    with pytest.raises(upstream.UpstreamDataError, match="not a pinned file"):
        upstream.fetch("GlobalBias", "data/nope.csv")
    with pytest.raises(upstream.UpstreamDataError, match="unknown upstream source"):
        upstream.fetch("NoSuchRepo", "x")


def test_missing_local_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(upstream.UpstreamDataError, match="not found under the local folder"):
        upstream.fetch("GlobalBias", "data/3_name_groups.csv", local=tmp_path)


def test_offline_error_names_the_remedy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STEREOPROBE_CACHE", str(tmp_path))
    monkeypatch.delenv(upstream.MIRROR_ENV, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(upstream.UpstreamDataError, match="local copy"):
        upstream.fetch("GlobalBias", "data/3_name_groups.csv")


@pytest.mark.refdata
def test_refdata_matches_the_pins(refdata: Path) -> None:
    """Every pinned file that has a local upstream copy (the refdata fixture) verifies against its checksum."""
    checked = 0
    for key, src in upstream.sources().items():
        for rel in src.files:
            if (refdata / key / rel).is_file():
                upstream.fetch(key, rel, local=refdata)
                checked += 1
    assert checked >= 60
