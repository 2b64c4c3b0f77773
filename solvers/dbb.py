"""Solvers of the DBB tasks (Pan et al., Findings of EMNLP 2025): the multiple-choice answer and the DBB-SG
option likelihoods.

- :func:`dbb_mcq_solver` shows the two options in a seeded order per (sample, epoch) and gets one answer:
  a sampled reply (the paper's protocol, §5 and Appendix A) or the answer letter's next-token probabilities.
- :func:`dbb_sg_solver` scores every option sentence (each variation, both options) by its mean token
  negative log-likelihood after the story prompt (paper Eq. 2). ``scoring="chat"`` (default, as upstream
  ``src/llm_utils.py`` ``getPerplexity``, github.com/JP-25/Description-based-Bias-Benchmark) scores the option
  as the assistant's reply under the model's chat template with the system message; ``scoring="raw"`` scores
  it as raw text after the prompt.
"""

from __future__ import annotations

import asyncio
from functools import cache
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser, GenerateConfig, Model, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from stereoprobe.dbb import contract as C
from stereoprobe.dbb import scoring as SC
from stereoprobe.errors import reason
from stereoprobe.solvers.likelihood import SCORING_CONFIG, all_at_once  # the one prompt-log-probability request
from stereoprobe.likelihood import (ANSWER_LOGPROBS, RESULT_ERROR, RESULTS_KEY, TEXTS_KEY, TEXTS_REF_KEY,
                                    UNREADABLE_REPLY, LogprobsUnavailable, malformed_reply, unreadable_reply)


class DBBLogprobsUnavailable(LogprobsUnavailable):
    """The model returned no token log-probabilities (logprob mode / DBB-SG need them): one line, as every
    capability refusal (:class:`~stereoprobe.likelihood.LogprobsUnavailable`)."""


def mcq_messages(context: str, first: str, second: str, tmpl: dict[str, Any]) -> list[ChatMessage]:
    """The multiple-choice conversation: upstream's system message (``tmpl["system"]``, as every upstream
    ``getOutput`` sends it; none when empty) and the question."""
    user = ChatMessageUser(content=SC.mcq_prompt(context, first, second, tmpl))
    return [ChatMessageSystem(content=tmpl["system"]), user] if tmpl.get("system") else [user]


def mcq_template(system_message: bool = True, prompt: str = "upstream", source: str = "upstream") -> dict[str, Any]:
    """The multiple-choice prompt template (:func:`stereoprobe.dbb.scoring.prompts`: upstream's instruction
    file by default, ``prompt="stereoprobe"`` our own wording; ``source`` a local copy of the upstream
    repository, if it is one), without its system message when ``system_message`` is false."""
    tmpl = dict(SC.prompts(prompt, source)["mcq"])
    if not system_message:
        tmpl["system"] = ""
    return tmpl


@solver
def dbb_mcq_solver(mode: str = C.DEFAULT_MODE, option_order: str = "fixed", seed: int = 0,
                   system_message: bool = True, prompt: str = "upstream", source: str = "upstream") -> Solver:
    """Show the two options in the order ``option_order`` gives for the (sample, epoch) and get one answer.

    ``fixed`` (the paper's protocol) shows option A first; the order is recorded in
    ``state.metadata["a_first"]``. The conversation is upstream's: system message + question
    (:func:`mcq_messages`). Logprob mode asks for the top-20 log-probabilities of a single token; a reply without them
    stops the run (:class:`~stereoprobe.likelihood.MalformedReply`, one line naming the sample). ``system_message=False`` sends the question
    alone (completion-only endpoints, e.g. ``vllm-completions``, take one raw prompt). ``prompt``,
    ``source``: the instruction's wording and where upstream's is read (:func:`mcq_template`).
    """
    tmpl = mcq_template(system_message, prompt, source)
    rec = C.mode(mode)
    # logprob mode: the mode's one request; its temperature 0 comes with the task's config, so a --temperature
    # the user gives still reaches the request, as for every setting
    ask = rec.request().model_dump(include={"logprobs", "top_logprobs", "max_tokens"}) if rec.logprob else {}

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        md = state.metadata
        a_first = SC.a_is_first(seed, str(state.sample_id), state.epoch, option_order)
        first, second = (md["option_a"], md["option_b"]) if a_first else (md["option_b"], md["option_a"])
        md["a_first"] = a_first
        state.messages = mcq_messages(md["context"], first, second, tmpl)
        try:
            state = await generate(state, **ask)
        except UNREADABLE_REPLY as ex:  # a reply the provider could not read stops the run (MalformedReply)
            raise unreadable_reply(state.model, ex) from ex
        if rec.logprob:
            _answer_pairs(state.output, state.model)  # a reply without them stops the run (MalformedReply)
        elif not state.output.choices:
            raise malformed_reply(state.model, "choices (the answer)")
        return state

    return solve


