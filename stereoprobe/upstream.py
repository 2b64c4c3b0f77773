"""Upstream data files at pinned commits: download on demand, verify SHA-256, cache.

The project never ships upstream data. Full runs fetch each file from
``https://raw.githubusercontent.com/<repository>/<commit>/<path>`` (table in ``upstream_sources.yaml``; the base
URL is ``$STEREOPROBE_RAW_BASE_URL`` when set, for a mirror or proxy serving the same layout), check it against
the recorded SHA-256 and keep it in ``$STEREOPROBE_CACHE/upstream/`` (default ``~/.cache/stereoprobe/upstream/``).
A download is written to a temporary file beside its cache entry and moved into place only once complete and
verified: an interrupted or tampered download leaves nothing cached. A file that could
not be read when it was pinned (upstream files too large for the snapshot the project was built from) is
pinned by its git blob id at the pinned commit instead (``git-blob-sha1:<40 hex>``, read from the commit's
tree: SHA-1 of ``"blob <size>\0" + content``, what ``git hash-object`` prints), verified the same way.

Machines without internet pass a local copy instead: a folder laid out like the upstream repository
(``local=/path/to/GlobalBias``) or a mirror of several repositories named by their source key
(``$STEREOPROBE_UPSTREAM_DIR/GlobalBias/...``). Local files are verified too; a mismatch is an error
unless ``verify=False``.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import hashlib
import http.client
import json
import os
import shutil
import stat
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import IO

import yaml

from stereoprobe.errors import InputError
from stereoprobe.paths import cache_dir
from stereoprobe.harmless import safe_url
from stereoprobe.redact import redact_text

RAW_BASE_ENV = "STEREOPROBE_RAW_BASE_URL"  # a mirror or proxy of raw.githubusercontent.com's layout
DEFAULT_RAW_BASE = "https://raw.githubusercontent.com"
RAW_URL = "{base}/{repository}/{commit}/{path}"
GIT_BLOB = "git-blob-sha1:"  # prefix of a checksum that is the file's git blob id at the pinned commit
MIRROR_ENV = "STEREOPROBE_UPSTREAM_DIR"
DEADLINE_ENV = "STEREOPROBE_DOWNLOAD_DEADLINE"  # seconds one file's download may take in all
DEFAULT_DEADLINE = 600.0
_PART = ".part"  # a download in progress: .<name>.<pid>.<random>.part beside its cache entry


class UpstreamDataError(InputError, RuntimeError):
    """An upstream file could not be obtained or failed its checksum (an input error: one line, exit code 2)."""


@dataclass(frozen=True)
class UpstreamSource:
    key: str
    repository: str
    commit: str
    files: dict[str, str]  # relative path -> sha256, or "git-blob-sha1:<git blob id>"

    def url(self, path: str) -> str:
        """The raw-file URL of ``path`` at the pinned commit (credentials of the base URL left out)."""
        return RAW_URL.format(base=raw_base().url, repository=self.repository, commit=self.commit,
                              path=urllib.parse.quote(path))


@dataclass(frozen=True)
class RawBase:
    """The raw-file base URL: ``url`` without credentials or trailing slash; ``authorization``: the HTTP basic
    credentials given as ``user:password@`` in the setting (sent as a header, never part of a message)."""

    url: str
    authorization: str | None = None


def raw_base() -> RawBase:
    """``$STEREOPROBE_RAW_BASE_URL`` (default ``https://raw.githubusercontent.com``): files are fetched from
    ``<base>/<owner>/<repo>/<commit>/<path>``. One-line error (credentials redacted) when it is no http(s) URL
    or holds a query or fragment (a path is appended to it)."""
    value = os.environ.get(RAW_BASE_ENV, "").strip() or DEFAULT_RAW_BASE
    parts = urllib.parse.urlsplit(value)
    try:
        host = parts.hostname
        parts.port  # noqa: B018  # a malformed port raises ValueError here
    except ValueError:
        host = None
    if "@" in value.partition("://")[2].partition("/")[2]:
        raise UpstreamDataError(  # user:pa/ss@host: the password holds / # or ?, read as a path, query or fragment
            f"${RAW_BASE_ENV}={safe_url(value)}: an @ after the host; percent-encode / # ? in a password "
            "(%2F %23 %3F) and give http(s)://user:password@host[:port][/path]")
    if parts.scheme not in ("http", "https") or not host or parts.query or parts.fragment:
        raise UpstreamDataError(
            f"${RAW_BASE_ENV}={safe_url(value)}: not a base URL of raw files; give http(s)://host[:port][/path] "
            f"(files are fetched from <base>/<owner>/<repo>/<commit>/<path>; default {DEFAULT_RAW_BASE})")
    authorization = None
    if parts.username is not None:
        user = urllib.parse.unquote(parts.username)
        password = urllib.parse.unquote(parts.password or "")
        authorization = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    netloc = parts.netloc.rpartition("@")[2]
    return RawBase(urllib.parse.urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", "")), authorization)


@cache
def sources() -> dict[str, UpstreamSource]:
    """All pinned upstream sources, by key (``GlobalBias``, ``Hidden-Bias-Benchmark``, ...)."""
    text = files("stereoprobe").joinpath("upstream_sources.yaml").read_text(encoding="utf-8")
    raw = yaml.safe_load(text)
    return {
        key: UpstreamSource(key=key, repository=v["repository"], commit=v["commit"], files=dict(v["files"]))
        for key, v in raw.items()
    }


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def git_blob_sha1(path: Path) -> str:
    """The git blob id of a file: SHA-1 of ``"blob <size>\\0"`` followed by the content (``git hash-object``)."""
    h = hashlib.sha1(f"blob {Path(path).stat().st_size}\0".encode())
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def file_checksum(path: Path, expected: str) -> str:
    """The checksum of ``path`` in the kind ``expected`` records: ``git-blob-sha1:<id>`` or a SHA-256 hex."""
    return GIT_BLOB + git_blob_sha1(path) if expected.startswith(GIT_BLOB) else sha256_file(path)


def _source(key: str) -> UpstreamSource:
    try:
        return sources()[key]
    except KeyError:
        raise UpstreamDataError(f"unknown upstream source {key!r}; known: {', '.join(sources())}") from None


def _check(path: Path, expected: str, what: str, verify: bool) -> Path:
    if verify:
        got = file_checksum(path, expected)
        if got != expected:
            kind = "" if expected.startswith(GIT_BLOB) else "sha256 "
            raise UpstreamDataError(
                f"checksum mismatch for {what} at {path}: expected {kind}{expected}, got {got}. "
                "The file is not the pinned upstream version; pass verify=False to use it anyway."
            )
    return path


def _local_copy(src: UpstreamSource) -> str:
    """How to point at a local copy of ``src``'s one repository (offline errors name it once)."""
    folder = src.repository.split("/")[-1]
    return (f"pass a local copy of the {src.repository} repository (source=/path/to/{folder}) or set "
            f"${MIRROR_ENV}=/folder/holding/{folder}/")


#: system folders that never hold a copy of an upstream repository: a source there is refused before any look-up
#: (pseudo-files under /proc, /sys or /dev can block a reader forever)
SYSTEM_FOLDERS = ("/", "/bin", "/boot", "/dev", "/etc", "/lib", "/lib64", "/proc", "/run", "/sbin", "/sys", "/usr",
                  "/var")
_NEVER_BELOW = ("/proc", "/sys", "/dev")


def check_local_folder(local: str | os.PathLike[str], what: str = "source") -> None:
    """:class:`UpstreamDataError` (one line) when ``local``, given as a local copy of an upstream repository,
    is a system folder (``/``, ``/usr``, ``/proc``, ...; anything below ``/proc``, ``/sys`` or ``/dev``), or
    exists but is not a folder: the look-up stays bounded whatever path a ``-T`` value names."""
    try:
        resolved = Path(local).expanduser().resolve()
    except (OSError, RuntimeError) as exc:  # a link loop
        raise UpstreamDataError(f"{what}: local folder {local} cannot be resolved ({exc})") from None
    text = resolved.as_posix()
    if text in SYSTEM_FOLDERS or any(text.startswith(f"{d}/") for d in _NEVER_BELOW):
        raise UpstreamDataError(f"{what}: {local} is a system folder, not a local copy of the upstream repository; "
                                "give the folder of the repository's clone")
    if resolved.exists() and not resolved.is_dir():
        raise UpstreamDataError(f"{what}: {local} is not a folder (a local copy of the upstream repository)")


def fetch(key: str, path: str, local: str | os.PathLike[str] | None = None, verify: bool = True) -> Path:
    """Return a verified local path of upstream file ``path`` of source ``key``.

    Order: ``local`` folder (the repository's root, or a mirror holding ``<key>/``) → ``$STEREOPROBE_UPSTREAM_DIR``
    → the cache → download from the pinned commit.
    """
    src = _source(key)
    if path not in src.files:
        raise UpstreamDataError(f"{key}: {path!r} is not a pinned file; pinned: {', '.join(src.files)}")
    expected = src.files[path]
    what = f"{src.repository}@{src.commit[:10]}:{path}"

    roots: list[Path] = []
    if local is not None:
        check_local_folder(local, what)
        roots += [Path(local), Path(local) / key]
    if os.environ.get(MIRROR_ENV):  # the copy under its key or under the repository's own name
        roots += [Path(os.environ[MIRROR_ENV]) / key, Path(os.environ[MIRROR_ENV]) / src.repository.split("/")[-1]]
    for root in roots:
        candidate = root / path
        if candidate.is_file():
            return _check(candidate, expected, what, verify)
    if local is not None:
        raise UpstreamDataError(f"{what}: not found under the local folder {local} (looked for {path})")

    cached = cache_dir("upstream", key, src.commit) / path
    _clean_leftovers(cache_dir("upstream", key, src.commit))
    _not_a_file(cached)
    if cached.is_file():
        return _check(cached, expected, what, verify)
    if os.environ.get("HF_HUB_OFFLINE") == "1" and os.environ.get("STEREOPROBE_ALLOW_DOWNLOAD") != "1":
        raise UpstreamDataError(
            f"{what} is not cached and HF_HUB_OFFLINE=1; download it once with internet, or {_local_copy(src)}"
        )
    return _download(src, path, cached, what, verify)


def _download(src: UpstreamSource, path: str, cached: Path, what: str, verify: bool) -> Path:
    """Download ``path`` of ``src`` into ``cached``: through a temporary file in the same folder, moved into
    place only when the body is complete and (``verify``) its checksum is the pinned one; any failure is one
    line naming the URL, and leaves nothing behind."""
    base = raw_base()
    url = src.url(path)
    request = urllib.request.Request(url)
    if base.authorization:  # not sent on to another host after a redirect
        request.add_unredirected_header("Authorization", base.authorization)
    cached.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=cached.parent, prefix=f".{cached.name}.{os.getpid()}.", suffix=_PART)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            _copy_response(request, out, what, url, src)
        if verify and (got := file_checksum(tmp, src.files[path])) != src.files[path]:
            kind = "" if got.startswith(GIT_BLOB) else "sha256 "
            raise UpstreamDataError(
                f"checksum mismatch for {what} downloaded from {url}: expected {kind}{src.files[path]}, got "
                f"{kind}{got}; nothing was cached (the server is not serving the pinned file: check "
                f"${RAW_BASE_ENV} or the proxy)")
        tmp.replace(cached)
    finally:
        tmp.unlink(missing_ok=True)  # gone already once moved into place
    return cached


