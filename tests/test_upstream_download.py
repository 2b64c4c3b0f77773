"""The download path, exercised for real: upstream files fetched over HTTP from a raw-file server, verified,
cached, then used offline.

The server (:mod:`tests.raw_server`) serves the upstream copies (``../shared/refdata``) on 127.0.0.1 in
raw.githubusercontent.com's layout, upstream files only (the README's renderings and flattened copies answer
404). ``$STEREOPROBE_RAW_BASE_URL`` points the downloader at it; ``$STEREOPROBE_UPSTREAM_DIR`` is unset and the
cache (``$STEREOPROBE_CACHE``) starts empty. Each task's default dataset and first sample's requests
(:mod:`tests.first_requests`, a fresh process per run, capturing models) must then be those built from the local
copies, and the same again offline from the cache with the server stopped. Where a default needs a file that is
not among the copies (4 MB and more), the case passes the one ``-T`` option that avoids it
(:data:`tests.first_requests.CASES`). Also: a tampered byte, a missing file (404), an interrupted body and
credentials in the base URL. Skips without ``../shared``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stereoprobe import upstream
from tests.first_requests import CASES, STORY
from tests.raw_server import RawFiles, serve

pytestmark = pytest.mark.refdata

ROOT = Path(__file__).resolve().parents[1]
OURS = ("STEREOPROBE_UPSTREAM_DIR", "STEREOPROBE_ALLOW_DOWNLOAD", upstream.RAW_BASE_ENV, "STEREOPROBE_CACHE")


def _raw_files(refdata: Path) -> RawFiles:
    if not (refdata / "README.md").is_file():  # its list of files that are not upstream's
        pytest.skip("the upstream copies have no README.md")
    return RawFiles(refdata)


def _env(tmp: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in OURS}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1", INSPECT_LOG_LEVEL="warning",
               INSPECT_CACHE_DIR=str(tmp / "inspect-cache"), STEREOPROBE_NO_PROGRESS="1")
    env.update(settings)
    return env


def _first_requests(tmp: Path, name: str, **settings: str) -> dict[str, Any]:
    out = tmp / f"{name}.json"
    done = subprocess.run([sys.executable, "-m", "tests.first_requests", str(out)], cwd=ROOT, capture_output=True,
                          text=True, env=_env(tmp / name, **settings), timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def runs(refdata: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The three runs: from the local copies, downloaded into an empty cache, offline from that cache."""
    tmp = tmp_path_factory.mktemp("upstream-download")
    cache = tmp / "cache"
    local = _first_requests(tmp, "local", STEREOPROBE_UPSTREAM_DIR=str(refdata), STEREOPROBE_CACHE=str(tmp / "c0"))
    files = _raw_files(refdata)
    with serve(files) as base:
        downloaded = _first_requests(tmp, "download", STEREOPROBE_CACHE=str(cache), STEREOPROBE_ALLOW_DOWNLOAD="1",
                                     **{upstream.RAW_BASE_ENV: base})
    offline = _first_requests(tmp, "offline", STEREOPROBE_CACHE=str(cache), **{upstream.RAW_BASE_ENV: base})
    return {"local": local, "download": downloaded, "offline": offline, "files": files, "cache": cache}


def _same(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k not in ("seconds", "cached_here")}


def _case_problems(runs: dict[str, Any], case: str) -> list[str]:
    for run in ("local", "download", "offline"):
        if "error" in runs[run][case]:
            return [f"{case}: the {run} run failed: {runs[run][case]['error']}"]
    problems = []
    if not runs["local"][case]["requests"]:
        problems.append(f"{case}: no request")
    if _same(runs["download"][case]) != _same(runs["local"][case]):
        problems.append(f"{case}: the download run differs from the local copies' run")
    if _same(runs["offline"][case]) != _same(runs["download"][case]):
        problems.append(f"{case}: the offline run differs from the download run")
    if runs["offline"][case]["cached_here"]:
        problems.append(f"{case}: the offline run cached {runs['offline'][case]['cached_here']}")
    if case == "stereotales":
        if not [f for f in runs["download"][case]["cached_here"] if "/src/flare/" in f]:
            problems.append(f"{case}: flare's source files were not downloaded")  # its prompts' real files
        problems += _flare_problems(runs["download"][case]["requests"])
    return problems


