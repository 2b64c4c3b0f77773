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


def _chunk_prefix(seqs: Sequence[Sequence[int]], idx: list[int]) -> int:
    """Longest prefix common to ``seqs[idx]`` that leaves every sequence at least one own token."""
    first = seqs[idx[0]]
    lcp = len(first)
    for i in idx[1:]:
        lcp = min(lcp, _lcp(first, seqs[i]))
    return max(0, min(lcp, min(len(seqs[i]) for i in idx) - 1))


def _prefix_groups(seqs: Sequence[Sequence[int]], members: list[int]) -> list[tuple[int, list[int]]]:
    """Partition ``members`` into (prefix length, members) groups minimising the tokens run through the model.

    A group with prefix ``p`` costs ``p + sum(len - p)`` tokens (prefix once, continuations per member).
    Members that agree beyond the group's prefix may form a subgroup with a longer prefix when that costs
    less (the split is decided recursively on the token trie).
    """
    return _best_groups(seqs, members)[1]


def _best_groups(seqs: Sequence[Sequence[int]], members: list[int]) -> tuple[int, list[tuple[int, list[int]]]]:
    if len(members) == 1:
        return len(seqs[members[0]]), [(0, members)]
    p = _chunk_prefix(seqs, members)
    one_group = p + sum(len(seqs[i]) - p for i in members)
    by_next: dict[int, list[int]] = {}
    stay: list[int] = []
    for i in members:
        if len(seqs[i]) > p + 1:  # can extend the prefix by its next token and keep one own token
            by_next.setdefault(seqs[i][p], []).append(i)
        else:
            stay.append(i)
    if len(by_next) <= 1 and not stay:  # cannot happen: p is the longest common prefix
        return one_group, [(p, members)]
    cost, groups = 0, []
    for subset in by_next.values():
        if len(subset) == 1:
            stay.extend(subset)
            continue
        sub_cost, sub_groups = _best_groups(seqs, subset)
        stay_cost = sum(len(seqs[i]) - p for i in subset)
        if sub_cost < stay_cost:
            cost += sub_cost
            groups.extend(sub_groups)
        else:
            stay.extend(subset)
    if stay:
        cost += p + sum(len(seqs[i]) - p for i in stay)
        groups.append((p, stay))
    if cost < one_group:
        return cost, groups
    return one_group, [(p, members)]


@dataclass
class Chunk:
    """One forward batch: sequence indices and, per sequence, the length of the prefix it shares with other
    sequences (0 = none). Sequences with the same prefix length and the same leading tokens share one prefix
    computation; a batch may hold several prefix groups."""

    indices: list[int]
    prefix_lens: list[int]

    @property
    def shared(self) -> bool:
        return any(self.prefix_lens)