def download_deadline() -> float:
    """Seconds one file's download may take in all (``$STEREOPROBE_DOWNLOAD_DEADLINE``, default 600): a
    server trickling its body never holds a run longer. One line when the setting is not a positive number."""
    value = os.environ.get(DEADLINE_ENV, "").strip()
    if not value:
        return DEFAULT_DEADLINE
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not (0 < seconds < float("inf")):
        raise UpstreamDataError(f"${DEADLINE_ENV}={value}: expected a positive number of seconds (default "
                                f"{DEFAULT_DEADLINE:g})")
    return seconds


def _past_deadline(what: str, url: str, seconds: float, got: int) -> UpstreamDataError:
    return UpstreamDataError(
        f"could not download {what} from {url}: not complete within {seconds:g} s ({got} bytes received; "
        f"${DEADLINE_ENV} sets the limit); nothing was cached")


def _copy_response(request: urllib.request.Request, out: IO[bytes], what: str, url: str, src: UpstreamSource) -> None:
    """Copy the response body of ``request`` to the open file ``out`` within :func:`download_deadline`;
    one-line errors naming the URL."""
    announced: str | None = None
    seconds = download_deadline()
    deadline = time.monotonic() + seconds
    try:
        with urllib.request.urlopen(request, timeout=min(60.0, seconds)) as resp:
            while chunk := resp.read1(1 << 16):
                out.write(chunk)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _past_deadline(what, url, seconds, out.tell())
                sock = getattr(getattr(resp.fp, "raw", None), "_sock", None)  # http.client's socket
                if sock is not None:
                    sock.settimeout(min(60.0, left))  # the next read never waits past the deadline
            announced = resp.headers.get("Content-Length")
    except urllib.error.HTTPError as e:
        e.close()
        raise UpstreamDataError(
            f"could not download {what}: HTTP {e.code} {e.reason} from {url}; nothing was cached") from None
    except (urllib.error.URLError, http.client.HTTPException, TimeoutError, OSError) as e:
        if time.monotonic() >= deadline - 0.01:  # a read that waited until the deadline
            raise _past_deadline(what, url, seconds, out.tell()) from None
        reason = getattr(e, "reason", None) or e.__class__.__name__ + (f" {e}" if str(e) else "")
        raise UpstreamDataError(
            f"could not download {what} from {url} ({redact_text(str(reason))}); nothing was cached. Offline? "
            f"{_local_copy(src)}") from None
    # http.client returns a body cut short by a closed connection without an error: count its bytes
    if announced is not None and announced.isdigit() and out.tell() != int(announced):
        raise UpstreamDataError(
            f"could not download {what} from {url} (interrupted: {out.tell()} of {announced} bytes); nothing was "
            "cached; try again")