#: SHA-256 of flare's refusal template and rendered extraction template at d44bdfe (as in the conformance test)
FLARE_SHA256 = {"refusal": "d7ca12b3e392fc0c1ae18712328b47d2731582b36de527df8cff5475b516e745",
                "extractor": "9dc0739fe5f1248a7b80e1647b4f3417a86da72cd52d2073b327fe9fb2ce1f29"}


def _flare_problems(requests: list[dict[str, Any]]) -> list[str]:
    """The downloaded default's refusal and extraction requests are flare's templates filled as flare fills
    them: the template is recovered from the request (the filled values put back as placeholders) and hashed."""
    story = STORY  # what the capturing subject wrote (tests/first_requests.py)
    problems, seen = [], set()
    for r in requests:
        if r["role"] not in FLARE_SHA256:
            continue
        [(_, text)] = r["messages"]
        if r["role"] == "extractor":
            template = text.replace(story, "$STORY_REPLACE_ME$", 1)
        else:  # .format(language=, scenario_key=, attribute_value_key=, story.strip())
            template = text.replace("{", "{{").replace("}", "}}").replace(
                f"<assistant_output>\n{story.strip()}\n</assistant_output>",
                "<assistant_output>\n{assistant_output}\n</assistant_output>", 1)
            for label, field in (("Language", "language"), ("Scenario", "scenario_key"),
                                 ("Socio-demographic attribute", "attribute_value_key")):
                template = re.sub(f"^- {label}: .*$", f"- {label}: {{{field}}}", template, count=1, flags=re.M)
        seen.add(r["role"])
        if hashlib.sha256(template.encode()).hexdigest() != FLARE_SHA256[r["role"]]:
            problems.append(f"stereotales: the {r['role']} request is not flare's template filled as flare does")
    return problems + [f"stereotales: no {role} request" for role in sorted(set(FLARE_SHA256) - seen)]


@pytest.mark.slow
def test_every_default_from_a_download_then_offline_from_the_cache(runs: dict[str, Any]) -> None:
    """One test for every case (the three runs are made once, by one xdist worker)."""
    problems = [p for case in CASES for p in _case_problems(runs, case)]
    assert not problems, "\n".join(problems)
    files: RawFiles = runs["files"]
    statuses = dict(files.requested)
    assert [p for p, status in files.requested if status != 200] == []  # no case asked for a missing file
    assert len(statuses) == len(files.requested)  # each file downloaded once, then read from the cache
    pinned = {files.url_path(key, rel): (key, rel) for key, src in upstream.sources().items() for rel in src.files}
    cache: Path = runs["cache"]
    cached = {p.relative_to(cache / "upstream").as_posix() for p in cache.rglob("*") if p.is_file()}
    expected = set()
    for url_path in statuses:
        key, rel = pinned[url_path]
        pin = upstream.sources()[key].files[rel]
        expected.add(f"{key}/{upstream.sources()[key].commit}/{rel}")
        assert upstream.file_checksum(cache / "upstream" / key / upstream.sources()[key].commit / rel, pin) == pin
    assert cached == expected  # no partial file, nothing else
    assert len(expected) >= 25, sorted(expected)


@pytest.mark.slow
def test_every_default_without_its_upstream_files_names_the_option_that_avoids_them(refdata: Path,
                                                                                     tmp_path: Path) -> None:
    """A server that has none of the files (a mirror without them, a wrong pin): each task stops at its first
    file, in one line naming the URL, the status and a -T option that avoids upstream's files."""
    files = _raw_files(refdata)
    files.roots = {}  # every path answers 404
    with serve(files) as base:
        got = _first_requests(tmp_path, "nothing", STEREOPROBE_CACHE=str(tmp_path / "cache"),
                              STEREOPROBE_ALLOW_DOWNLOAD="1", **{upstream.RAW_BASE_ENV: base})
    assert files.requested
    for case, result in got.items():  # dbb_build_questions too: upstream's wording of q_generate.py
        message = result.get("error", "")
        assert "\n" not in message and f"HTTP 404 Not Found from {base}/" in message, (case, message)
        assert "-T " in message.rsplit("nothing was cached", 1)[-1], (case, message)
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]


# --------------------------------------------------------------------------- failures of one download, in process
@pytest.fixture
def server(refdata: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[RawFiles, str, Path]]:
    """A raw-file server of the copies, the downloader pointed at it with downloads allowed, an empty cache."""
    files = _raw_files(refdata)
    cache = tmp_path / "cache"
    for name in OURS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("STEREOPROBE_CACHE", str(cache))
    monkeypatch.setenv("STEREOPROBE_ALLOW_DOWNLOAD", "1")
    with serve(files) as base:
        monkeypatch.setenv(upstream.RAW_BASE_ENV, base)
        yield files, base, cache


