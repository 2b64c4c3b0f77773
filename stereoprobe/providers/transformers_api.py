"""``transformers/<model>``: an in-process inspect model API with prompt log-probabilities.

``--model transformers/default`` is the bundled SmolLM2-135M-Instruct (see :mod:`.default_model`);
``transformers/<hub id or local folder>`` loads any causal, masked (BERT/RoBERTa) or encoder-decoder model.

Requests from concurrent samples go to one worker thread that batches whatever is waiting (no idle wait
beyond a few milliseconds for stragglers): likelihood requests are scored together with length bucketing and
prefix sharing (:mod:`.scoring`); chat requests with the same generation settings are generated together.

Prompt log-probabilities (``GenerateConfig.prompt_logprobs``) follow inspect's vLLM path: the raw text of the
last user message (no chat template) is tokenized as vLLM's completions endpoint does (the tokenizer's own
special tokens, e.g. a Llama BOS; SmolLM2 adds none), and every token after the first gets an entry.
``-M score_first_token=true`` prepends the BOS token (EOS if the tokenizer has no BOS, as lm-eval's
``prefix_token_id``) unless the text already starts with it, so every text token is scored: this equals
lm-eval HFLM ``loglikelihood_rolling``. Masked LMs give every non-special token its pseudo-log-likelihood
term; encoder-decoder models score every decoder token (special tokens included) given the encoder text in
the user message's ``metadata["encoder_text"]`` (empty if absent).

Structured output: ``GenerateConfig.response_schema`` is enforced by grammar-constrained decoding with
xgrammar (``pip install 'stereoprobe[structured]'``; a clear error names it when missing). A transformers
logits processor masks, at every step, the tokens that cannot continue a JSON document valid under the
schema (compact JSON: no free whitespace; strict: no properties beyond the schema's), then the usual greedy or
temperature/top-p/top-k sampling picks among the rest, and once the document is complete only EOS is allowed.
Grammars are compiled once per tokenizer and schema; requests with different schemas are never batched
together. ``max_tokens`` stays a hard cap: a document cut short is returned as is (stop reason
``max_tokens``) for the caller to record.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
import uuid
from functools import lru_cache
from typing import Any

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    Logprobs,
    ModelAPI,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from stereoprobe.likelihood import TEXTS_KEY, TEXTS_REF_KEY
from stereoprobe import params as P
from stereoprobe.providers.args import MODEL_ARGS, WorkerRequest
from stereoprobe.providers.budget import MIN_TOKENS, free_memory, generation_rows, scoring_token_budget
from stereoprobe.providers.generation import run_generate
from stereoprobe.providers.gathering import gather
from stereoprobe.providers.cached_graphs import attach_cached, static_cache_choice
from stereoprobe.providers.graphs import GraphedForward, graph_choice
from stereoprobe.providers.microbatch import auto_flag, resolve_shape
from stereoprobe.providers.loading import (DEFAULT_NAME, context_window, load, model_kind, pick_device, pick_dtype,
                                           register_model_info)
from stereoprobe.providers.planning import BatchPolicy
from stereoprobe.providers.sampling import is_sampling
from stereoprobe.providers.scoring import CausalScorer, TokenScores, masked_pll, seq2seq_logprobs
from stereoprobe.providers.scorer_process import LoadSpec, scorer_process
from stereoprobe.providers.settings import check_config, check_scoring_input
from stereoprobe.providers.structured import SchemaLogitsProcessor, compiled_grammar, require_xgrammar
from stereoprobe.providers.text_batches import (answers_output, prepare_items, prepare_prompts, results_output,
                                                run_answers, score_texts, to_logprobs)
from stereoprobe.providers.validation import (ModelArgError, chat_template_text, check_generate_config, model_int,
                                              one_line_setup, strict_bool, top_k_arg)

__all__ = ["DEFAULT_MAX_TOKENS", "DEFAULT_NAME", "TransformersAPI", "compiled_grammar", "context_window", "load",
           "model_kind", "pick_device", "pick_dtype"]

DEFAULT_MAX_TOKENS = 1024
FLUSH_BATCHES = 8  # the worker takes queued requests worth at most this many forward passes at a time


class TransformersAPI(ModelAPI):
    """In-process transformers model for inspect, with prompt log-probabilities. See the module docstring.

    Model args (``-M name=value``): ``device``, ``dtype``, ``batch_size`` (forward batch for scoring, default
    64), ``gen_batch_size`` (default 16), ``prefix_sharing`` (default true), ``score_first_token`` (default
    false), ``kind`` (causal/masked/seq2seq, detected), ``tokenizer`` (path or id), ``chat_template`` (a
    Jinja string or a file), ``mlm_max_length`` (truncate masked-LM inputs, e.g. 22 as lmppl),
    ``batch_invariant`` (fixed micro-batch shapes, :mod:`.microbatch`; default auto = on for CUDA),
    ``microbatch_tokens`` (their padded tokens, default 4096), ``continuous_batching`` (transformers'
    ``generate_batch`` for plain requests, :mod:`.generation_batching`; default auto = on for CUDA),
    ``repetition_penalty`` (transformers' own, default 1.0 = none), ``top_k`` (when a request sets none;
    default ``none`` = no top-k), ``scorer_process`` (score in a process of its own, :mod:`.scorer_process`),
    ``revision``, ``trust_remote_code``, ``attn_implementation``, ``max_connections`` (default 128).

    Every ``GenerateConfig`` field is honoured, acted on by inspect, or an error naming it
    (:mod:`.settings`); ``frequency_penalty``, ``presence_penalty`` and ``logit_bias`` follow OpenAI
    (:mod:`.penalties`). Sampling uses the request's settings and neutral values for the rest, never the model
    folder's ``generation_config.json``, and each output records them (:mod:`.sampling`); a model argument or
    setting outside its range is refused in one line (:mod:`.validation`).
    """

    @one_line_setup
    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, api_key_vars=[], config=config)
        args = dict(model_args)
        self.device = pick_device(args.pop("device", None))
        self.dtype = pick_dtype(self.device, args.pop("dtype", None))
        # batch sizes: "auto" (default) = from free memory and the model's shape (stereoprobe.providers.budget)
        self.batch_size = model_int(args.pop("batch_size", None), "batch_size", 1, auto=True)
        self.batch_tokens = model_int(args.pop("batch_tokens", None), "batch_tokens", MIN_TOKENS, auto=True)
        self.gen_batch_size = model_int(args.pop("gen_batch_size", None), "gen_batch_size", 1, auto=True)
        self.prefix_sharing = strict_bool(args.pop("prefix_sharing", None), "prefix_sharing", True)
        self.shape = resolve_shape(args.pop("batch_invariant", None), args.pop("microbatch_tokens", None),
                                   str(self.device).split(":")[0])
        graphs = graph_choice(args.pop("cuda_graphs", None), str(self.device).split(":")[0], self.shape)  # .graphs
        cached = static_cache_choice(args.pop("static_cache", None), *graphs)  # .cached_graphs
        cb = auto_flag(args.pop("continuous_batching", None), "continuous_batching")  # .generation_batching
        self.continuous_batching = str(self.device).startswith("cuda") if cb is None else cb
        self.score_first_token = strict_bool(args.pop("score_first_token", None), "score_first_token", False)
        own_process = strict_bool(args.pop("scorer_process", None), "scorer_process", False)
        self.mlm_max_length = model_int(args.pop("mlm_max_length", None), "mlm_max_length", 2)
        # generation defaults of the model (a request's GenerateConfig.top_k wins over -M top_k; none: no top-k)
        self.repetition_penalty = P.number(args.pop("repetition_penalty", 1.0), "repetition_penalty", 0.0,
                                           low_open=True, error=ModelArgError)
        self.default_top_k = top_k_arg(args.pop("top_k", None))
        self._max_connections = model_int(args.pop("max_connections", None), "max_connections", 1) or 128
        kind = P.choice(args.pop("kind", None), "kind", ("causal", "masked", "seq2seq"), optional=True,
                        error=ModelArgError)
        check_generate_config(config)  # --top-p, --seed, ... of the command line
        tokenizer_id = args.pop("tokenizer", None)
        chat_template = args.pop("chat_template", None)
        chat_template = chat_template_text(chat_template) if chat_template else None  # checked before loading
        load_kwargs = {k: args.pop(k) for k in ("revision", "trust_remote_code", "attn_implementation") if k in args}
        if "trust_remote_code" in load_kwargs:
            load_kwargs["trust_remote_code"] = strict_bool(load_kwargs["trust_remote_code"], "trust_remote_code",
                                                           False)
        if args:
            raise ModelArgError(
                f"transformers provider: unknown model args {sorted(args)} (known: {', '.join(MODEL_ARGS)})")

        self.model, self.tokenizer, self.kind = load(model_name, self.device, self.dtype, kind, tokenizer_id, load_kwargs)
        if chat_template:
            self.tokenizer = copy.deepcopy(self.tokenizer)  # the loaded tokenizer is shared with other instances
            self.tokenizer.chat_template = chat_template
        tok = self.tokenizer
        prefix_ids = [tok.bos_token_id, tok.eos_token_id, getattr(tok, "cls_token_id", None)]
        self.prefix_token_id = next((int(t) for t in prefix_ids if t is not None), None)
        if self.score_first_token and self.kind == "causal" and self.prefix_token_id is None:
            raise ValueError(f"transformers provider: score_first_token needs a BOS or EOS token; {model_name} has none")
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        self.pad_id = int(pad) if pad is not None else 0
        self.context_window = context_window(self.model.config, tok)
        register_model_info(f"transformers/{self.model_name}", self.context_window)  # inspect: no 2nd provider
        self.scorer = CausalScorer(self.model, pad_id=self.pad_id) if self.kind == "causal" else None
        self.answers_prompt_batches = self.kind == "causal"  # the grouped one-token route runs on the scorer
        if self.scorer is not None:
            self.scorer.graphs = GraphedForward(lambda ids: self.scorer.forward(ids)[0], *graphs)  # type: ignore
            attach_cached(self.scorer, cached, graphs[0], self.shape.tokens if self.shape else 0)
        self.scorer_process = scorer_process(own_process, LoadSpec(model_name, self.device, str(self.dtype).removeprefix(
            "torch."), self.kind, tokenizer_id, tuple(sorted(load_kwargs.items())), self.pad_id, graphs, cached,
            self.shape.tokens if self.shape else 0))
        self._free_memory = free_memory(self.device)  # measured once, after the weights are loaded
        if self.batch_tokens is None:
            self.batch_tokens = scoring_token_budget(self.model, self.device, self._free_memory)
        self._queue: list[WorkerRequest] = []
        self._stashed: dict[str, list[dict[str, Any]]] = {}
        self._cv = threading.Condition()
        self._worker: threading.Thread | None = None

    # ---- inspect ModelAPI -------------------------------------------------------------------------------
    def max_connections(self) -> int:
        return self._max_connections

    def close(self) -> None:  # inspect's Model closes its API: end the scorer process, if any
        getattr(self.scorer_process, "close", lambda: None)()

    def max_tokens(self) -> int | None:
        # None: max_tokens unset, a scoring request generates nothing; chat without it uses DEFAULT_MAX_TOKENS
        return None

    async def tokenize(self, text: str) -> list[int]:
        """Token ids of ``text`` without special tokens (as vLLM's ``/tokenize`` with add_special_tokens=False)."""
        return list(self.tokenizer(text, add_special_tokens=False).input_ids)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        if tools:
            raise ValueError("transformers provider: tool calling is not supported")
        check_config(config, self.model_name)  # a setting this provider cannot honour is an error, never dropped
        check_generate_config(config)
        prompt_logprobs: Logprobs | None = None
        scored_tokens = 0
        meta = (input[-1].metadata or {}) if input else {}
        batch, ref = meta.get(TEXTS_KEY), meta.get(TEXTS_REF_KEY)
        if ref is not None:
            batch = self._stashed.get(str(ref))
            if batch is None:
                raise ValueError(f"transformers provider: no stashed texts under {ref!r} (stash_texts in another process?)")
        if config.prompt_logprobs is not None:
            check_scoring_input(input, config, self.model_name)
        if config.prompt_logprobs is None and batch is not None:  # grouped one-token request (.text_batches)
            output = await self._answer_prompt_batch(batch, config)
            self._stashed.pop(str(ref), None)
            return output
        if config.prompt_logprobs is not None and batch is not None:
            output = await self._score_text_batch(batch, config)
            self._stashed.pop(str(ref), None)  # kept until scored, so a retried request finds its texts
            return output
        if config.prompt_logprobs is not None:
            scores = await self._submit(self.score_request(input, config))
            prompt_logprobs = to_logprobs(self, scores)
            scored_tokens = len(scores.targets)
            if config.max_tokens is None or config.max_tokens <= 1:
                choice = ChatCompletionChoice(
                    message=ChatMessageAssistant(content="", model=self.model_name, source="generate"),
                    stop_reason="max_tokens",
                    prompt_logprobs=prompt_logprobs,
                )
                usage = ModelUsage(input_tokens=scored_tokens + 1, output_tokens=0, total_tokens=scored_tokens + 1)
                return ModelOutput(model=self.model_name, choices=[choice], usage=usage)
        output: ModelOutput = await self._submit(self.generate_request(input, config))
        if prompt_logprobs is not None:
            output.choices[0].prompt_logprobs = prompt_logprobs
        return output

    # ---- grouped likelihood requests (protocol: stereoprobe.likelihood) --------------------------------
    scores_text_batches = True  # every kind (.text_batches); grouped one-token answers: causal models only

    def stash_texts(self, items: list[dict[str, Any]]) -> str:
        """Keep a grouped request's text items in process; the request carries only the returned key."""
        key = uuid.uuid4().hex
        self._stashed[key] = items
        return key

    async def _score_text_batch(self, items: list[dict[str, Any]], config: GenerateConfig) -> ModelOutput:
        """Score many texts in one call (:mod:`.text_batches`): tokenized together, one worker request, each
        text scored exactly as the single-text prompt-log-probability path; per-text errors recorded."""
        payloads, positions, n_conts, errors = prepare_items(self, items, config)
        scores: list[TokenScores] = []
        if payloads:
            top_k = int(config.prompt_logprobs or 0)
            request = WorkerRequest("score", ("score", top_k if top_k > 1 else 0), {"batch": payloads})
            scores = await self._submit(request)
        graphs = self.scorer.graphs_status if self.scorer is not None else None
        return results_output(self.model_name, len(items), positions, scores, n_conts, errors, graphs)

    async def _answer_prompt_batch(self, items: list[dict[str, Any]], config: GenerateConfig) -> ModelOutput:
        """One-token answers of many conversations in one call (:mod:`.text_batches`): one worker request, each
        conversation answered as its single request would be, with shared prefixes; per-item errors recorded."""
        request, positions, errors, record = prepare_prompts(self, items, config)
        answers = await self._submit(request) if request is not None else []
        n_in = sum(len(p["ids"]) for p in request.payload["batch"]) if request is not None else 0
        return answers_output(self, len(items), positions, answers, errors, record, n_in)

    # ---- requests ---------------------------------------------------------------------------------------
    def score_request(self, input: list[ChatMessage], config: GenerateConfig) -> WorkerRequest:
        users = [m for m in input if isinstance(m, ChatMessageUser)]
        if not users:
            raise ValueError("transformers provider: prompt_logprobs needs a user message to score")
        message = users[-1]
        text = message.text
        meta = message.metadata or {}
        top_k = int(config.prompt_logprobs or 0)
        top_k = top_k if top_k > 1 else 0
        tok = self.tokenizer
        if self.kind == "causal":
            if meta.get("prompt_token_ids") is not None:
                ids = [int(t) for t in meta["prompt_token_ids"]]
            else:
                ids = list(tok(text, add_special_tokens=True).input_ids)
            if self.score_first_token and self.prefix_token_id is not None and (not ids or ids[0] != self.prefix_token_id):
                ids = [int(self.prefix_token_id)] + ids
            self.check_length(len(ids), text)
            payload: dict[str, Any] = {"ids": ids}
        elif self.kind == "masked":
            enc = tok(text, add_special_tokens=True, return_special_tokens_mask=True)
            ids = list(enc.input_ids)
            scored = [not s for s in enc.special_tokens_mask]
            # -M mlm_max_length wins over a request's metadata["mlm_max_length"] (a task's default)
            limit = self.mlm_max_length if self.mlm_max_length is not None else meta.get("mlm_max_length")
            if limit is not None and len(ids) > int(limit):
                ids, scored = ids[: int(limit)], scored[: int(limit)]
            self.check_length(len(ids), text)
            payload = {"ids": ids, "scored": scored}
        else:
            enc_ids = list(tok(str(meta.get("encoder_text", "")), add_special_tokens=True).input_ids)
            dec_ids = list(tok(text, add_special_tokens=True).input_ids)
            self.check_length(max(len(enc_ids), len(dec_ids)), text)
            payload = {"enc": enc_ids, "dec": dec_ids}
        return WorkerRequest("score", ("score", top_k), {**payload, "top_k": top_k})

    def check_length(self, n: int, text: str) -> None:
        if self.context_window is not None and n > self.context_window:
            raise ValueError(
                f"transformers provider: text of {n} tokens is longer than the context window of "
                f"{self.model_name} ({self.context_window} tokens): {text[:80]!r}..."
            )

    def generate_request(self, input: list[ChatMessage], config: GenerateConfig) -> WorkerRequest:
        if self.kind == "masked":
            raise ValueError(
                f"transformers provider: {self.model_name} is a masked language model and cannot generate "
                "chat completions; use it for likelihood scoring (prompt_logprobs)"
            )
        tok = self.tokenizer
        if self.kind == "causal":
            if not getattr(tok, "chat_template", None):
                raise ValueError(
                    f"transformers provider: {self.model_name} has no chat template, so it cannot be asked to "
                    "chat; pass one with -M chat_template=<jinja string or file>, or use prompt_logprobs scoring"
                )
            messages = [{"role": m.role, "content": m.text} for m in input]
            ids = list(tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"])
        else:  # seq2seq: the conversation as plain text to the encoder
            ids = list(tok("\n".join(m.text for m in input)).input_ids)
        if self.context_window is not None and len(ids) >= self.context_window:
            raise ValueError(
                f"transformers provider: prompt of {len(ids)} tokens does not fit the context window of "
                f"{self.model_name} ({self.context_window} tokens)"
            )
        max_new = config.max_tokens if config.max_tokens is not None else DEFAULT_MAX_TOKENS
        if self.context_window is not None and self.kind == "causal":
            max_new = min(max_new, self.context_window - len(ids))
        sampling = is_sampling(config.temperature)
        schema = None
        if config.response_schema is not None:
            require_xgrammar()  # a missing dependency fails here, before the request is queued
            # key order kept: properties are generated in schema order (e.g. a reason before its label)
            schema = json.dumps(config.response_schema.json_schema.model_dump(exclude_none=True))
        settings = {
            "max_new_tokens": int(max_new),
            "temperature": config.temperature,
            "top_p": config.top_p,
            "top_k": (config.top_k if config.top_k is not None else self.default_top_k) or None,  # 0: none
            "frequency_penalty": float(config.frequency_penalty or 0.0),
            "presence_penalty": float(config.presence_penalty or 0.0),
            "logit_bias": tuple(sorted((int(k), float(v)) for k, v in (config.logit_bias or {}).items())),
            "repetition_penalty": self.repetition_penalty,
            "stop": tuple(config.stop_seqs or ()),
            "n": int(config.num_choices or 1),
            "logprobs": bool(config.logprobs),
            "top_logprobs": int(config.top_logprobs or 0),
            "seed": config.seed if sampling else None,
            "schema": schema,  # part of the batch key: one grammar per generate() call
        }
        # seeded sampling runs alone so its result does not depend on which requests share its batch
        key = ("generate", tuple(sorted(settings.items())), id(ids) if settings["seed"] is not None else 0)
        return WorkerRequest("generate", key, {"ids": ids, **settings})

    # ---- batching worker --------------------------------------------------------------------------------
    async def _submit(self, request: WorkerRequest) -> Any:
        with self._cv:
            self._queue.append(request)
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._work, name="stereoprobe-transformers", daemon=True)
                self._worker.start()
            self._cv.notify()
        return await asyncio.wrap_future(request.future)

    def _take(self) -> list[WorkerRequest]:
        """The next requests to run, first come first served: whole requests up to ``FLUSH_BATCHES`` forward
        passes' worth of tokens (at least one request), so finished requests return to inspect, which logs
        and scores their samples while the model runs the next ones."""
        limit = FLUSH_BATCHES * int(self.batch_tokens or 1)
        taken, tokens = 0, 0
        for r in self._queue:
            if taken and tokens >= limit:
                break
            items = r.payload.get("batch") or [r.payload]
            tokens += sum(len(p.get("ids") or p.get("dec") or ()) for p in items)
            taken += 1
        batch, self._queue = self._queue[:taken], self._queue[taken:]
        return batch

    def _work(self) -> None:
        while True:
            with self._cv:
                if not self._queue:
                    self._cv.wait(timeout=30)
                    if not self._queue:
                        self._worker = None
                        return
            gather(self._cv, lambda: self._queue)  # concurrent samples about to submit join this batch
            with self._cv:
                batch = self._take()
            groups: dict[tuple[Any, ...], list[WorkerRequest]] = {}
            for r in batch:
                groups.setdefault(r.key, []).append(r)
            for key, reqs in groups.items():
                parts = self._generation_parts(reqs) if key[0] == "generate" else [reqs]
                run = {"score": self._run_scores, "answer": lambda rs: run_answers(self, rs)}.get(
                    key[0], self._run_generate)
                for part in parts:
                    try:
                        results = run(part)
                    except BaseException as ex:  # noqa: BLE001 - handed to the awaiting samples
                        for r in part:
                            if not r.future.done():
                                r.future.set_exception(ex)
                        continue
                    for r, res in zip(part, results):
                        r.future.set_result(res)

    def _generation_parts(self, reqs: list[WorkerRequest]) -> list[list[WorkerRequest]]:
        """Generation batches: ``-M gen_batch_size`` requests, else as many rows (requests x choices) as the
        free memory holds for the longest prompt plus ``max_new_tokens`` (:mod:`.budget`)."""
        size = self.gen_batch_size
        if size is None:
            longest = max(len(r.payload["ids"]) for r in reqs)
            s = reqs[0].payload
            rows = generation_rows(self.model, self.device, longest, int(s["max_new_tokens"]), self._free_memory)
            size = max(1, rows // max(1, int(s["n"])))
        return [reqs[i : i + size] for i in range(0, len(reqs), size)]

    # ---- scoring ----------------------------------------------------------------------------------------
    @property
    def policy(self) -> BatchPolicy:
        """The forward batches of a causal plan, scoring and the one-token route alike (:mod:`.planning`)."""
        return BatchPolicy(self.batch_size, self.batch_tokens, self.shape)

    def score_ids(self, payloads: list[dict[str, Any]], top_k: int = 0,
                  groups: list[Any] | None = None) -> list[TokenScores]:
        """Score prepared requests synchronously (the worker's path; also the direct API used by benchmarks).
        ``groups[i]``: the planning group of payload ``i`` (prefixes are shared within a group only)."""
        if self.scorer is not None:
            return (self.scorer_process or self.scorer).score([p["ids"] for p in payloads], self.policy, self.prefix_sharing, top_k, groups)
        rows = self.batch_size
        if rows is None:  # masked and encoder-decoder models: rows of the longest input within the budget
            longest = max((len(p.get("ids") or p.get("enc") or ()) + len(p.get("dec") or ()) for p in payloads),
                          default=1)
            rows = max(1, int(self.batch_tokens or 1) // max(1, longest))
        if self.kind == "masked":
            mask_id = self.tokenizer.mask_token_id
            if mask_id is None:
                raise ValueError(f"transformers provider: {self.model_name} has no mask token")
            return masked_pll(self.model, [p["ids"] for p in payloads], [p["scored"] for p in payloads],
                              mask_id, self.pad_id, rows, top_k)
        return seq2seq_logprobs(self.model, [p["enc"] for p in payloads], [p["dec"] for p in payloads],
                                self.pad_id, rows, top_k)

    def score_texts(self, texts: list[str], group: bool = False) -> list[TokenScores]:
        """Prompt log-probabilities of raw texts, exactly as ``generate(prompt_logprobs=1)`` computes them
        (``group``: as one grouped request, whose texts share prefixes among themselves only)."""
        return score_texts(self, texts, group)

    def _run_scores(self, reqs: list[WorkerRequest]) -> list[Any]:
        """Score single-text and grouped requests together: one plan; a grouped request is its own planning
        group, single texts share one group (their prefixes are shared across requests)."""
        payloads: list[dict[str, Any]] = []
        groups: list[Any] = []
        for n, r in enumerate(reqs):
            items = r.payload.get("batch")
            if items is None:
                payloads.append(r.payload)
                groups.append(-1)
            else:
                payloads.extend(items)
                groups.extend([n] * len(items))
        scores = self.score_ids(payloads, top_k=int(reqs[0].key[1]), groups=groups)
        out: list[Any] = []
        cursor = 0
        for r in reqs:
            k = len(r.payload["batch"]) if "batch" in r.payload else 1
            out.append(scores[cursor : cursor + k] if "batch" in r.payload else scores[cursor])
            cursor += k
        return out

    @lru_cache(maxsize=65536)  # noqa: B019 - one provider per process model
    def token_text(self, token_id: int) -> str:
        return self.tokenizer.decode([token_id])

    # ---- generation -------------------------------------------------------------------------------------
    def stop_ids(self) -> list[int]:
        eos = self.model.generation_config.eos_token_id
        ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        if self.tokenizer.eos_token_id is not None:
            ids.add(self.tokenizer.eos_token_id)
        return sorted(int(i) for i in ids)

    def schema_processor(self, schema: str) -> SchemaLogitsProcessor:
        """A fresh logits processor (it holds per-row grammar state) over the cached compiled grammar."""
        out = self.model.get_output_embeddings()  # the mask covers the logits, padded rows included
        vocab = int(out.weight.shape[0]) if out is not None else int(getattr(self.model.config, "vocab_size", 0) or 0)
        vocab = vocab or len(self.tokenizer)
        return SchemaLogitsProcessor(compiled_grammar(self.tokenizer, vocab, self.stop_ids(), schema))

    def _run_generate(self, reqs: list[WorkerRequest]) -> list[ModelOutput]:
        return run_generate(self, reqs)
