"""A raw-file server for the download tests: the upstream copies (``../shared/refdata``) served on 127.0.0.1 in
raw.githubusercontent.com's layout, ``/<owner>/<repo>/<commit>/<path>``, each copies' folder at the repository
and commit its source key pins in ``stereoprobe/upstream_sources.yaml``.

Only upstream files are served: a path the copies' README lists as not upstream's (a rendering, a flattened copy)
answers 404, as the real server does. A test can also make one file's body wrong (``tamper``: one byte flipped)
or cut (``cut``: the full ``Content-Length`` announced, the connection closed after half the body) or trickle
(``trickle``: one byte a second, so a download never completes within a small deadline), and reads
which paths were asked for (``requested``) with which credentials (``authorizations``).
"""

from __future__ import annotations

import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from stereoprobe import upstream
from tests.refdata_layout import read_readme


@dataclass
class RawFiles:
    refdata: Path
    tamper: set[str] = field(default_factory=set)  # URL paths whose body gets one byte flipped
    cut: set[str] = field(default_factory=set)  # URL paths whose body stops half way
    trickle: set[str] = field(default_factory=set)  # URL paths whose body comes one byte per second: never done
    stop: threading.Event = field(default_factory=threading.Event)  # set when the server stops: trickling ends
    requested: list[tuple[str, int]] = field(default_factory=list)  # (URL path, status) in arrival order
    authorizations: list[str | None] = field(default_factory=list)  # each request's Authorization header
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        readme = read_readme(self.refdata)
        self.roots = {f"/{s.repository}/{s.commit}/": s.key for s in upstream.sources().values()
                      if (self.refdata / s.key).is_dir()}
        self.is_exception = readme.is_exception

    def url_path(self, key: str, rel: str) -> str:
        src = upstream.sources()[key]
        return f"/{src.repository}/{src.commit}/{urllib.parse.quote(rel)}"

    def resolve(self, url_path: str) -> Path | None:
        """The copy served at ``url_path``, or None (404)."""
        path = urllib.parse.unquote(url_path)
        for prefix, key in self.roots.items():
            if path.startswith(prefix):
                rel = path[len(prefix):]
                file = self.refdata / key / rel
                inside = file.resolve().is_relative_to((self.refdata / key).resolve())
                if inside and file.is_file() and not self.is_exception(f"{key}/{rel}"):
                    return file
        return None


def _handler(files: RawFiles) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            url_path = urllib.parse.urlsplit(self.path).path
            file = files.resolve(url_path)
            with files.lock:
                files.requested.append((url_path, 200 if file else 404))
                files.authorizations.append(self.headers.get("Authorization"))
            if file is None:
                self.send_error(404)
                return
            body = file.read_bytes()
            if url_path in files.tamper:
                body = bytes([body[0] ^ 1]) + body[1:]
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if url_path in files.trickle:  # bounded: one pass over the body, ended by the client or the stop
                for i in range(len(body)):
                    try:
                        self.wfile.write(body[i:i + 1])
                        self.wfile.flush()
                    except OSError:
                        break
                    if files.stop.wait(1.0):
                        break
                self.close_connection = True
                return
            if url_path in files.cut:
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass  # quiet: the test reads ``requested``

    return Handler


@contextmanager
def serve(files: RawFiles) -> Iterator[str]:
    """Serve ``files`` on 127.0.0.1 (an ephemeral port) in a thread; yields the base URL; stops on exit."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(files))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="raw-files", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        files.stop.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
