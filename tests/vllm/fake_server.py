"""A small fake vLLM server: the OpenAI-compatible ``/v1/completions`` endpoint with vLLM's ``prompt_logprobs``
extension, ``/tokenize`` and ``/v1/models``, answering from a local transformers causal LM on 127.0.0.1.

Formats follow vLLM's OpenAI-compatible server (github.com/vllm-project/vllm,
``vllm/entrypoints/openai/protocol.py``): ``prompt_logprobs`` is a list with ``None`` for the first prompt
token, then per token a mapping ``token_id -> {"logprob", "rank", "decoded_token"}`` whose first entry is
the prompt token itself, followed by the ``prompt_logprobs`` top alternatives (none for 0). A string prompt
is tokenized with the tokenizer's special tokens, a token-id prompt is used verbatim; completion ``logprobs``
use the legacy parallel arrays.

The log-probabilities come from one plain forward pass per prompt (full logits, float32 log-softmax), an
independent computation from stereoprobe's batched scorer. The server runs in a daemon thread, binds an
ephemeral port and shuts itself down after ``lifetime`` seconds at the latest.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import torch


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024  # inspect opens many connections at once (the default backlog is 5)


class FakeVLLM:
    """Serve ``model``/``tokenizer`` under the name ``served_name``; use as a context manager."""

    def __init__(self, model: Any, tokenizer: Any, served_name: str, max_model_len: int = 2048,
                 lifetime: float = 300.0) -> None:
        self.model, self.tokenizer, self.served_name = model.eval(), tokenizer, served_name
        self.max_model_len, self.lifetime = max_model_len, lifetime
        self.requests: list[dict[str, Any]] = []  # bodies of /v1/completions requests, for the test to inspect
        self._lock = threading.Lock()  # one forward pass at a time
        self._server: ThreadingHTTPServer | None = None
        self._timer: threading.Timer | None = None

    # ---- model ------------------------------------------------------------------------------------------
    def _ids(self, prompt: Any) -> list[int]:
        if isinstance(prompt, list):
            return [int(t) for t in prompt]
        return list(self.tokenizer(str(prompt), add_special_tokens=True).input_ids)

    def _decode(self, token_id: int) -> str:
        return str(self.tokenizer.decode([token_id]))

    @torch.inference_mode()
    def _logprobs(self, ids: list[int]) -> torch.Tensor:
        with self._lock:
            logits = self.model(input_ids=torch.tensor([ids])).logits[0].float()
        return torch.log_softmax(logits, dim=-1)

    def _prompt_logprobs(self, ids: list[int], lp: torch.Tensor, k: int) -> list[dict[str, Any] | None]:
        out: list[dict[str, Any] | None] = [None]
        for t in range(1, len(ids)):
            row = lp[t - 1]
            tok = ids[t]
            rank = int((row > row[tok]).sum()) + 1
            entry = {str(tok): {"logprob": float(row[tok]), "rank": rank, "decoded_token": self._decode(tok)}}
            vals, idx = row.topk(k) if k > 0 else (row[:0], row[:0].long())  # 0: the prompt token only
            for r, (v, i) in enumerate(zip(vals.tolist(), idx.tolist()), start=1):
                if str(i) not in entry:
                    entry[str(i)] = {"logprob": float(v), "rank": r, "decoded_token": self._decode(int(i))}
            out.append(entry)
        return out

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        prompts = body["prompt"]
        if isinstance(prompts, str) or (isinstance(prompts, list) and prompts and isinstance(prompts[0], int)):
            prompts = [prompts]
        choices = []
        usage_in = 0
        for index, prompt in enumerate(prompts):
            ids = self._ids(prompt)
            usage_in += len(ids)
            lp = self._logprobs(ids)
            last = lp[-1]
            nxt = int(last.argmax())
            choice: dict[str, Any] = {"index": index, "text": self._decode(nxt), "finish_reason": "length",
                                      "logprobs": None, "stop_reason": None}
            if body.get("logprobs") is not None:
                vals, idx = last.topk(int(body["logprobs"]))
                choice["logprobs"] = {
                    "tokens": [self._decode(nxt)], "token_logprobs": [float(last[nxt])], "text_offset": [0],
                    "top_logprobs": [{self._decode(int(i)): float(v) for v, i in zip(vals.tolist(), idx.tolist())}],
                }
            if body.get("prompt_logprobs") is not None:
                choice["prompt_logprobs"] = self._prompt_logprobs(ids, lp, int(body["prompt_logprobs"]))
            choices.append(choice)
        n_out = len(choices)
        return {"id": f"cmpl-{time.monotonic_ns()}", "object": "text_completion", "created": int(time.time()),
                "model": body.get("model", self.served_name), "choices": choices,
                "usage": {"prompt_tokens": usage_in, "completion_tokens": n_out, "total_tokens": usage_in + n_out}}

    # ---- HTTP -------------------------------------------------------------------------------------------
    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def _send(self, code: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/") in {"/v1/models", "/models"}:
                    self._send(200, {"object": "list", "data": [{"id": fake.served_name, "object": "model",
                                                                 "owned_by": "vllm", "max_model_len": fake.max_model_len}]})
                elif self.path.rstrip("/") == "/health":
                    self._send(200, {})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                try:
                    if self.path.rstrip("/") == "/tokenize":
                        ids = list(fake.tokenizer(str(body["prompt"]),
                                                  add_special_tokens=bool(body.get("add_special_tokens", True))).input_ids)
                        self._send(200, {"tokens": ids, "count": len(ids), "max_model_len": fake.max_model_len})
                    elif self.path.rstrip("/") == "/v1/completions":
                        fake.requests.append(body)
                        self._send(200, fake.completion(body))
                    else:
                        self._send(404, {"error": {"message": f"no route {self.path}"}})
                except Exception as ex:  # noqa: BLE001 - reported to the client as a server error
                    self._send(500, {"error": {"message": f"{type(ex).__name__}: {ex}"}})

        return Handler

    def __enter__(self) -> FakeVLLM:
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="fake-vllm", daemon=True).start()
        self._timer = threading.Timer(self.lifetime, self._server.shutdown)
        self._timer.daemon = True
        self._timer.start()
        return self

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __exit__(self, *exc: Any) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
