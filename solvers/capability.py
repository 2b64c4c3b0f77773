"""The likelihood routes' capability check: at most one probe request per model and run, refused in one line.

GlobalBias, DBB-SG (prompt log-probabilities) and DBB's ``-T mode=logprob`` (the answer token's top
log-probabilities) pay for nothing useful on a model that does not return what they read. The check runs in
three places, cheapest first (:mod:`stereoprobe.likelihood` holds the provider lists and the messages):

1. **When the task is built** (``inspect eval`` builds every task with its model before anything runs, and
   :mod:`stereoprobe.preflight` once before the models exist, by their names): :func:`check_before_run`
   refuses a known chat provider by its name, before any model loads, any download or request; then, for an
   OpenAI-compatible server (:data:`BUILD_TIME_PROVIDERS`), it sends the one probe request there, on a fresh
   client of its own that retries nothing (in a worker thread: the run's event loop is not ours), so a refusal
   is one line naming the base URL (credentials redacted) and the run never starts. A generation task sends
   a reachability probe instead (one token, nothing else asked), so a dead endpoint is refused in one line
   rather than retried silently for minutes.
2. **Before a sample's first paid call** (:func:`check_logprobs`, the tasks' ``setup`` step): providers the
   build-time probe does not reach (``vllm/`` and ``sglang/``, which may start their server on the first
   request; a task built outside ``inspect eval``, from Python) get the probe here, on a copy of the
   provider whose OpenAI client retries nothing (one request, whatever the server answers). Concurrent
   samples wait for the one probe and share its verdict.
3. Per group, in :mod:`stereoprobe.solvers.likelihood`: a group whose every text comes back without them.

**One request per model and run.** The verdict is kept per model object (the one ``inspect eval`` shares
between its tasks), so ``inspect eval stereoprobe/dbb stereoprobe/dbb_sg`` probes once: the probe asks
for both kinds at once (``logprobs``, ``top_logprobs=20`` and ``prompt_logprobs=1``; only the first two of a
provider known to return no prompt log-probabilities) and the verdict answers both tasks.

**A short timeout.** The probe waits :data:`DEFAULT_TIMEOUT` seconds (``$STEREOPROBE_PROBE_TIMEOUT``), with no
retry: an endpoint that accepts and never answers is refused in one line instead of holding the run.
Providers that score text batches in process (stereoprobe's ``transformers``) always return both kinds and
are never probed.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import os
import weakref
from dataclasses import dataclass, replace
from typing import Any

import anyio
from inspect_ai.model import ChatMessageUser, GenerateConfig, Model, ModelOutput, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from stereoprobe.dbb.contract import LOGPROB
from stereoprobe.inspect_internals import active_model
from stereoprobe.preflight import built
from stereoprobe.providers.vllm_neutral import neutral_vllm_config
from stereoprobe.likelihood import (
    NO_PROMPT_LOGPROB_PROVIDERS,
    LogprobsUnavailable,
    require_logprobs,
    unavailable,
    WORKING_TOKEN_PROVIDERS,
)

__all__ = ["BUILD_TIME_PROVIDERS", "DEFAULT_TIMEOUT", "PROBE_TEXT", "TIMEOUT_ENV", "Verdict", "check_before_run",
           "check_logprobs", "probe_timeout", "require_logprobs_setup"]

#: the probe request's text: at least two scored tokens in any tokenizer
PROBE_TEXT = "The sky is blue."
#: the environment variable of the probe's timeout (seconds)
TIMEOUT_ENV = "STEREOPROBE_PROBE_TIMEOUT"
DEFAULT_TIMEOUT = 60.0
#: providers probed when the task is built (a plain HTTP client of a server the user names)
BUILD_TIME_PROVIDERS = ("openai-api", "openai-api-completions", "openai")
TOP_LOGPROBS = LOGPROB.top_logprobs  # DBB's logprob mode reads the answer token's top 20 (stereoprobe.dbb.contract)


@dataclass(frozen=True)
class Verdict:
    """What a model's probe found: prompt / answer-token log-probabilities returned (None: not asked), or the
    reason the probe got no answer (``failed``)."""

    prompt: bool | None
    token: bool | None
    got: str
    failed: bool = False
    url: str = ""  # the base URL probed, credentials redacted ("" where the provider names none)

    def knows(self, requirement: str | None) -> bool:
        return self.failed or requirement is None or getattr(self, requirement) is not None

    def refusal(self, model: str, requirement: str | None, what: str) -> LogprobsUnavailable | None:
        """The one-line refusal of ``requirement`` (None when the probe found it returned; ``requirement`` None:
        the endpoint answered)."""
        if self.failed:
            at = f" at {self.url}" if self.url else ""
            kind = "reachability" if requirement is None else "capability"
            return LogprobsUnavailable(f"{model}: the {kind} probe of {what} (one request{at}) failed: {self.got}; "
                                       f"check that the server answers at its base URL")
        if requirement is None or getattr(self, requirement):
            return None
        if requirement == "prompt":
            return LogprobsUnavailable(f"{unavailable(model, what)} (the capability probe, one request, got: "
                                       f"{self.got})")
        return LogprobsUnavailable(f"{model} returns no token log-probabilities, which {what} needs (the "
                                   f"capability probe, one request, got: {self.got}): use {WORKING_TOKEN_PROVIDERS}, "
                                   f"or -T mode=sampled")


_VERDICTS: weakref.WeakKeyDictionary[Any, Verdict] = weakref.WeakKeyDictionary()
_LOCKS: weakref.WeakKeyDictionary[Any, asyncio.Lock] = weakref.WeakKeyDictionary()


def probe_timeout() -> float:
    """The probe's timeout in seconds: ``$STEREOPROBE_PROBE_TIMEOUT`` (a positive number) or the default."""
    text = os.environ.get(TIMEOUT_ENV, "").strip()
    if not text:
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise LogprobsUnavailable(f"environment variable {TIMEOUT_ENV} must be a positive number of seconds, "
                                  f"got {TIMEOUT_ENV}={text!r}")
    return value