_CLEANED: set[Path] = set()


def _clean_leftovers(root: Path) -> None:
    """Remove the ``.part`` files a killed run left under ``root`` (once per process and folder): those of a
    process that is gone (its id is in the name), and those without an id (an older version's)."""
    if root in _CLEANED:
        return
    _CLEANED.add(root)
    for part in root.rglob(f".*{_PART}"):
        pid = part.name[: -len(_PART)].rsplit(".", 2)[-2] if part.name.count(".") >= 4 else ""
        if pid.isdigit() and _alive(int(pid)):
            continue  # another run is downloading it now
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.lstat(part).st_mode):
                part.unlink()


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def _not_a_file(cached: Path) -> None:
    """A cache entry that is not a regular file (a folder, a FIFO, a link to neither) is removed, with one
    notice: the pinned file is then downloaded (or read from a mirror) again. A link is removed, never what
    it points to."""
    try:
        st = os.lstat(cached)
    except OSError:
        return
    if stat.S_ISREG(st.st_mode) or (stat.S_ISLNK(st.st_mode) and cached.is_file()):
        return
    kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a link" if stat.S_ISLNK(st.st_mode) else "not a file"
    try:
        shutil.rmtree(cached) if stat.S_ISDIR(st.st_mode) else cached.unlink()
    except OSError as exc:
        raise UpstreamDataError(f"{cached}: a cache entry that is {kind}, not the pinned file, and it cannot be "
                                f"removed ({(exc.strerror or str(exc)).lower()}); remove it yourself") from None
    print(f"stereoprobe: notice: removed {cached} from the cache: it was {kind}, not the pinned file",
          file=sys.stderr)


