"""Batched log-likelihood scoring with transformers models (pure torch; no inspect).

Three model kinds, one output shape: for every input sequence, the log-probability of each scored token.

- Causal LMs (:class:`CausalScorer`): ``log P(x_t | x_<t)`` for ``t = 1 .. n-1`` (the first token has no
  context and gets no entry: vLLM's ``prompt_logprobs`` convention). Requests are length-bucketed, right-padded
  (padding sits after every real token, so a causal model never attends to it), and only the positions that
  predict a scored token go through the output projection, followed by the fused 2-D cross-entropy.
  **Prefix sharing**: sequences sharing a token prefix (the same name and template opening before hundreds
  of descriptors, the same story prompt before several options) are grouped; the prefix runs once and its
  key/value cache is repeated for the continuations (vLLM's prefix caching, within a batch).
- Masked LMs (:func:`masked_pll`): pseudo-log-likelihood (Salazar et al. 2020, "Masked Language Model
  Scoring", ACL): ``PLL(W) = sum_t log P_MLM(w_t | W_\\t)``, one copy of the sentence per token with that token
  replaced by the mask token, all copies of all sentences batched. Every non-special token gets an entry.
- Encoder-decoder models (:func:`seq2seq_logprobs`): ``log P(y_t | y_<t, x)`` for every token of the decoder
  text ``y`` (tokenized with the tokenizer's special tokens, e.g. T5's closing ``</s>``), given encoder text
  ``x``; the decoder starts from the model's decoder start token, so every decoder token gets an entry.

All computations use the model's dtype for the forward pass and float32 for the log-softmax. Results do not
depend on the batch size or on prefix sharing beyond floating-point noise (tests check ≤ 1e-4 nats/token).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F


@dataclass
class TokenScores:
    """Scores of one sequence: ``targets[k]`` has log-probability ``logprobs[k]``.

    ``top`` (when asked for) holds, per scored token, the ``k`` most likely tokens as ``(token_id, logprob)``.
    """

    targets: list[int]
    logprobs: list[float]
    top: list[list[tuple[int, float]]] | None = None

    @property
    def total(self) -> float:
        return float(sum(self.logprobs))


def _scores_from_rows(
    logits: torch.Tensor, targets: torch.Tensor, top_k: int
) -> tuple[torch.Tensor, list[list[tuple[int, float]]] | None]:
    """Log-probabilities of ``targets`` under rows of ``logits`` (2-D cross-entropy, float32), plus top-k."""
    logits = logits.float()
    if top_k > 0:
        logp = torch.log_softmax(logits, dim=-1)
        lp = logp.gather(1, targets[:, None])[:, 0]
        vals, idx = logp.topk(top_k, dim=-1)
        top = [list(zip(i.tolist(), v.tolist())) for i, v in zip(idx, vals)]
        return lp, top
    return -F.cross_entropy(logits, targets, reduction="none"), None


def _lcp(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


@dataclass
class Chunk:
    """One forward batch: sequence indices and the token prefix they share (0 = no shared prefix)."""

    indices: list[int]
    prefix_len: int


def _chunk_prefix(seqs: Sequence[Sequence[int]], idx: list[int]) -> int:
    first = seqs[idx[0]]
    lcp = len(first)
    for i in idx[1:]:
        lcp = min(lcp, _lcp(first, seqs[i]))
    # every sequence keeps at least one own token after the prefix
    return max(0, min(lcp, min(len(seqs[i]) for i in idx) - 1))


def _chunk_cost(seqs: Sequence[Sequence[int]], chunk: Chunk, overhead: int) -> int:
    """Tokens a chunk pushes through the model (padding included) plus a fixed per-forward overhead."""
    longest = max(len(seqs[i]) for i in chunk.indices)
    return chunk.prefix_len + len(chunk.indices) * (longest - chunk.prefix_len) + overhead


def plan_chunks(
    seqs: Sequence[Sequence[int]],
    batch_size: int,
    prefix_sharing: bool = True,
    min_prefix: int = 2,
    overhead: int = 16,
) -> list[Chunk]:
    """Split sequences into forward batches.

    Without prefix sharing: sort by length and cut into batches of ``batch_size`` (length bucketing).
    With prefix sharing: sort lexicographically by token ids, cut into runs of sequences sharing at least
    ``min_prefix`` leading tokens, and within each run pick the cheaper of two orders (by length: every
    batch shares the run's prefix and has little padding; lexicographic: batches share longer prefixes).
    A run is kept only if sharing costs fewer model tokens than scoring its sequences in the common pool.
    """
    n = len(seqs)
    if batch_size < 1:
        raise ValueError(f"batch_size must be ≥ 1, got {batch_size}")

    def by_length(idx: list[int], share: bool) -> list[Chunk]:
        ordered = sorted(idx, key=lambda i: (-len(seqs[i]), i))
        chunks = []
        for s in range(0, len(ordered), batch_size):
            part = ordered[s : s + batch_size]
            p = _chunk_prefix(seqs, part) if share else 0
            chunks.append(Chunk(part, p if p >= min_prefix else 0))
        return chunks

    if not prefix_sharing or n < 2:
        return by_length(list(range(n)), share=False)

    order = sorted(range(n), key=lambda i: (list(seqs[i]), i))
    runs: list[list[int]] = [[order[0]]]
    for prev, cur in zip(order, order[1:]):
        if _lcp(seqs[prev], seqs[cur]) >= min_prefix:
            runs[-1].append(cur)
        else:
            runs.append([cur])

    plan: list[Chunk] = []
    pool: list[int] = []
    for run in runs:
        if len(run) < 2:
            pool.extend(run)
            continue
        lexi = []
        for s in range(0, len(run), batch_size):
            part = run[s : s + batch_size]
            p = _chunk_prefix(seqs, part)
            lexi.append(Chunk(part, p if p >= min_prefix else 0))
        candidates = [by_length(run, share=True), lexi]
        costs = [sum(_chunk_cost(seqs, c, overhead) for c in cand) for cand in candidates]
        best = min(range(2), key=lambda k: costs[k])
        # cost of the same sequences in the common pool: full length, about one overhead per batch share
        pooled = sum(len(seqs[i]) for i in run) + overhead * len(run) / batch_size
        if costs[best] < pooled:
            plan.extend(candidates[best])
        else:
            pool.extend(run)
    plan.extend(by_length(pool, share=False))
    return plan


class CausalScorer:
    """Teacher-forced token log-probabilities of a causal LM, batched, with prefix sharing.

    The output projection is applied only to positions that predict a scored token. This needs the model's
    body (``model.<base_model_prefix>``) and its output embeddings; the split is checked once against the
    model's own logits and abandoned (full logits) for models whose head does more (logit soft-capping,
    scaling).
    """

    def __init__(self, model: Any, pad_id: int = 0) -> None:
        self.model = model
        self.device = next(model.parameters()).device
        self.pad_id = pad_id
        self.body = getattr(model, getattr(model, "base_model_prefix", ""), None)
        self.head = model.get_output_embeddings() if self.body is not None else None
        self.split = self.body is not None and self.head is not None and self._split_matches()
        forward = (self.body if self.split else model).forward
        # transformers ≥ 5.2x renamed ``past_key_values`` to ``cache``
        self._cache_kw = "cache" if "cache" in inspect.signature(forward).parameters else "past_key_values"

    @torch.inference_mode()
    def _split_matches(self) -> bool:
        vocab = self.model.config.vocab_size
        ids = torch.arange(3, 3 + 6, device=self.device)[None] % vocab
        try:
            full = self.model(ids).logits.float()
            out = self.body(input_ids=ids)
            split = self.head(out.last_hidden_state).float()
        except Exception:
            return False
        return full.shape == split.shape and bool(torch.allclose(full, split, atol=1e-4, rtol=1e-4))

    def _forward(self, ids: torch.Tensor, cache: Any = None, want_cache: bool = False) -> tuple[torch.Tensor, Any]:
        """Hidden states (split mode) or logits (full mode) for ``ids``, after an optional cache."""
        kwargs: dict[str, Any] = {"input_ids": ids, "use_cache": want_cache or cache is not None}
        if cache is not None:
            kwargs[self._cache_kw] = cache
        out = self.body(**kwargs) if self.split else self.model(**kwargs)
        new_cache = getattr(out, "cache", None) or getattr(out, "past_key_values", None)
        return (out.last_hidden_state if self.split else out.logits), new_cache

    def _project(self, rows: torch.Tensor) -> torch.Tensor:
        return self.head(rows) if self.split else rows

    @torch.inference_mode()
    def score(
        self,
        seqs: Sequence[Sequence[int]],
        batch_size: int = 64,
        prefix_sharing: bool = True,
        top_k: int = 0,
    ) -> list[TokenScores]:
        """Log-probability of every token after the first of each sequence (``len(seq) - 1`` entries)."""
        results: list[TokenScores | None] = [None] * len(seqs)
        for i, s in enumerate(seqs):
            if len(s) < 2:
                results[i] = TokenScores(list(s[1:]), [], [] if top_k else None)
        todo = [i for i, s in enumerate(seqs) if len(s) >= 2]
        sub = [seqs[i] for i in todo]
        for chunk in plan_chunks(sub, batch_size, prefix_sharing):
            members = [todo[i] for i in chunk.indices]
            for i, res in zip(members, self._score_chunk([seqs[i] for i in members], chunk.prefix_len, top_k)):
                results[i] = res
        return [r for r in results if r is not None]

    def _score_chunk(self, seqs: list[Sequence[int]], prefix_len: int, top_k: int) -> list[TokenScores]:
        dev = self.device
        L = prefix_len
        shared_lp = torch.empty(0, device=dev)
        shared_top: list[list[tuple[int, float]]] | None = [] if top_k else None
        cache = None
        first_lp = first_top = None
        if L > 0:
            prefix = torch.tensor([list(seqs[0][:L])], device=dev)
            hidden, cache = self._forward(prefix, want_cache=True)
            rows = self._project(hidden[0])  # (L, V): rows 0..L-2 predict shared tokens, row L-1 the first own token
            if L > 1:
                shared_lp, shared_top = _scores_from_rows(rows[: L - 1], prefix[0, 1:L], top_k)
            own_first = torch.tensor([s[L] for s in seqs], device=dev)
            first_lp, first_top = _scores_from_rows(rows[L - 1 : L].expand(len(seqs), -1), own_first, top_k)
            cache.batch_repeat_interleave(len(seqs))

        suffix_lens = [len(s) - L for s in seqs]
        width = max(suffix_lens)
        ids = torch.full((len(seqs), width), self.pad_id, dtype=torch.long, device=dev)
        for b, s in enumerate(seqs):
            ids[b, : suffix_lens[b]] = torch.tensor(list(s[L:]), device=dev)
        hidden, _ = self._forward(ids, cache=cache)
        # position j of row b predicts suffix token j+1: needed for j < suffix_len - 1
        pos = torch.arange(width, device=dev)[None]
        need = pos < torch.tensor(suffix_lens, device=dev)[:, None] - 1
        rows = self._project(hidden[need])
        targets = ids[:, 1:][need[:, :-1]] if width > 1 else ids.new_empty(0)
        own_lp, own_top = _scores_from_rows(rows, targets, top_k) if rows.shape[0] else (rows.new_empty(0), [])

        out = []
        own_lp_list = own_lp.tolist()
        shared = shared_lp.tolist()
        first_list = first_lp.tolist() if first_lp is not None else []
        cursor = 0
        for b, s in enumerate(seqs):
            k = suffix_lens[b] - 1
            lps = list(shared)
            top = list(shared_top) if top_k else None
            if L > 0:
                lps.append(first_list[b])
                if top is not None and first_top is not None:
                    top.append(first_top[b])
            lps.extend(own_lp_list[cursor : cursor + k])
            if top is not None and own_top is not None:
                top.extend(own_top[cursor : cursor + k])
            cursor += k
            out.append(TokenScores(list(s[1:]), lps, top))
        return out


@torch.inference_mode()
def masked_pll(
    model: Any,
    seqs: Sequence[Sequence[int]],
    scored: Sequence[Sequence[bool]],
    mask_id: int,
    pad_id: int,
    batch_size: int = 64,
    top_k: int = 0,
) -> list[TokenScores]:
    """Pseudo-log-likelihood terms ``log P(w_t | W_\\t)`` for every position ``t`` with ``scored[t]``.

    One masked copy per scored token; copies of all sequences are length-sorted and batched with an
    attention mask (the model is bidirectional, so padding must be masked).
    """
    device = next(model.parameters()).device
    copies = [(i, t) for i, flags in enumerate(scored) for t, f in enumerate(flags) if f]
    copies.sort(key=lambda c: -len(seqs[c[0]]))
    lp_by_copy: dict[tuple[int, int], float] = {}
    top_by_copy: dict[tuple[int, int], list[tuple[int, float]]] = {}
    for s in range(0, len(copies), batch_size):
        part = copies[s : s + batch_size]
        width = max(len(seqs[i]) for i, _ in part)
        ids = torch.full((len(part), width), pad_id, dtype=torch.long, device=device)
        att = torch.zeros((len(part), width), dtype=torch.long, device=device)
        for b, (i, t) in enumerate(part):
            ids[b, : len(seqs[i])] = torch.tensor(list(seqs[i]), device=device)
            att[b, : len(seqs[i])] = 1
        rows_b = torch.arange(len(part), device=device)
        cols = torch.tensor([t for _, t in part], device=device)
        targets = ids[rows_b, cols].clone()
        ids[rows_b, cols] = mask_id
        logits = model(input_ids=ids, attention_mask=att).logits[rows_b, cols]
        lp, top = _scores_from_rows(logits, targets, top_k)
        for b, key in enumerate(part):
            lp_by_copy[key] = float(lp[b])
            if top is not None:
                top_by_copy[key] = top[b]
    out = []
    for i, flags in enumerate(scored):
        ts = [t for t, f in enumerate(flags) if f]
        out.append(
            TokenScores(
                [int(seqs[i][t]) for t in ts],
                [lp_by_copy[(i, t)] for t in ts],
                [top_by_copy[(i, t)] for t in ts] if top_k else None,
            )
        )
    return out


@torch.inference_mode()
def seq2seq_logprobs(
    model: Any,
    encoder_seqs: Sequence[Sequence[int]],
    decoder_seqs: Sequence[Sequence[int]],
    pad_id: int,
    batch_size: int = 64,
    top_k: int = 0,
) -> list[TokenScores]:
    """``log P(y_t | y_<t, x)`` for every decoder token, encoder input ``x``; batched by total length."""
    device = next(model.parameters()).device
    order = sorted(range(len(decoder_seqs)), key=lambda i: -(len(encoder_seqs[i]) + len(decoder_seqs[i])))
    results: list[TokenScores | None] = [None] * len(decoder_seqs)
    for s in range(0, len(order), batch_size):
        part = order[s : s + batch_size]
        enc_w = max(max(len(encoder_seqs[i]) for i in part), 1)
        dec_w = max(len(decoder_seqs[i]) for i in part)
        enc = torch.full((len(part), enc_w), pad_id, dtype=torch.long, device=device)
        enc_att = torch.zeros_like(enc)
        labels = torch.full((len(part), dec_w), -100, dtype=torch.long, device=device)
        for b, i in enumerate(part):
            e, d = list(encoder_seqs[i]), list(decoder_seqs[i])
            if e:
                enc[b, : len(e)] = torch.tensor(e, device=device)
                enc_att[b, : len(e)] = 1
            else:  # an empty encoder input still needs one attended position
                enc_att[b, 0] = 1
            labels[b, : len(d)] = torch.tensor(d, device=device)
        dec_in = model.prepare_decoder_input_ids_from_labels(labels=labels)
        logits = model(input_ids=enc, attention_mask=enc_att, decoder_input_ids=dec_in).logits
        need = labels != -100
        lp, top = _scores_from_rows(logits[need], labels[need], top_k)
        lp_list = lp.tolist()
        cursor = 0
        for i in part:
            k = len(decoder_seqs[i])
            results[i] = TokenScores(
                list(decoder_seqs[i]), lp_list[cursor : cursor + k], top[cursor : cursor + k] if top else None
            )
            cursor += k
    return [r for r in results if r is not None]