def plan_chunks(
    seqs: Sequence[Sequence[int]],
    batch_size: int,
    prefix_sharing: bool = True,
    min_prefix: int = 2,
) -> list[Chunk]:
    """Split sequences into forward batches.

    Without prefix sharing: sort by length and cut into batches of ``batch_size`` (length bucketing).
    With prefix sharing: group sequences by shared leading tokens (:func:`_prefix_groups`: the token trie is
    cut where it saves the most model tokens); groups sharing at least ``min_prefix`` tokens are ordered by
    their longest continuation and their members by continuation length, then cut into batches of
    ``batch_size``, so one batch holds continuations of similar length from one large group or from several
    small ones. Sequences that share nothing are length-bucketed on their own.
    """
    n = len(seqs)
    if batch_size < 1:
        raise ValueError(f"batch_size must be ≥ 1, got {batch_size}")

    def by_length(idx: list[int]) -> list[Chunk]:
        ordered = sorted(idx, key=lambda i: (-len(seqs[i]), i))
        return [Chunk(ordered[s : s + batch_size], [0] * len(ordered[s : s + batch_size]))
                for s in range(0, len(ordered), batch_size)]

    if not prefix_sharing or n < 2:
        return by_length(list(range(n)))

    groups: list[tuple[int, list[int]]] = []  # (prefix length, members)
    alone: list[int] = []
    for p, members in _prefix_groups(seqs, list(range(n))):
        if p >= min_prefix and len(members) > 1:
            groups.append((p, sorted(members, key=lambda i: (-len(seqs[i]), i))))
        else:
            alone.extend(members)
    groups.sort(key=lambda g: (-(len(seqs[g[1][0]]) - g[0]), g[1][0]))
    flat = [(i, p) for p, members in groups for i in members]
    plan = [Chunk([i for i, _ in flat[s : s + batch_size]], [p for _, p in flat[s : s + batch_size]])
            for s in range(0, len(flat), batch_size)]
    return plan + by_length(alone)


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

    def _forward(
        self, ids: torch.Tensor, cache: Any = None, want_cache: bool = False, **extra: Any
    ) -> tuple[torch.Tensor, Any]:
        """Hidden states (split mode) or logits (full mode) for ``ids``, after an optional cache."""
        kwargs: dict[str, Any] = {"input_ids": ids, "use_cache": want_cache or cache is not None, **extra}
        if cache is not None:
            kwargs[self._cache_kw] = cache
        out = self.body(**kwargs) if self.split else self.model(**kwargs)
        # read the output under the name the forward takes (the old name only warns on recent transformers)
        new_cache = getattr(out, self._cache_kw, None)
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
            scored = self._score_chunk([seqs[i] for i in members], chunk.prefix_lens, top_k)
            for i, res in zip(members, scored):
                results[i] = res
        return [r for r in results if r is not None]

    def _score_chunk(self, seqs: list[Sequence[int]], prefix_lens: list[int], top_k: int) -> list[TokenScores]:
        """Score one batch. ``prefix_lens[b]`` leading tokens of sequence ``b`` are shared with the other
        members having the same prefix (0: nothing shared). Shared prefixes run once each (right-padded
        together); their key/value cache is gathered per member, and the members' continuations run in one
        right-padded pass with an attention mask hiding the prefix padding and explicit positions."""
        dev = self.device
        B = len(seqs)
        # prefix groups: (length, tokens) -> group number
        group_of: dict[tuple[int, ...], int] = {}
        member_group = []
        for s, p in zip(seqs, prefix_lens):
            member_group.append(group_of.setdefault(tuple(s[:p]), len(group_of)) if p else -1)
        prefixes = list(group_of)
        plen = [len(t) for t in prefixes]
        Lmax = max(plen, default=0)
        starts = [p for p in prefix_lens]

        lps: list[list[float]] = [[] for _ in range(B)]
        tops: list[list[list[tuple[int, float]]]] = [[] for _ in range(B)]
        cache = None
        if prefixes:
            pids = torch.full((len(prefixes), Lmax), self.pad_id, dtype=torch.long, device=dev)
            for g, t in enumerate(prefixes):
                pids[g, : len(t)] = torch.tensor(t, device=dev)
            hidden, cache = self._forward(pids, want_cache=True)
            # shared tokens 1..L-1 of each prefix, predicted by prefix rows 0..L-2
            need = torch.arange(Lmax, device=dev)[None] < torch.tensor(plen, device=dev)[:, None] - 1
            rows = self._project(hidden[need])
            g_lp, g_top = (_scores_from_rows(rows, pids[:, 1:][need[:, :-1]], top_k)
                           if rows.shape[0] else (rows.new_empty(0), []))
            g_lp_list = g_lp.tolist()
            shared_lp, shared_top, cursor = [], [], 0
            for L in plen:
                shared_lp.append(g_lp_list[cursor : cursor + L - 1])
                shared_top.append(g_top[cursor : cursor + L - 1] if g_top else [])
                cursor += L - 1
            # first own token of each member, predicted by the last row of its prefix
            sharing = [b for b in range(B) if member_group[b] >= 0]
            grp = torch.tensor([member_group[b] for b in sharing], device=dev)
            last = torch.tensor([plen[member_group[b]] - 1 for b in sharing], device=dev)
            own_first = torch.tensor([seqs[b][prefix_lens[b]] for b in sharing], device=dev)
            f_lp, f_top = _scores_from_rows(self._project(hidden[grp, last]), own_first, top_k)
            for k, b in enumerate(sharing):
                g = member_group[b]
                lps[b] = list(shared_lp[g]) + [f_lp[k].item()]
                if top_k:
                    tops[b] = list(shared_top[g]) + [f_top[k]]
            if len(sharing) < B:  # members without a shared prefix: prepend nothing, attend to nothing cached
                raise AssertionError("a batch mixes shared and unshared sequences")
            cache.reorder_cache(grp)

        suffix_lens = [len(s) - p for s, p in zip(seqs, starts)]
        width = max(suffix_lens)
        ids = torch.full((B, width), self.pad_id, dtype=torch.long, device=dev)
        for b, s in enumerate(seqs):
            ids[b, : suffix_lens[b]] = torch.tensor(list(s[starts[b]:]), device=dev)
        extra: dict[str, Any] = {}
        if cache is not None and (min(plen) != Lmax or len(set(starts)) > 1):
            mask = torch.ones((B, Lmax + width), dtype=torch.long, device=dev)
            for b in range(B):
                mask[b, starts[b] : Lmax] = 0
            extra["attention_mask"] = mask
            extra["position_ids"] = torch.tensor(starts, device=dev)[:, None] + torch.arange(width, device=dev)[None]
        hidden, _ = self._forward(ids, cache=cache, **extra)
        # position j of row b predicts continuation token j+1: needed for j < suffix_len - 1
        need = torch.arange(width, device=dev)[None] < torch.tensor(suffix_lens, device=dev)[:, None] - 1
        rows = self._project(hidden[need])
        targets = ids[:, 1:][need[:, :-1]] if width > 1 else ids.new_empty(0)
        own_lp, own_top = _scores_from_rows(rows, targets, top_k) if rows.shape[0] else (rows.new_empty(0), [])
        own_list = own_lp.tolist()
        out, cursor = [], 0
        for b, s in enumerate(seqs):
            k = suffix_lens[b] - 1
            lps[b].extend(own_list[cursor : cursor + k])
            if top_k:
                tops[b].extend(own_top[cursor : cursor + k])
            cursor += k
            out.append(TokenScores(list(s[1:]), lps[b], tops[b] if top_k else None))
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