def _cache_files(cache: Path) -> list[Path]:
    return [p for p in cache.rglob("*") if p.is_file()]


KEY, REL = "GlobalBias", "data/3_name_groups.csv"


def test_a_download_is_cached_and_read_from_the_cache_after(server: tuple[RawFiles, str, Path]) -> None:
    files, base, cache = server
    path = upstream.fetch(KEY, REL)
    assert path.read_bytes() == (files.refdata / KEY / REL).read_bytes()
    assert upstream.fetch(KEY, REL) == path
    assert files.requested == [(files.url_path(KEY, REL), 200)]  # once
    assert _cache_files(cache) == [path]


def test_a_tampered_byte_is_one_line_naming_the_file_and_both_hashes(server: tuple[RawFiles, str, Path]) -> None:
    files, base, cache = server
    files.tamper.add(files.url_path(KEY, REL))
    body = bytearray((files.refdata / KEY / REL).read_bytes())
    body[0] ^= 1
    with pytest.raises(upstream.UpstreamDataError) as err:
        upstream.fetch(KEY, REL)
    message = str(err.value)
    assert "\n" not in message and REL in message and base + files.url_path(KEY, REL) in message
    assert upstream.sources()[KEY].files[REL] in message and hashlib.sha256(body).hexdigest() in message
    assert _cache_files(cache) == []


def test_a_missing_file_is_one_line_naming_the_url_and_the_option_that_avoids_it(
        server: tuple[RawFiles, str, Path]) -> None:
    """DBB's default names (names=published) read data/Bias-Dataset.csv, which the copies lack: a 404 here."""
    from stereoprobe.tasks.dbb import dbb

    files, base, cache = server
    with pytest.raises(Exception) as err:
        dbb(categories="ses", limit_templates=1)
    message = str(err.value)
    url = base + files.url_path("Hidden-Bias-Benchmark", "data/Bias-Dataset.csv")
    assert "\n" not in message and url in message and "404" in message and "-T names=draw" in message
    assert not any(p.name == "Bias-Dataset.csv" or p.suffix == ".part" for p in _cache_files(cache))


def test_an_interrupted_download_caches_nothing(server: tuple[RawFiles, str, Path]) -> None:
    files, base, cache = server
    files.cut.add(files.url_path(KEY, REL))
    size = (files.refdata / KEY / REL).stat().st_size
    for verify in (True, False):  # the cut is found by the announced length, not by the checksum
        with pytest.raises(upstream.UpstreamDataError) as err:
            upstream.fetch(KEY, REL, verify=verify)
        message = str(err.value)
        assert "\n" not in message and base + files.url_path(KEY, REL) in message
        assert f"interrupted: {size // 2} of {size} bytes" in message and "nothing was cached" in message
        assert _cache_files(cache) == []
    files.cut.clear()  # the next try downloads it whole
    assert upstream.fetch(KEY, REL).read_bytes() == (files.refdata / KEY / REL).read_bytes()


