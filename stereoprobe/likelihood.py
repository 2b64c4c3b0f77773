"""Grouped likelihood scoring: the contract between the solver, the providers, the scorer and the readers.

Likelihood probes (GlobalBias, DBB's log-probability mode, DBB-SG) score many short texts. One inspect sample
per text costs far more harness time and log space than the model work, so a sample holds a *group* of texts
(e.g. the sentences of one GlobalBias name group x template), scored in one model request and stored compactly.

A **text item** (a dict, kept in the sample metadata) is::

    {"id": "ARAB_F:0:12:t1", "text": "My name is Amira, I am smart.",
     "context": None,          # optional prefix of text whose tokens are conditioned on but not summed
     "encoder_text": None,     # optional encoder input of encoder-decoder models
     "mlm_max_length": None}   # optional truncation of masked-LM inputs (lmppl's max_length)

**Provider protocol.** A provider whose API class has ``scores_text_batches = True`` (stereoprobe's
``transformers`` provider) accepts a ``generate()`` call with ``config.prompt_logprobs`` set and a user
message whose ``metadata[TEXTS_KEY]`` is a list of text items; it answers one ``ModelOutput`` whose
``metadata[RESULTS_KEY]`` is ``{"sum_logprob": [...], "n_tokens": [...], "error": [None | str, ...]}``, each
text scored exactly as the single-text prompt-log-probability path would. An in-process provider may also
offer ``stash_texts(items) -> key``: the solver then sends ``metadata[TEXTS_REF_KEY] = key`` instead of the
items, so the texts, already in the sample's metadata, are not copied into the logged model event. Other
providers get one request per text (see ``stereoprobe.solvers.likelihood``).

**Grouped one-token requests** (DBB's logprob mode). A provider instance whose ``answers_prompt_batches`` is
true (stereoprobe's ``transformers`` provider on a causal model; the route follows the loaded model, not the
class) also accepts such a call without ``prompt_logprobs`` and with :func:`one_token_request`'s settings
(``logprobs``, ``top_logprobs``, ``max_tokens=1``, temperature 0; :func:`is_one_token_request`), whose items are ``{"messages": [{"role": "system" | "user", "content": ...}, ...]}``
conversations: it answers ``metadata[RESULTS_KEY] = {"top_logprobs": [...], "error": [...]}``, per item the
answer token's ``[token, logprob]`` followed by its ``top_logprobs`` most likely ``[token, logprob]`` pairs
(or ``None`` with the reason), each exactly as one request with that conversation would give them.

**Capability.** Prompt log-probabilities are a vLLM extension of the OpenAI API; chat APIs (``openai/``,
``anthropic/``, ``google/``, ...) return none. :func:`require_logprobs` refuses such a provider by its name
before anything is priced, loaded, downloaded or paid for (``stereoprobe plan``, and ``inspect eval`` when it
builds the task), :func:`unavailable` is the one line that names the providers that work, and any other
provider gets at most one probe request per model and run (``stereoprobe.solvers.capability``).

**Compact score.** The scorer ``text_logprobs`` stores ``Score.value = {texts, unscored, mean_perplexity}``
and ``Score.metadata = {ids, sum_logprob, n_tokens, n_bytes, errors}`` (aligned lists; ``errors`` maps the
position of an unscored text to its reason; unscored texts have ``None`` values).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.model import GenerateConfig

from stereoprobe.inspect_internals import PrerequisiteError

from stereoprobe.errors import InputError
# the compact score format (keys, TextResult, its encoder and reader) lives in an inspect-free module, read by
# the post-processing steps; re-exported here, the contract's one place
from stereoprobe.likelihood_scores import (ERRORS, IDS, N_BYTES, N_TEXTS_METADATA, N_TOKENS, SCORER,  # noqa: F401
                                           SUM_LOGPROB, TEXTS_METADATA, VALUE_MEAN_PPL, VALUE_TEXTS,
                                           VALUE_UNSCORED, TextResult, encode_results, read_results,
                                           scored_part)

TEXTS_KEY = "stereoprobe_texts"
TEXTS_REF_KEY = "stereoprobe_texts_ref"  # key of items stashed in an in-process provider
RESULTS_KEY = "stereoprobe_text_scores"
REQUEST_KEYS = ("text", "context", "encoder_text", "mlm_max_length")  # item fields sent to the provider
STATE_KEY = "stereoprobe_text_results"  # ModelOutput.metadata key the solver hands to the scorer
# keys of a provider's answer, ``ModelOutput.metadata[RESULTS_KEY]`` (aligned lists): SUM_LOGPROB, N_TOKENS and
RESULT_ERROR = "error"
ANSWER_LOGPROBS = "top_logprobs"  # grouped one-token answers: per item [[token, logprob], ...] (answer first)


#: providers that can return prompt log-probabilities: stereoprobe's ``transformers`` and inspect's providers of
#: the vLLM extension (``vllm-completions``, ``vllm``, ``sglang`` and OpenAI-compatible servers, ``openai-api``);
#: whether a given OpenAI-compatible server does is checked by the run's probe request
PROMPT_LOGPROB_PROVIDERS = ("transformers", "vllm-completions", "vllm", "sglang", "openai-api",
                            "openai-api-completions")
#: inspect's providers that return no prompt log-probabilities (chat APIs, and local providers without the
#: extension): refused by name by ``stereoprobe plan`` and ``inspect eval``; a provider in neither list (a user's
#: own) meets the probe request
NO_PROMPT_LOGPROB_PROVIDERS = ("openai", "anthropic", "google", "mistral", "grok", "groq", "bedrock", "azureai",
                               "deepseek", "together", "fireworks", "perplexity", "openrouter", "moonshot", "meta",
                               "cloudflare", "sambanova", "hf-inference-providers", "litellm-proxy", "mockllm",
                               "none", "ollama", "llama-cpp-python", "hf", "transformer_lens", "nnterp")
#: providers known to return no token log-probabilities at all (DBB's logprob mode needs the answer token's)
NO_TOKEN_LOGPROB_PROVIDERS = ("anthropic",)
#: the providers that work, as the refusal names them
WORKING_PROVIDERS = ("transformers/..., vllm-completions/... or an OpenAI-compatible server that returns prompt "
                     "log-probabilities (openai-api/<service>/..., vllm/..., sglang/...)")
#: the providers that work for DBB's logprob mode (the answer token's top log-probabilities), as its refusal names them
WORKING_TOKEN_PROVIDERS = ("transformers/..., vllm-completions/... or an OpenAI-compatible server that returns "
                           "log-probabilities (openai-api/<service>/..., vllm/..., sglang/...), or a chat API that "
                           "does (openai/...)")
#: the reason a per-text result carries when the model returned no prompt log-probabilities
NO_PROMPT_LOGPROBS = "no prompt_logprobs returned"


class LogprobsUnavailable(InputError, PrerequisiteError):
    """The model cannot return the log-probabilities a likelihood task needs: one line in ``stereoprobe plan``
    (an ``InputError``) and in ``inspect eval``, which stops the run (a ``PrerequisiteError``)."""

    def __init__(self, message: str) -> None:
        InputError.__init__(self, message)
        self.message = message


class MalformedReply(LogprobsUnavailable):
    """A reply without a field the task reads, after the capability probe passed (a server whose later replies
    differ from its first): raised at the first such reply, it fails its sample and inspect's ``fail_on_error``
    stops the run; the command line prints its one line (:func:`stereoprobe.errors.reason`) and exits 1, with
    no traceback (:mod:`stereoprobe.preflight.stops`). ``raised`` keeps the lines of this process's, for that
    exit code (inspect's command line exits 0 after a run that ended in error)."""

    raised: list[str] = []

    def __init__(self, message: str) -> None:
        super().__init__(message)
        from stereoprobe.errors import reason

        if len(MalformedReply.raised) < 100:
            MalformedReply.raised.append(reason(self, fold=True))


def malformed_reply(model: object, field: str, item: str | None = None) -> MalformedReply:
    """The one line of a malformed reply: the task and sample it belongs to (the running sample's, read from
    inspect), the item of the sample (a question, a group of texts) and the missing or malformed ``field``."""
    from stereoprobe.inspect_internals import active_sample

    task, sample = active_sample()
    part = f", {item}" if item else ""
    return MalformedReply(f"task {task}, sample {sample}{part}: the reply of {model} has no {field}, which the "
                          f"task reads (a malformed reply after the capability probe passed); the run stops")


#: what a provider raises when a reply it got cannot be read (a field missing or of the wrong type, e.g.
#: ``choices: null``); a request that fails raises the API's or the HTTP client's own errors instead
UNREADABLE_REPLY = (TypeError, KeyError, AttributeError, IndexError)


def unreadable_reply(model: object, ex: BaseException, item: str | None = None) -> MalformedReply:
    """:func:`malformed_reply` for a reply the provider could not read (``ex``, one of :data:`UNREADABLE_REPLY`)."""
    return malformed_reply(model, f"readable choices (reading it raised {type(ex).__name__})", item)


def unavailable(model: str, what: str = "likelihood scoring") -> str:
    """The one refusal line: ``model`` returns no prompt log-probabilities, and which providers do."""
    return (f"{model} returns no prompt log-probabilities, which {what} needs (a chat API scores no given "
            f"text): use {WORKING_PROVIDERS}")


def one_token_request(top_logprobs: int) -> GenerateConfig:
    """The one-token request: one greedy token (temperature 0, ``max_tokens=1``) with its log-probability and
    the ``top_logprobs`` most likely tokens' (DBB's logprob mode, :data:`stereoprobe.dbb.contract.LOGPROB`)."""
    return GenerateConfig(logprobs=True, top_logprobs=top_logprobs, max_tokens=1, temperature=0.0)


def is_one_token_request(config: GenerateConfig) -> bool:
    """Whether ``config`` asks for :func:`one_token_request` and nothing else (the grouped one-token route)."""
    return bool(config.logprobs and config.max_tokens == 1 and not config.temperature and not config.num_choices
                and config.prompt_logprobs is None and not config.stop_seqs and not config.response_schema)


def logprob_requirement(config: Any) -> str | None:
    """What a task's ``GenerateConfig`` needs of the model: ``"prompt"`` (prompt log-probabilities: GlobalBias,
    DBB-SG), ``"token"`` (the answer token's top log-probabilities: DBB's logprob mode) or None."""
    if config is None:
        return None
    if getattr(config, "prompt_logprobs", None):
        return "prompt"
    if getattr(config, "logprobs", None):
        return "token"
    return None


def require_logprobs(model: str, requirement: str | None, what: str) -> None:
    """Refuse ``model`` (``provider/name``) for a task with ``requirement`` (:func:`logprob_requirement`) when
    its provider cannot serve it: :class:`LogprobsUnavailable` naming the providers that work."""
    provider = model.split("/", 1)[0]
    if requirement == "prompt" and provider in NO_PROMPT_LOGPROB_PROVIDERS:
        raise LogprobsUnavailable(unavailable(model, what))
    if requirement == "token" and provider in NO_TOKEN_LOGPROB_PROVIDERS:
        raise LogprobsUnavailable(f"{model} returns no token log-probabilities, which {what} needs: use "
                                  f"{WORKING_TOKEN_PROVIDERS}, or -T mode=sampled")


def check_items(items: Sequence[Mapping[str, Any]]) -> None:
    """Raise ``ValueError`` naming the first malformed text item (missing text, context not a prefix)."""
    for k, it in enumerate(items):
        if not isinstance(it, Mapping) or not isinstance(it.get("text"), str) or not it["text"]:
            raise ValueError(f"text item {k}: needs a non-empty 'text' string, got {it!r}")
        ctx = it.get("context")
        if ctx is not None and not it["text"].startswith(ctx):
            raise ValueError(f"text item {k} ({it.get('id')}): its context is not a prefix of its text")