def _provider(model: Model | str) -> str:
    return str(model).split("/", 1)[0]


def _probe_config(model: Model | str, requirement: str | None = "prompt") -> GenerateConfig:
    """Both kinds at once (one request answers every likelihood route), one token, no retry; ``requirement``
    None: one token and nothing else (a generation task's reachability probe)."""
    timeout = probe_timeout()
    if requirement is None:
        return GenerateConfig(max_tokens=1, max_retries=0, timeout=max(1, int(timeout)),
                              attempt_timeout=max(1, int(timeout)))
    asks_prompt = _provider(model) not in NO_PROMPT_LOGPROB_PROVIDERS
    return GenerateConfig(max_tokens=1, temperature=0.0, logprobs=True, top_logprobs=TOP_LOGPROBS,
                          prompt_logprobs=1 if asks_prompt else None, max_retries=0,
                          timeout=max(1, int(timeout)), attempt_timeout=max(1, int(timeout)))


def _verdict(output: ModelOutput | None, error: str | None, config: GenerateConfig) -> Verdict:
    if output is None:
        return Verdict(prompt=False, token=False, got=error or "no answer", failed=True)
    choice = output.choices[0] if output.choices else None
    if output.error is not None and choice is None:
        return Verdict(prompt=False, token=False, got=output.error, failed=True)
    if not config.logprobs:  # the reachability probe: the endpoint answered, nothing else is known
        return Verdict(prompt=None, token=None, got="an answer")
    prompt = bool(choice is not None and choice.prompt_logprobs is not None and choice.prompt_logprobs.content)
    content = choice.logprobs.content if choice is not None and choice.logprobs is not None else []
    token = bool(content and content[0].top_logprobs)  # DBB logprob reads the answer token's top log-probabilities
    found = [name for name, ok in (("prompt", prompt), ("token", token)) if ok]
    got = output.error or ("log-probabilities of kind " + " and ".join(found) if found else "no log-probabilities")
    if content and not token:
        got += " (the answer token's log-probability without its top log-probabilities)"
    return Verdict(prompt=prompt if config.prompt_logprobs else None, token=token, got=got)


def _error_text(ex: BaseException, timeout: float) -> str:
    """The probe's failure in one line, credentials redacted (a provider's error may quote its URL or key)."""
    from stereoprobe.harmless import safe_error

    if isinstance(ex, TimeoutError):
        return f"no answer within {timeout:g} s (${TIMEOUT_ENV} sets the limit)"
    os_error = _os_error(ex)  # the system's own text of a refused or unreachable connection: no credential in it
    return safe_error(ex) + (f" (the system said: {os_error})" if os_error else "")


def _os_error(ex: BaseException) -> str:
    """``os.strerror`` of the first OSError with an errno in the chain of ``ex`` ("Connection refused"), or ""."""
    seen: set[int] = set()
    cur: BaseException | None = ex
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, OSError) and cur.errno:
            return os.strerror(cur.errno)
        cur = cur.__cause__ or cur.__context__
    return ""


async def _no_retry_api(model: Model) -> Any | None:
    """The model's provider with an OpenAI client that retries nothing (the SDK's own two retries off,
    ``with_options(max_retries=0)``; a shallow copy, so the run's client keeps its retries), its server started
    first (``vllm/`` starts one on the first request); ``None`` for a provider without such a client (the
    probe then goes through inspect with ``max_retries=0``)."""
    from stereoprobe.inspect_internals import start_provider_server

    await start_provider_server(model.api)
    client = getattr(model.api, "client", None)
    if client is None or not callable(getattr(client, "with_options", None)):
        return None
    api = copy.copy(model.api)
    api.client = client.with_options(max_retries=0)
    return api