def test_credentials_in_the_base_url_are_sent_and_never_shown(server: tuple[RawFiles, str, Path],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    files, base, cache = server
    monkeypatch.setenv(upstream.RAW_BASE_ENV, base.replace("http://", "http://me:s3cr%40t@") + "/")
    assert upstream.fetch(KEY, REL).is_file()
    expected = "Basic " + __import__("base64").b64encode(b"me:s3cr@t").decode()
    assert files.authorizations == [expected]
    with pytest.raises(upstream.UpstreamDataError) as err:
        upstream.fetch("Hidden-Bias-Benchmark", "data/Bias-Dataset.csv")  # a 404: the URL is in the message
    assert base + "/JP-25/" in str(err.value) and "s3cr" not in str(err.value) and "me:" not in str(err.value)


@pytest.mark.parametrize("value", ["ftp://mirror.example/raw", "mirror.example", "https://h.example/raw?x=1",
                                   "https://user:pw@h.example:port"])
def test_a_bad_base_url_is_one_line_naming_the_setting(value: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STEREOPROBE_UPSTREAM_DIR", raising=False)
    monkeypatch.setenv("STEREOPROBE_CACHE", str(tmp_path))
    monkeypatch.setenv("STEREOPROBE_ALLOW_DOWNLOAD", "1")
    monkeypatch.setenv(upstream.RAW_BASE_ENV, value)
    with pytest.raises(upstream.UpstreamDataError) as err:
        upstream.fetch(KEY, REL)
    assert str(err.value).startswith(f"${upstream.RAW_BASE_ENV}=") and "\n" not in str(err.value)
    assert "pw" not in str(err.value)


# ------------------------------------------------------- a deadline, no leftovers, the cache setting (issue 41.3)
def test_a_body_that_trickles_stops_at_the_deadline_in_one_line(server: tuple[RawFiles, str, Path],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A server sending one byte a second never finishes within a 0.5 s deadline, whatever the load: the
    download stops with one line naming the setting, and nothing is cached."""
    files, base, cache = server
    files.trickle.add(files.url_path(KEY, REL))
    monkeypatch.setenv(upstream.DEADLINE_ENV, "0.5")
    with pytest.raises(upstream.UpstreamDataError) as err:
        upstream.fetch(KEY, REL)
    message = str(err.value)
    assert "\n" not in message and "not complete within 0.5 s" in message and upstream.DEADLINE_ENV in message
    assert base + files.url_path(KEY, REL) in message and "nothing was cached" in message
    assert _cache_files(cache) == []


@pytest.mark.parametrize("value", ["0", "-3", "soon", "inf", "nan"])
def test_a_bad_deadline_is_one_line(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(upstream.DEADLINE_ENV, value)
    with pytest.raises(upstream.UpstreamDataError, match=upstream.DEADLINE_ENV):
        upstream.download_deadline()


def test_part_files_of_a_killed_run_are_removed_by_the_next(server: tuple[RawFiles, str, Path]) -> None:
    """A run killed mid-download leaves ``.part`` files; the next run that reads the source removes those of
    processes that are gone and keeps one a live run is writing."""
    files, base, cache = server
    folder = cache / "upstream" / KEY / upstream.sources()[KEY].commit / "data"
    folder.mkdir(parents=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    killed = folder / f".3_name_groups.csv.{int(dead.stdout)}.abc123.part"
    older = folder / ".other.csv.k2j4h5.part"  # a version that put no process id in the name
    live = folder / f".other.csv.{os.getppid()}.xyz789.part"
    for p in (killed, older, live):
        p.write_bytes(b"half")
    upstream._CLEANED.clear()
    path = upstream.fetch(KEY, REL)
    assert not killed.exists() and not older.exists() and live.exists()
    assert sorted(_cache_files(cache)) == sorted([path, live])


@pytest.mark.parametrize("kind", ["folder", "fifo", "dangling link"])
def test_a_cache_entry_that_is_not_a_file_is_removed_with_a_notice(kind: str, server: tuple[RawFiles, str, Path],
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    files, base, cache = server
    entry = cache / "upstream" / KEY / upstream.sources()[KEY].commit / REL
    entry.parent.mkdir(parents=True)
    if kind == "folder":
        entry.mkdir()
        (entry / "inside.txt").write_text("x")
    elif kind == "fifo":
        os.mkfifo(entry)
    else:
        entry.symlink_to(cache / "nowhere")
    path = upstream.fetch(KEY, REL)
    assert path == entry and path.read_bytes() == (files.refdata / KEY / REL).read_bytes()
    assert not entry.is_symlink() and not (cache / "nowhere").exists()
    notices = [line for line in capsys.readouterr().err.splitlines() if str(entry) in line]
    assert len(notices) == 1 and "removed" in notices[0]


@pytest.mark.parametrize("value, refused", [("", "empty"), ("cache/here", "relative"), ("./c", "relative")])
def test_an_empty_or_relative_cache_setting_is_refused(value: str, refused: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from stereoprobe.errors import InputError
    from stereoprobe.paths import cache_dir

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STEREOPROBE_CACHE", value)
    with pytest.raises(InputError) as err:
        cache_dir("upstream")
    assert "$STEREOPROBE_CACHE" in str(err.value) and refused in str(err.value)
    assert list(tmp_path.iterdir()) == []  # nothing written into the current folder


def test_a_tilde_in_the_cache_setting_is_expanded_and_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from stereoprobe.paths import cache_dir

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("STEREOPROBE_CACHE", "~/sp-cache")
    assert cache_dir("upstream") == tmp_path / "home" / "sp-cache" / "upstream"
    assert not (tmp_path / "~").exists()
    err = capsys.readouterr().err
    assert "~ expanded" in err and str(tmp_path / "home" / "sp-cache") in err