async def continuation_nll(prompt: str, continuation: str, separator: str = " ") -> tuple[float, int]:
    """Mean token NLL of ``continuation`` after ``prompt + separator`` under the task model, and its token
    count: one prompt-logprob pass over the raw text, trailing tokens = len(tok(full)) − len(tok(prompt))
    (checked: the prompt's tokens must be a prefix of the full text's)."""
    model = get_model()
    full = prompt + separator + continuation
    ids_full, ids_prompt = await asyncio.gather(model.api.tokenize(full), model.api.tokenize(prompt))
    n = len(ids_full) - len(ids_prompt)
    if n <= 0 or list(ids_full[: len(ids_prompt)]) != list(ids_prompt):
        raise ValueError(f"tokenisation of the prompt is not a prefix of prompt+continuation for "
                         f"continuation {continuation[:60]!r}; cannot isolate the continuation's tokens")
    return _tail_nll(await _scoring_request(model, full), n, model)


async def _scoring_request(model: Model, prompt: Any) -> Any:
    """The one prompt-log-probability request; a reply the provider could not read stops the run."""
    try:
        return await model.generate(prompt, config=SCORING_CONFIG)
    except UNREADABLE_REPLY as ex:
        raise unreadable_reply(model, ex) from ex


def _tail_nll(out: Any, n: int, model: Model) -> tuple[float, int]:
    choice = out.choices[0] if out.choices else None
    if choice is None or choice.prompt_logprobs is None or choice.prompt_logprobs.content is None:
        raise malformed_reply(model, "prompt_logprobs (the prompt's token log-probabilities)")
    lps = choice.prompt_logprobs.content
    if len(lps) < n:
        raise ValueError(f"prompt_logprobs has {len(lps)} entries, fewer than the continuation's {n} tokens")
    return -sum(x.logprob for x in lps[-n:]) / n, n


@cache
def _hf_tokenizer(name: str) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(name)


def chat_tokenizer(model: Model, tokenizer: str | None = None) -> Any:
    """The tokenizer whose chat template renders the DBB-SG prompt: ``tokenizer`` (a Hub id or folder) when
    given, else the provider's own (``transformers/...``), else the model name as a Hub id."""
    tok = _hf_tokenizer(tokenizer) if tokenizer else getattr(model.api, "tokenizer", None)
    if tok is None:
        try:
            tok = _hf_tokenizer(model.api.model_name)
        except Exception as e:  # noqa: BLE001 (any loading failure gets the same advice)
            raise ValueError(
                f"DBB-SG chat scoring needs the chat template of {model}: pass -T tokenizer=<Hub id or folder> "
                f"or score raw text with -T scoring=raw ({reason(e)})") from e
    if not getattr(tok, "chat_template", None):
        raise ValueError(f"the tokenizer of {model} has no chat template; pass -T tokenizer=<Hub id or folder "
                         "of a chat model> or score raw text with -T scoring=raw")
    return tok