async def _probe(model: Model, direct: bool, requirement: str | None = "prompt") -> Verdict:
    """One probe request to ``model``, straight to its provider, outside inspect's retries (``direct``: the
    provider as it is, its client built without retries; else :func:`_no_retry_api`): one request is one."""
    config = _probe_config(model, requirement)
    timeout = probe_timeout()
    message = [ChatMessageUser(content=PROBE_TEXT)]
    try:
        with anyio.fail_after(timeout):
            api = model.api if direct else await _no_retry_api(model)
            if api is not None:
                sent = model.config.merge(config)
                neutral_vllm_config(str(model), sent)  # outside inspect's hooks: vLLM's neutral values here too
                out = await api.generate(message, [], "none", sent)
                out = out[0] if isinstance(out, tuple) else out
                if isinstance(out, BaseException):
                    raise out
            else:
                out = await model.generate(message, config=config)
    except Exception as ex:  # noqa: BLE001 (any failure of the one request is the verdict, in one line)
        return _verdict(None, _error_text(ex, timeout), config)
    return _verdict(out, None, config)


def _store(api: Any, verdict: Verdict) -> Verdict:
    old = _VERDICTS.get(api)
    if old is not None and not old.failed and not verdict.failed:
        verdict = replace(verdict, prompt=verdict.prompt if verdict.prompt is not None else old.prompt,
                          token=verdict.token if verdict.token is not None else old.token)
    _VERDICTS[api] = verdict
    return verdict


def _in_process(model: Model) -> bool:
    return bool(getattr(model.api, "scores_text_batches", False))


async def check_logprobs(model: Model | None, requirement: str, what: str = "likelihood scoring") -> None:
    """Before a sample's first paid call: :class:`LogprobsUnavailable` (which stops the run) unless ``model``
    returns ``requirement`` ("prompt" or "token") log-probabilities, by the model's one probe request
    (shared with every task and sample of the run; none for in-process providers)."""
    model = model or get_model()
    if _in_process(model):
        return
    api = model.api
    verdict = _VERDICTS.get(api)
    if verdict is None or not verdict.knows(requirement):
        lock = _LOCKS.setdefault(api, asyncio.Lock())
        async with lock:  # the first sample here probes, the others wait for its verdict
            verdict = _VERDICTS.get(api)
            if verdict is None or not verdict.knows(requirement):
                verdict = _store(api, await _probe(model, direct=False))
    refusal = verdict.refusal(str(model), requirement, what)
    if refusal is not None:
        raise refusal


def _named_url(api: Any) -> str:
    """The base URL the provider sends to, credentials hidden: the one given (``-M base_url``,
    ``--model-base-url``) or, for ``openai/``, the one its client took from ``OPENAI_BASE_URL`` (the provider
    keeps ``base_url`` None then), through the allow-list writer (:func:`stereoprobe.harmless.safe_url`); ""
    where neither names one."""
    from stereoprobe.harmless import safe_url

    url = api.base_url or getattr(getattr(api, "client", None), "base_url", None)
    return safe_url(str(url).rstrip("/")) if url else ""


def _fresh_probe(model: Model, requirement: str | None = "prompt") -> Verdict:
    """The probe on a client of its own, in a worker thread with its own event loop (the caller may be inside
    the run's loop, whose client it must not share). Its HTTP client retries nothing (the OpenAI client's own
    two retries off, ``max_retries=0``), and inspect's retries are not in its path: one request is one."""
    api = model.api
    url = _named_url(api)

    async def run() -> Verdict:
        fresh = get_model(str(model), config=model.config, base_url=api.base_url, api_key=api.api_key,
                          memoize=False, **{**model.model_args, "max_retries": 0})
        try:
            return replace(await _probe(fresh, direct=True, requirement=requirement), url=url)
        finally:
            try:
                await fresh.api.aclose()
            except Exception:  # noqa: BLE001 (closing a client that failed to answer is not worth an error)
                pass

    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="stereoprobe-probe") as pool:
        return pool.submit(asyncio.run, run()).result()


def check_before_run(requirement: str | None, what: str) -> None:
    """When a task is built under ``inspect eval`` (its model active): refuse, in one line, a provider known to
    return no ``requirement`` log-probabilities (no request), then probe an OpenAI-compatible server once per
    model and run; ``requirement`` None (a generation task): one request of one token, that the endpoint
    answers. Nothing without an active model (a task built from Python)."""
    model = active_model()
    if model is None:
        build = built.current()
        if build is not None:  # the check before the run: the command line's model names only, no model yet
            for name in build.models if requirement is not None else ():
                require_logprobs(name, requirement, what)
            build.defer(lambda: check_before_run(requirement, what))  # again at inspect's build, with its model
        return
    if requirement is not None:
        require_logprobs(str(model), requirement, what)
    if _in_process(model) or _provider(model) not in BUILD_TIME_PROVIDERS:
        return
    verdict = _VERDICTS.get(model.api)
    if verdict is None or not verdict.knows(requirement):
        probe_timeout()  # a bad setting is refused before the request
        verdict = _store(model.api, _fresh_probe(model, requirement))
    refusal = verdict.refusal(str(model), requirement, what)
    if refusal is not None:
        raise refusal


@solver
def require_logprobs_setup(requirement: str = "prompt", what: str = "likelihood scoring") -> Solver:
    """A task's setup step: :func:`check_logprobs` before the sample's first paid call."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        await check_logprobs(None, requirement, what)
        return state

    return solve