def _assigned_constant(tree: ast.Module, variable: str, kind: type) -> object | None:
    """The literal of type ``kind`` assigned to ``variable`` at the top level of ``tree`` (None if none)."""
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        named = any(isinstance(t, ast.Name) and t.id == variable for t in node.targets)
        if named and isinstance(node.value, ast.Constant) and isinstance(node.value.value, kind):
            return node.value.value
    return None


def python_constant(path: Path, variable: str, kind: type = str) -> object:
    """The literal (of type ``kind``) assigned to ``variable`` at the top level of the Python file ``path``
    (upstream keeps some prompts in code: parsed with ``ast``, never imported or executed). One-line error
    when the file does not parse or assigns no such literal."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError) as e:
        raise UpstreamDataError(f"{path}: not a readable Python file ({e})") from None
    value = _assigned_constant(tree, variable, kind)
    if value is None:
        raise UpstreamDataError(f"{path}: no top-level assignment of a {kind.__name__} literal to {variable}")
    return value


def notebook_string(path: Path, variable: str) -> str:
    """The string literal assigned to ``variable`` in a code cell of the Jupyter notebook ``path`` (upstream
    keeps some prompts in notebooks: read as data, never executed). One-line error when there is none."""
    try:
        cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UpstreamDataError(f"{path}: not a readable notebook ({e})") from None
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        source = "".join(cell.get("source", []))
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue  # shell or magic lines: not an assignment we read
        value = _assigned_constant(tree, variable, str)
        if isinstance(value, str):
            return value
    raise UpstreamDataError(f"{path}: no code cell assigns a string to {variable}")