def chat_prefix_ids(tok: Any, system: str | None, user: str) -> list[int]:
    """Token ids of ``[system, user]`` under the chat template with the assistant header (upstream
    ``getPerplexity``: ``apply_chat_template(..., add_generation_prompt=True)``)."""
    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": user}]
    enc = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, return_dict=True)
    return [int(t) for t in enc["input_ids"]]


async def chat_continuation_nll(tok: Any, prefix_ids: list[int], continuation: str,
                                bos_in_continuation: bool = False) -> tuple[float, int]:
    """Mean token NLL of ``continuation`` as the assistant reply after ``prefix_ids``, and its token count.

    The token ids go to the provider in the message's ``prompt_token_ids`` metadata (so no second BOS is
    added); providers without token-id input get the decoded text. ``bos_in_continuation`` reproduces
    upstream's ``tokenizer.encode(answer)``, which adds a BOS token to the answer for Llama tokenizers and
    scores it as part of the answer.
    """
    model = get_model()
    opt = [int(t) for t in tok(continuation, add_special_tokens=False)["input_ids"]]
    if bos_in_continuation and tok.bos_token_id is not None:
        opt = [int(tok.bos_token_id)] + opt
    if not opt:
        raise ValueError(f"continuation {continuation[:60]!r} has no tokens")
    ids = prefix_ids + opt
    message = ChatMessageUser(content=tok.decode(ids), metadata={"prompt_token_ids": ids})
    return _tail_nll(await _scoring_request(model, [message]), len(opt), model)


