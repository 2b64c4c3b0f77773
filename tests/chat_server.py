"""A local OpenAI-compatible chat server (stdlib only, 127.0.0.1) that counts the requests it gets.

It plays an endpoint that returns no log-probabilities at all: every ``POST .../chat/completions`` or
``.../completions`` is answered with the text "a)" and no ``logprobs`` nor ``prompt_logprobs``, whatever the
request asks for. ``hang=True`` plays an endpoint that accepts the connection and never answers; ``status=500``
(or 401, 404, 429) answers every request with that HTTP status; ``close=True`` closes the connection without
an answer; ``token_logprobs=True`` returns the answer token's log-probability without top log-probabilities.
``after_probe`` plays an endpoint that passes the capability probe and then breaks: the probe request (its text
is ``PROBE_TEXT``) gets every log-probability asked for (prompt, answer token, top ones), every later request a
malformed reply: ``"no_logprobs"`` (a plain answer without any), ``"null"`` (``choices: null``) or
``"no_top"`` (the answer token's log-probability without its top ones).
Tests count how many requests a run sends before it is refused (``server.requests``).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class ChatServer:
    """The running server: its base URL (``http://127.0.0.1:PORT/v1``) and the bodies of the requests it got."""

    base_url: str
    bodies: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def requests(self) -> int:
        with self.lock:
            return len(self.bodies)


PROBE_TEXT = "The sky is blue."  # stereoprobe.solvers.capability.PROBE_TEXT (kept free of the package)
#: vLLM's prompt log-probabilities: None for the first token, then {token id: {logprob, decoded_token, rank}}
PROMPT_LOGPROBS = [None] + [{str(k): {"logprob": -1.0 - k, "decoded_token": w, "rank": 1}}
                            for k, w in enumerate([" sky", " is", " blue", "."])]
TOP = [{"token": t, "logprob": v, "bytes": None} for t, v in (("a", -0.1), ("b", -2.5))]


def _completion(body: dict[str, Any], chat: bool, token_logprobs: bool = False, reply: str = "a)",
                full: bool = False) -> dict[str, Any]:
    """An answer; ``full``: with every log-probability (prompt, answer token and its top ones)."""
    choice: dict[str, Any] = {"index": 0, "finish_reason": "stop", "logprobs": None}
    if (token_logprobs or full) and chat:
        choice["logprobs"] = {"content": [{"token": "a", "logprob": -0.1, "bytes": None,
                                           "top_logprobs": TOP if full else []}]}
    if chat:
        choice["message"] = {"role": "assistant", "content": reply}
    else:
        choice["text"] = reply
        if full:
            choice["logprobs"] = {"tokens": ["a"], "token_logprobs": [-0.1], "text_offset": [0],
                                  "top_logprobs": [{t["token"]: t["logprob"] for t in TOP}]}
            choice["prompt_logprobs"] = PROMPT_LOGPROBS
    answer = {"id": "cmpl-local", "object": "chat.completion" if chat else "text_completion",
              "created": int(time.time()), "model": str(body.get("model", "local")), "choices": [choice],
              "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}
    if full and chat:
        answer["prompt_logprobs"] = PROMPT_LOGPROBS  # vLLM puts the chat route's at the top level
    return answer


def _after_probe(body: dict[str, Any], chat: bool, malformed: str) -> dict[str, Any]:
    """The answer of a server that passes the probe and then breaks (see the module's docstring)."""
    if PROBE_TEXT in json.dumps(body.get("messages", body.get("prompt"))):
        return _completion(body, chat, full=True)
    if malformed == "null":
        return {**_completion(body, chat), "choices": None}
    return _completion(body, chat, token_logprobs=malformed == "no_top")


@dataclass(frozen=True)
class Behaviour:
    """How the server answers a POST (see the module's docstring)."""

    status: int | None = None
    close: bool = False
    token_logprobs: bool = False
    reply: str = "a)"
    after_probe: str | None = None


def _handler(server: ChatServer, hang: threading.Event | None, how: Behaviour = Behaviour()
             ) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
            pass

        def do_GET(self) -> None:  # GET /v1/models
            self._send({"object": "list", "data": [{"id": "local", "object": "model"}]})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                body = {}
            with server.lock:
                server.bodies.append(body)
            if hang is not None:
                hang.wait(600)  # accepted, never answered (until the test ends)
                return
            if how.close:
                self.close_connection = True
                self.connection.close()
                return
            if how.status is not None:
                self._send({"error": {"message": f"status {how.status}", "type": "test"}}, how.status)
                return
            chat = self.path.rstrip("/").endswith("chat/completions")
            if how.after_probe is not None:
                self._send(_after_probe(body, chat, how.after_probe))
                return
            self._send(_completion(body, chat=chat, token_logprobs=how.token_logprobs, reply=how.reply))

        def _send(self, payload: dict[str, Any], status: int = 200) -> None:
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextmanager
def chat_server(hang: bool = False, status: int | None = None, close: bool = False,
                token_logprobs: bool = False, reply: str = "a)", after_probe: str | None = None
                ) -> Iterator[ChatServer]:
    """Run the server on a free port of 127.0.0.1 for the length of the ``with`` block; every answer's text is
    ``reply``."""
    release = threading.Event() if hang else None
    state = ChatServer(base_url="")
    how = Behaviour(status, close, token_logprobs, reply, after_probe)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state, release, how))
    httpd.daemon_threads = True
    httpd.handle_error = lambda request, client_address: None  # type: ignore[method-assign]  # a client gone
    state.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        if release is not None:
            release.set()
        httpd.shutdown()
        httpd.server_close()
