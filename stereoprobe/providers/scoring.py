"""Batched log-likelihood scoring with transformers models (pure torch; no inspect).

Three model kinds, one output shape: for every input sequence, the log-probability of each scored token.

- Causal LMs (:class:`CausalScorer`): ``log P(x_t | x_<t)`` for ``t = 1 .. n-1`` (the first token has no
  context and gets no entry: vLLM's ``prompt_logprobs`` convention). Requests are bucketed by canonical width,
  right-padded (padding sits after every real token, so a causal model never attends to it), and only the positions that
  predict a scored token go through the output projection, followed by the fused 2-D cross-entropy.
  **Prefix sharing**: sequences sharing a token prefix (the same name and template opening before hundreds
  of descriptors, the same story prompt before several options) are grouped; the prefix runs once and its
  key/value cache is repeated for the continuations (vLLM's prefix caching, within a request).
- Masked LMs (:func:`masked_pll`): pseudo-log-likelihood (Salazar et al. 2020, "Masked Language Model
  Scoring", ACL): ``PLL(W) = sum_t log P_MLM(w_t | W_\\t)``, one copy of the sentence per token with that token
  replaced by the mask token, all copies of all sentences batched. Every non-special token gets an entry.
- Encoder-decoder models (:func:`seq2seq_logprobs`): ``log P(y_t | y_<t, x)`` for every token of the decoder
  text ``y`` (tokenized with the tokenizer's special tokens, e.g. T5's closing ``</s>``), given encoder text
  ``x``; the decoder starts from the model's decoder start token, so every decoder token gets an entry.

All computations use the model's dtype for the forward pass and float32 for the log-softmax.

**Batch invariance (causal LMs).** Batches follow :mod:`.planning`: a sequence's shared prefix is found within
its own request, and it always runs at canonical widths, so its computation never depends on which other
sequences share its batch, on the batch size or on the concurrency; products get at least ``MIN_ROWS`` rows.
On CPU in float32 the per-token results are then bit-identical across batch sizes, token budgets and
concurrency (``tests/providers/test_batch_invariance.py``). Prefix sharing on or off computes the same
quantity in different shapes: the two agree within floating-point noise (≤ 5e-4 nats per token, checked).
On GPUs, whose matrix-product kernels depend on the row count, a :class:`.microbatch.MicroBatchShape` (the
``shape`` of a :class:`.planning.BatchPolicy`) also fixes every product's row count (fixed micro-batches,
projection in fixed slices), so no kernel's shape depends on the companions, in bfloat16 as in float32
(:mod:`.microbatch`).
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import torch
import torch.nn.functional as F

from stereoprobe.providers.main_thread import off_main_thread, on_main_thread
from stereoprobe.providers.microbatch import BatchShape
from stereoprobe.providers.packing import RowPacking, attach_packing
from stereoprobe.providers.planning import BatchPolicy, bucket_width
from stereoprobe.providers.projection import ROW_BLOCK, BlockedHead, blocked_head, row_slices

__all__ = ["MIN_ROWS", "BatchPolicy", "BatchShape", "CausalScorer", "TokenScores", "masked_pll", "seq2seq_logprobs"]

_T = TypeVar("_T")
MIN_ROWS = 16  # every matrix product of the causal scorer has at least this many rows (see _score_chunk)


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


def _pad_rows(rows: torch.Tensor, n: int) -> torch.Tensor:
    """``rows`` with zero rows appended up to ``n`` rows."""
    if n <= rows.shape[0]:
        return rows
    return torch.cat([rows, rows.new_zeros((n - rows.shape[0], *rows.shape[1:]))])


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
        # CPU: the projection in row and vocabulary blocks, logits equal bit for bit (.projection)
        self.blocked: BlockedHead | None = blocked_head(self.head, self.device) if self.split else None
        self.row_block = ROW_BLOCK  # rows per blocked product (bench/projection.py's --sweep)
        forward = (self.body if self.split else model).forward
        # transformers ≥ 5.2x renamed ``past_key_values`` to ``cache``
        self._cache_kw = "cache" if "cache" in inspect.signature(forward).parameters else "past_key_values"
        self.graphs: Any = None  # cache-free forwards through CUDA graphs per shape (.graphs.GraphedForward)
        self.cached: Any = None  # continuations of shared prefixes through a fixed cache (.cached_graphs)
        self.cached_off = ""  # why the cached forwards use transformers' dynamic cache (when it differs)
        self.packing: RowPacking | None = None  # CPU: per-position modules skip the padding (.packing)
        attach_packing(self, MIN_ROWS)

    @property
    def cached_status(self) -> str:
        """The cached forwards' graph status (:mod:`.cached_graphs`), or why they use the dynamic cache."""
        return self.cached.status if self.cached is not None else self.cached_off

    @property
    def graphs_status(self) -> str | None:
        """The CUDA-graph status every grouped output records (``cuda_graphs``): the cache-free forwards'
        (:mod:`.graphs`), then the cached forwards' (:mod:`.cached_graphs`) unless both are off for one reason."""
        free = self.graphs.status if self.graphs is not None else None
        same = self.cached is None and self.cached_off in ("", free)
        return free if same else f"{free}; cached forwards: {self.cached_status}"

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

    def forward(
        self, ids: torch.Tensor, cache: Any = None, want_cache: bool = False, **extra: Any
    ) -> tuple[torch.Tensor, Any]:
        """Hidden states (split mode) or logits (full mode) for ``ids``, after an optional key/value cache, and
        the new cache (when asked for or continued); rows go through :meth:`project` or :meth:`project_scores`."""
        kwargs: dict[str, Any] = {"input_ids": ids, "use_cache": want_cache or cache is not None, **extra}
        if cache is not None:
            kwargs[self._cache_kw] = cache
        out = self.body(**kwargs) if self.split else self.model(**kwargs)
        # read the output under the name the forward takes (the old name only warns on recent transformers)
        new_cache = getattr(out, self._cache_kw, None)
        return (out.last_hidden_state if self.split else out.logits), new_cache

    def project(self, rows: torch.Tensor) -> torch.Tensor:
        """Logits of hidden rows (split mode; logit rows pass through), in the model's dtype."""
        return self.head(rows) if self.split else rows

    def _row_slices(self, n: int, slice_rows: int) -> list[slice]:
        """The projection's products over ``n`` rows (zero rows appended up to the last one's end)."""
        return row_slices(n, slice_rows, self.row_block if self.blocked is not None else 0, MIN_ROWS)

    def _map_slices(self, rows: torch.Tensor, slice_rows: int, fn: Callable[[slice, torch.Tensor], _T]) -> list[_T]:
        """The one projection loop: ``fn(rows' slice, float32 logits)`` for the products of :meth:`_row_slices`
        over ``rows`` (zero rows appended): at least ``MIN_ROWS`` rows each, so a row's result does not depend on
        how many rows there are; with ``slice_rows``, exactly that many rows each (fixed shapes,
        :mod:`.microbatch`). One slice's logits at a time per thread (the vocabulary-wide rows are never all
        held at once); on CPU in blocks of ``ROW_BLOCK`` rows computed in vocabulary blocks and spread over
        torch's intra-op threads by :mod:`.projection`."""
        slices = self._row_slices(rows.shape[0], slice_rows)
        rows = _pad_rows(rows, slices[-1].stop if slices else 0)
        if self.blocked is not None:
            return self.blocked.map(rows, slices, fn)
        return [fn(sl, self.project(rows[sl]).float()) for sl in slices]

    @torch.inference_mode()
    def project_logprobs(self, rows: torch.Tensor, slice_rows: int = 0) -> torch.Tensor:
        """Float32 log-softmax over the vocabulary of each hidden (or logit) row, in the products of
        :meth:`_map_slices` (the next-token distributions of the one-token generation route)."""
        n = rows.shape[0]
        return torch.cat(self._map_slices(rows, slice_rows, lambda _, logits: torch.log_softmax(logits, dim=-1)))[:n]

    @torch.inference_mode()
    def project_scores(self, rows: torch.Tensor, targets: torch.Tensor, top_k: int, slice_rows: int = 0
                       ) -> tuple[torch.Tensor, list[list[tuple[int, float]]] | None]:
        """Float32 log-probabilities of ``targets`` under hidden rows (split mode) or logit rows, and the
        ``top_k`` most likely tokens per row when asked; in the products of :meth:`_map_slices`."""
        n = rows.shape[0]
        if n == 0:
            return rows.new_empty(0, dtype=torch.float32), [] if top_k else None
        slices = self._row_slices(n, slice_rows)
        padded = _pad_rows(targets, slices[-1].stop)
        blocked = self.blocked
        if top_k == 0 and blocked is not None and blocked.fused:  # CPU: fused per vocabulary chunk (.projection)
            prows = _pad_rows(rows, slices[-1].stop)
            return torch.cat(blocked.map_slices(slices, lambda sl: blocked.target_logprobs(prows[sl], padded[sl])))[
                :n], None
        parts = self._map_slices(rows, slice_rows, lambda sl, logits: _scores_from_rows(logits, padded[sl], top_k))
        lp = torch.cat([p[0] for p in parts])
        top = [t for p in parts for t in (p[1] or [])] if top_k else None
        return lp[:n], (top[:n] if top is not None else None)

    @torch.inference_mode()
    def score(
        self,
        seqs: Sequence[Sequence[int]],
        policy: BatchPolicy = BatchPolicy(64),
        prefix_sharing: bool = True,
        top_k: int = 0,
        groups: Sequence[Hashable] | None = None,
    ) -> list[TokenScores]:
        """Log-probability of every token after the first of each sequence (``len(seq) - 1`` entries).

        ``groups[i]``: the planning group (request) of sequence ``i``; prefixes are shared within a group only
        (``None``: all sequences are one group). ``policy``: the forward batches' size or token budget, or fixed
        micro-batches (:class:`stereoprobe.providers.planning.BatchPolicy`). Runs off the process's main thread
        (:func:`.main_thread.off_main_thread`)."""
        if on_main_thread():
            return off_main_thread(lambda: self.score(seqs, policy, prefix_sharing, top_k, groups))
        results: list[TokenScores | None] = [None] * len(seqs)
        for i, s in enumerate(seqs):
            if len(s) < 2:
                results[i] = TokenScores(list(s[1:]), [], [] if top_k else None)
        todo = [i for i, s in enumerate(seqs) if len(s) >= 2]
        sub = [seqs[i] for i in todo]
        sub_groups = None if groups is None else [groups[i] for i in todo]
        pending: list[tuple[list[int], torch.Tensor, Any]] = []
        for chunk in policy.plan(sub, prefix_sharing, sub_groups):
            members = [todo[i] for i in chunk.indices]
            flat_dev, finish = self._score_chunk([seqs[i] for i in members], chunk.prefix_lens, top_k, chunk.shape)
            pending.append((members, flat_dev, finish))
        # one synchronisation for the whole plan: the host prepares and launches batch k+1 while the device
        # still runs batch k, instead of waiting for every batch's results
        flat = torch.cat([dev for _, dev, _ in pending]).tolist() if pending else []
        cursor = 0
        for members, dev, finish in pending:
            part, cursor = flat[cursor : cursor + dev.shape[0]], cursor + dev.shape[0]
            for i, res in zip(members, finish(part)):
                results[i] = res
        return [r for r in results if r is not None]

    def _rows_of(self, lengths: Sequence[int], width: int) -> contextlib.AbstractContextManager[None]:
        """Within the block, the body's per-position modules run on the real positions only (:mod:`.packing`)."""
        return self.packing.rows_of(lengths, width) if self.packing is not None else contextlib.nullcontext()

    def to_device(self, values: list[Any], dtype: torch.dtype = torch.long) -> torch.Tensor:
        """A host list as a tensor on the model's device (pinned, non-blocking copy on CUDA)."""
        t = torch.tensor(values, dtype=dtype)
        if self.device.type == "cuda":
            return t.pin_memory().to(self.device, non_blocking=True)
        return t.to(self.device)

    def _score_chunk(self, seqs: list[Sequence[int]], prefix_lens: list[int], top_k: int,
                     plan: BatchShape = BatchShape()
                     ) -> tuple[torch.Tensor, Callable[[list[float]], list[TokenScores]]]:
        """Score one batch. ``prefix_lens[b]`` leading tokens of sequence ``b`` are shared with the other
        members having the same prefix (0: nothing shared; a batch never mixes shared and unshared members).
        Shared prefixes run once each, right-padded to ``prefix_width``; their key/value cache is gathered per
        member, and the continuations run right-padded to ``width`` with an attention mask hiding the prefix
        padding and explicit positions. ``plan``: the batch's widths (default: the canonical width of the longest
        member) and, with fixed shapes, its row counts (:class:`.microbatch.BatchShape`); a batch
        of fewer than ``MIN_ROWS`` tokens gets copies of its first member (dropped), so every product has at
        least ``MIN_ROWS`` rows. Everything is prepared on the host and copied at once; one synchronisation
        (the final transfer of the results) per batch. Fixed shapes: the batch is filled to exactly
        ``plan.rows`` rows and its prefix pass to ``plan.prefix_rows`` rows with copies of the first member, and
        the projection runs in slices of ``plan.project_rows`` rows. Returns ``(scores on the device, finish)``,
        ``finish(host list of those scores)`` giving the results (the caller synchronises once for many
        batches)."""
        seqs, starts, n_real, width, prefix_width = self._fill(seqs, prefix_lens, plan)
        B = len(seqs)
        pieces: list[torch.Tensor] = []  # per-token scores, concatenated: one transfer at the end
        top_pieces: list[list[list[tuple[int, float]]]] = []
        pre = self._prefix_pass(seqs, starts, prefix_width, plan.prefix_rows)
        slice_rows = plan.project_rows
        if pre is not None:
            p_hidden, pids, member_group, plen, _ = pre
            # shared tokens 1..L-1 of each prefix, predicted by prefix rows 0..L-2
            need_host = [[j < L - 1 for j in range(prefix_width)] for L in plen]
            need_host += [[False] * prefix_width] * (pids.shape[0] - len(plen))
            need = self.to_device(need_host, torch.bool)
            g_lp, g_top = self.project_scores(p_hidden[need], pids[:, 1:][need[:, :-1]], top_k, slice_rows)
            # first own token of each member, predicted by the last row of its prefix
            grp = self.to_device(member_group)
            last = self.to_device([plen[g] - 1 for g in member_group])
            own_first = self.to_device([s[p] for s, p in zip(seqs, starts)])
            f_lp, f_top = self.project_scores(p_hidden[grp, last], own_first, top_k, slice_rows)
            pieces += [g_lp, f_lp]
            top_pieces += [g_top or [], f_top or []]
        hidden, ids = self._continuation_pass(seqs, starts, width, prefix_width, pre[4] if pre else None)
        suffix_lens = [len(s) - p for s, p in zip(seqs, starts)]
        # position j of row b predicts continuation token j+1: needed for j < suffix_len - 1
        need = self.to_device([[j < L - 1 for j in range(width)] for L in suffix_lens], torch.bool)
        targets = ids[:, 1:][need[:, :-1]] if width > 1 else ids.new_empty(0)
        own_lp, own_top = self.project_scores(hidden[need], targets, top_k, slice_rows)
        pieces.append(own_lp)
        top_pieces.append(own_top or [])
        flat_dev = torch.cat([t.float() for t in pieces])
        tops_flat = [t for part in top_pieces for t in part]
        lengths, groups = (pre[3], pre[2]) if pre else (None, [-1] * B)

        def finish(flat: list[float]) -> list[TokenScores]:
            return self._slice_results(flat, tops_flat, seqs[:n_real], suffix_lens, groups, lengths, B, top_k)

        return flat_dev, finish

    @torch.inference_mode()
    def last_rows(self, seqs: list[Sequence[int]], prefix_lens: list[int], plan: BatchShape = BatchShape()
                  ) -> torch.Tensor:
        """Hidden (or logit) rows of each sequence's last token, the rows that predict its next token, for one
        batch run exactly as :meth:`_score_chunk` runs it (shared prefixes once, fixed shapes); one row per
        batch row, padding copies included (``plan.rows`` or more rows; the first ``len(seqs)`` are the
        sequences')."""
        seqs, starts, _, width, prefix_width = self._fill(seqs, prefix_lens, plan)
        pre = self._prefix_pass(seqs, starts, prefix_width, plan.prefix_rows)
        hidden, _ = self._continuation_pass(seqs, starts, width, prefix_width, pre[4] if pre else None)
        last = self.to_device([len(s) - p - 1 for s, p in zip(seqs, starts)])
        return hidden[torch.arange(len(seqs), device=hidden.device), last]

    def _fill(self, seqs: list[Sequence[int]], prefix_lens: list[int], plan: BatchShape
              ) -> tuple[list[Sequence[int]], list[int], int, int, int]:
        """(members with padding copies, their prefix lengths, real members, width, prefix width) of a batch."""
        n_real, starts, prefix_width = len(seqs), list(prefix_lens), plan.prefix_width
        if any(starts) and not all(starts):
            raise AssertionError("a batch mixes shared and unshared sequences")
        width = plan.width or bucket_width(max(len(s) - p for s, p in zip(seqs, starts)))
        if any(starts):
            prefix_width = prefix_width or bucket_width(max(starts))
        if plan.rows or len(seqs) * width < MIN_ROWS:  # copies of the first member (results dropped)
            extra = (plan.rows or -(-MIN_ROWS // width)) - len(seqs)
            seqs, starts = list(seqs) + [seqs[0]] * extra, starts + [starts[0]] * extra
        return seqs, starts, n_real, width, prefix_width

    def _prefix_pass(self, seqs: list[Sequence[int]], starts: list[int], prefix_width: int, pre_rows: int
                     ) -> tuple[torch.Tensor, torch.Tensor, list[int], list[int], Any] | None:
        """The shared prefixes of a batch run once each (``pre_rows`` rows with fixed shapes; copies of the first
        fill the pass): (hidden rows, their ids, each member's prefix, prefix lengths, the key/value cache
        gathered per member), or ``None`` when nothing is shared."""
        group_of: dict[tuple[int, ...], int] = {}
        member_group = [group_of.setdefault(tuple(s[:p]), len(group_of)) if p else -1 for s, p in zip(seqs, starts)]
        prefixes = list(group_of)
        if not prefixes:
            return None
        n_pre = pre_rows or max(len(prefixes), -(-MIN_ROWS // prefix_width))  # padding rows: copies of the first
        if n_pre < len(prefixes):
            raise AssertionError(f"{len(prefixes)} prefixes in a batch planned for at most {n_pre}")
        rows_ids = [list(t) + [self.pad_id] * (prefix_width - len(t)) for t in prefixes]
        rows_ids += [rows_ids[0]] * (n_pre - len(prefixes))
        pids = self.to_device(rows_ids)
        with self._rows_of([len(t) for t in prefixes] + [len(prefixes[0])] * (n_pre - len(prefixes)), prefix_width):
            hidden, cache = self.forward(pids, want_cache=True)
        cache.reorder_cache(self.to_device(member_group))
        return hidden, pids, member_group, [len(t) for t in prefixes], cache

    def _continuation_pass(self, seqs: list[Sequence[int]], starts: list[int], width: int, prefix_width: int,
                           cache: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """(hidden rows, ids) of the members' own tokens, right-padded to ``width``, after their prefixes'
        cache (attention mask hiding the prefix padding, explicit positions)."""
        ids = self.to_device([list(s[p:]) + [self.pad_id] * (width - len(s) + p) for s, p in zip(seqs, starts)])
        with self._rows_of([len(s) - p for s, p in zip(seqs, starts)], width):
            return self._run_continuation(ids, starts, width, prefix_width, cache), ids

    def _run_continuation(self, ids: torch.Tensor, starts: list[int], width: int, prefix_width: int, cache: Any
                          ) -> torch.Tensor:
        if cache is None and self.graphs is not None:
            return self.graphs(ids)
        extra_kw: dict[str, Any] = {}
        if cache is not None:  # always explicit: the same attention path whatever the other members
            extra_kw["attention_mask"] = self.to_device(
                [[1] * p + [0] * (prefix_width - p) + [1] * width for p in starts])
            extra_kw["position_ids"] = self.to_device([list(range(p, p + width)) for p in starts])
        if cache is not None and self.cached is not None:  # fixed-shape cache, graphed per plan key
            return self.cached(ids, cache, extra_kw["attention_mask"], extra_kw["position_ids"])
        return self.forward(ids, cache=cache, **extra_kw)[0]

    @staticmethod
    def _slice_results(flat: list[float], tops_flat: list[Any], seqs: list[Sequence[int]], suffix_lens: list[int],
                       member_group: list[int], plen: list[int] | None, B: int, top_k: int) -> list[TokenScores]:
        """Per-sequence results from a batch's flat scores: [shared prefix tokens per prefix][first own token
        per member (``B`` members, padding copies included)][own tokens]."""
        pre_start, cursor = [], 0
        for L in plen or []:
            pre_start.append(cursor)
            cursor += L - 1
        first_start = cursor
        cursor += B if plen is not None else 0
        out = []
        for b in range(len(seqs)):
            s, k = seqs[b], suffix_lens[b] - 1
            own = slice(cursor, cursor + k)
            cursor += k
            if plen is not None:
                g = member_group[b]
                shared = slice(pre_start[g], pre_start[g] + plen[g] - 1)
                lps = flat[shared] + [flat[first_start + b]] + flat[own]
                top = (tops_flat[shared] + [tops_flat[first_start + b]] + tops_flat[own]) if top_k else None
            else:
                lps, top = flat[own], (tops_flat[own] if top_k else None)
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