@solver
def dbb_sg_solver(separator: str = " ", scoring: str = "chat", system: str | None = None,
                  tokenizer: str | None = None, bos_in_continuation: bool = False) -> Solver:
    """Score every option sentence (each variation, both options) by its mean token NLL; results in
    ``state.metadata["sg_nll"] = [[nll_A, nll_B], ...]`` and ``sg_tokens``.

    ``scoring="chat"``: the option is the assistant's reply to ``[system, prompt]`` under the chat template;
    ``"raw"``: the option follows ``prompt + separator`` as raw text.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        md = state.metadata
        options = [opt for pair in md[C.META_SG_OPTIONS] for opt in pair]
        if scoring == "chat":
            tok = chat_tokenizer(get_model(), tokenizer)
            prefix = chat_prefix_ids(tok, system, md[C.META_SG_PROMPT])
            jobs = [chat_continuation_nll(tok, prefix, o, bos_in_continuation) for o in options]
        else:
            jobs = [continuation_nll(md[C.META_SG_PROMPT], o, separator) for o in options]
        res = await all_at_once(jobs)
        md[C.META_SG_NLL] = [[res[2 * j][0], res[2 * j + 1][0]] for j in range(len(md[C.META_SG_OPTIONS]))]
        md[C.META_SG_TOKENS] = [[res[2 * j][1], res[2 * j + 1][1]] for j in range(len(md[C.META_SG_OPTIONS]))]
        state.completed = True
        return state

    return solve


def chat_prefix_text(tok: Any, system: str | None, user: str) -> str:
    """The chat-template text of ``[system, user]`` with the assistant header, without a leading BOS string
    when the tokenizer adds BOS itself (so tokenizing the text gives the template's own ids once)."""
    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": user}]
    text = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    bos = getattr(tok, "bos_token", None)
    if bos and text.startswith(bos) and (tok("x")["input_ids"][:1] == [tok.bos_token_id]):
        text = text[len(bos):]
    return text


@solver
def dbb_sg_group_solver(separator: str = " ", scoring: str = "chat", system: str | None = None,
                        tokenizer: str | None = None, bos_in_continuation: bool = False) -> Solver:
    """DBB-SG for a group of questions (one sample per template): every option sentence of every question
    goes to the model as one batch of text items (``stereoprobe.solvers.likelihood.score_items``: one request
    for providers that score batches, else one per text), each scored exactly as :func:`dbb_sg_solver` scores
    it. Per question the results land in ``state.metadata["sg_results"][question_id]`` = ``{"nll": [[A, B],
    ...], "tokens": [[A, B], ...], "error": None | reason}``; a text that fails makes its question failed
    (counted, never scored), the others stand."""
    from stereoprobe.solvers.likelihood import score_items

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        md = state.metadata
        tok = chat_tokenizer(get_model(), tokenizer) if scoring == "chat" else None
        bos = (tok.bos_token or "") if (tok is not None and bos_in_continuation) else ""
        items = []
        for q in md[C.META_SG_QUESTIONS]:
            # raw: the separator belongs to the option's tokens (a BPE space joins the next word), exactly as
            # continuation_nll counts len(tok(prompt + sep + option)) - len(tok(prompt))
            ctx, join = (chat_prefix_text(tok, system, q["prompt"]), bos) if tok is not None else (q["prompt"], separator)
            for j, pair in enumerate(q["options"]):
                for side, opt in zip("AB", pair):
                    items.append({"id": f"{q['id']}|{j}|{side}", "text": ctx + join + opt, "context": ctx})
        results = await score_items(items)
        out: dict[str, dict[str, Any]] = {}
        for r in results:
            qid, j, side = r.id.rsplit("|", 2)
            res = out.setdefault(qid, {"nll": [], "tokens": [], "error": None})
            k, s = int(j), "AB".index(side)
            while len(res["nll"]) <= k:
                res["nll"].append([None, None])
                res["tokens"].append([None, None])
            if r.error is not None or not r.n_tokens or r.sum_logprob is None:
                res["error"] = res["error"] or f"variation {k} option {side}: {r.error or 'not scored'}"
                continue
            res["nll"][k][s] = -r.sum_logprob / r.n_tokens
            res["tokens"][k][s] = r.n_tokens
        md[C.META_SG_RESULTS] = out
        state.completed = True
        return state

    return solve


@solver
def dbb_mcq_group_solver(option_order: str = "balanced", seed: int = 0, epochs: int = 2,
                         system_message: bool = True, prompt: str = "upstream",
                         source: str = "upstream") -> Solver:
    """Logprob mode for a group of questions (one sample per template): every question in ``epochs`` option
    orders (the order of epoch e is the per-question path's, :func:`stereoprobe.dbb.scoring.a_is_first`).
    A provider that answers grouped one-token requests (``answers_prompt_batches``, stereoprobe's
    ``transformers``; :mod:`stereoprobe.likelihood`) gets them all as **one** request, whose prompts share their
    common prefix (system message, instruction) on the device; any other provider gets one request per question
    and order, all sent at once. Results per question in ``state.metadata["mcq_results"][question_id]`` =
    ``{"a": [...], "valid": [...], "a_first": [...], "error"}`` (the same either way); a request that fails marks
    its question failed (counted, never scored); a reply without the answer token's (top) log-probabilities
    stops the run (:class:`~stereoprobe.likelihood.MalformedReply`). ``system_message``: as for :func:`dbb_mcq_solver`."""
    tmpl = mcq_template(system_message, prompt, source)
    config = C.LOGPROB.request()

    def messages(q: dict[str, Any], a_first: bool) -> list[ChatMessage]:
        first, second = (q["option_a"], q["option_b"]) if a_first else (q["option_b"], q["option_a"])
        return mcq_messages(q["context"], first, second, tmpl)

    async def ask(model: Model, q: dict[str, Any], a_first: bool) -> Any:
        try:
            out = await model.generate(messages(q, a_first), config=config)
        except UNREADABLE_REPLY as ex:  # a reply the provider could not read: the run stops
            raise unreadable_reply(model, ex, f"question {q['id']}") from ex
        except Exception as exc:  # noqa: BLE001 (a failed request: recorded per question, counted)
            return exc
        return _answer_pairs(out, model, f"question {q['id']}")  # malformed: the run stops at the first

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        qs = state.metadata[C.META_MCQ_QUESTIONS]
        asked = [(q, SC.a_is_first(seed, q["id"], e, option_order)) for q in qs for e in range(1, epochs + 1)]
        if getattr(model.api, "answers_prompt_batches", False):
            answers = await _ask_grouped(model, [messages(q, a) for q, a in asked], config)
        else:
            answers = await all_at_once(ask(model, q, a) for q, a in asked)
        results: dict[str, dict[str, Any]] = {q["id"]: {"a": [], "valid": [], "a_first": [], "error": None}
                                              for q in qs}
        for (q, a_first), pairs in zip(asked, answers):
            r = results[q["id"]]
            if isinstance(pairs, (BaseException, str)):  # a failed request, or the provider's reason for a prompt
                why = pairs if isinstance(pairs, str) else reason(pairs)
                r["error"] = r["error"] or why[:300]
                continue
            if len(pairs) < 2:  # the grouped route's answer, checked as one request's (_answer_pairs)
                raise malformed_reply(model, "top_logprobs (the answer token's top log-probabilities)" if pairs
                                      else "logprobs (the answer token's log-probabilities)", f"question {q['id']}")
            a, valid, _, _ = SC.logprob_answer(pairs, a_first)
            r["a"].append(a)
            r["valid"].append(valid)
            r["a_first"].append(a_first)
        state.metadata[C.META_MCQ_RESULTS] = results
        state.completed = True
        return state

    return solve


def _answer_pairs(out: Any, model: object, item: str | None = None) -> list[tuple[str, float]]:
    """The answer token's ``(token, logprob)`` then its top log-probabilities; a reply without either (no
    choice, no ``logprobs``, no ``top_logprobs``) raises :class:`~stereoprobe.likelihood.MalformedReply`, which
    stops the run at the first such reply (the capability probe found them, or the model is not probed)."""
    choice = out.choices[0] if out.choices else None
    if choice is None or choice.logprobs is None or not choice.logprobs.content:
        raise malformed_reply(model, "logprobs (the answer token's log-probabilities)", item)
    lp = choice.logprobs.content[0]
    if not lp.top_logprobs:
        raise malformed_reply(model, "top_logprobs (the answer token's top log-probabilities)", item)
    return [(lp.token, lp.logprob)] + [(t.token, t.logprob) for t in lp.top_logprobs]


async def _ask_grouped(model: Model, conversations: list[list[ChatMessage]], config: GenerateConfig) -> list[Any]:
    """Every conversation in one grouped one-token request (protocol: :mod:`stereoprobe.likelihood`): per
    conversation its answer pairs, or the reason it failed (recorded for its question). An in-process
    provider gets the conversations by reference (``stash_texts``), so they are not copied into the log."""
    items = [{"messages": [{"role": m.role, "content": m.text} for m in conv]} for conv in conversations]
    stash = getattr(model.api, "stash_texts", None)
    meta = {TEXTS_REF_KEY: stash(items)} if callable(stash) else {TEXTS_KEY: items}
    message = ChatMessageUser(content=f"{len(items)} DBB questions x option orders (the sample's metadata)",
                              metadata=meta)
    try:
        out = await model.generate([message], config=config)
    except Exception as exc:  # noqa: BLE001 (recorded for every question of the group, counted)
        return [exc] * len(items)
    res = (out.metadata or {}).get(RESULTS_KEY)
    if not isinstance(res, dict) or len(res.get(ANSWER_LOGPROBS) or ()) != len(items):
        raise RuntimeError(f"model {model} answered a group of {len(items)} prompts without per-prompt answers "
                           f"({out.error or 'no ' + RESULTS_KEY + ' in the output metadata'})")
    return [str(err) if err else [(str(t), float(v)) for t, v in (pairs or [])]
            for pairs, err in zip(res[ANSWER_LOGPROBS], res[RESULT_ERROR])]
