"""Batch plans for causal likelihood scoring: prefix groups, canonical widths, token budgets (pure Python).

A plan is a list of :class:`Chunk` (one forward batch each). It is a deterministic function of the sequences,
their planning groups and the size limit, and it is built so that **the computation of a sequence does not
depend on the other sequences of its batch**:

- *prefix groups are found within a planning group* (one grouped request: the texts of one inspect sample),
  so the prefix a sequence shares, and therefore its computation, does not depend on which other requests
  were waiting (concurrency) nor on the batch size;
- *canonical widths*: a sequence of ``n`` tokens (a shared prefix of ``p`` tokens, a continuation of ``c``)
  is always run right-padded to ``bucket_width(n)`` (``bucket_width(p)``, ``bucket_width(c)``, or the widest
  continuation width of its prefix group when that runs the prefix once instead of once per width: a function
  of its own request), and a batch holds only sequences of one width key, so the padding a sequence sees never
  depends on its companions;
- the batch size only decides how many sequences of one key run together.

With row-independent kernels (float32 matrix products on CPU whose rows do not depend on the row count once
a product has 16 rows or more, which the scorer ensures) the log-probabilities of a sequence are then
bit-identical whatever the batch size, token budget or concurrency; ``tests/providers/test_batch_invariance.py``
checks it.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from stereoprobe.providers.microbatch import BatchShape, MicroBatchShape

WIDTH_STEP = 4  # canonical widths are multiples of this: at most 3 padding tokens per sequence
FANOUT = 8  # fixed shapes: prefix groups of at least this many sequences get a prefix pass of rows // 8 + 2 rows


def bucket_width(n: int) -> int:
    """The width a sequence (or prefix, or continuation) of ``n`` tokens is always padded to."""
    return WIDTH_STEP * max(1, -(-n // WIDTH_STEP))


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
    sequences of its planning group (0 = none). ``prefix_width`` (0 without shared prefixes) and ``width``
    are the canonical padded widths of the prefixes and of the continuations (the whole sequences when
    nothing is shared); every member has the same widths."""

    indices: list[int]
    prefix_lens: list[int]
    prefix_width: int = 0
    width: int = 0
    fanout: int = 0  # fixed shapes: the key's prefix-group class (FANOUT or 1; 0 without shared prefixes)
    shape: BatchShape = BatchShape()  # the batch's shape plan, planned with the chunk (:func:`plan_chunks`)

    @property
    def shared(self) -> bool:
        return any(self.prefix_lens)


def share_prefixes(seqs: Sequence[Sequence[int]], groups: Sequence[Hashable] | None = None,
                   min_prefix: int = 2) -> list[int]:
    """Per sequence, the length of the prefix it shares with other sequences of its planning group (0 = none).

    ``groups[i]`` is the planning group of sequence ``i`` (``None``: all sequences form one group): prefix
    groups never span planning groups, so a sequence's prefix is a function of its own group only.
    """
    by_group: dict[Hashable, list[int]] = {}
    for i in range(len(seqs)):
        by_group.setdefault(None if groups is None else groups[i], []).append(i)
    prefix = [0] * len(seqs)
    for members in by_group.values():
        if len(members) < 2:
            continue
        for p, part in _prefix_groups(seqs, members):
            if p >= min_prefix and len(part) > 1:
                for i in part:
                    prefix[i] = p
    return prefix


def _widths(seqs: Sequence[Sequence[int]], prefix: list[int], groups: Sequence[Hashable] | None
            ) -> list[tuple[int, int]]:
    """Per sequence, its canonical (prefix width, continuation width). A prefix group whose continuations fall
    into several widths runs its prefix once per width (a key per width) unless its members take one width,
    the group's widest: the cheaper of the two in padded tokens (a DBB-SG question's long prompt before options
    of a few lengths: one width; a GlobalBias name before descriptors of every length: per width). Decided
    from the group's own sequences, so a sequence's widths still depend on its own request only."""
    widths = [(bucket_width(p) if p else 0, bucket_width(len(s) - p)) for s, p in zip(seqs, prefix)]
    members: dict[tuple[object, ...], list[int]] = {}
    for i, p in enumerate(prefix):
        if p:
            members.setdefault((None if groups is None else groups[i], tuple(seqs[i][:p])), []).append(i)
    for idx in members.values():
        pw, own = widths[idx[0]][0], [widths[i][1] for i in idx]
        if len(set(own)) > 1 and pw + len(idx) * max(own) <= len(set(own)) * pw + sum(own):
            for i in idx:
                widths[i] = (pw, max(own))
    return widths


def plan_chunks(
    seqs: Sequence[Sequence[int]],
    batch_size: int | None = 64,
    prefix_sharing: bool = True,
    min_prefix: int = 2,
    groups: Sequence[Hashable] | None = None,
    max_tokens: int | None = None,
    shape: MicroBatchShape | None = None,
) -> list[Chunk]:
    """Split sequences into forward batches (see the module docstring).

    Sequences are keyed by their canonical widths (shared prefix, continuation); a key's sequences are ordered
    by prefix group, then by index, and cut into batches of ``batch_size`` sequences, or, when ``batch_size``
    is ``None``, of as many sequences as fit ``max_tokens`` padded tokens (prefix width + width per sequence;
    at least one). Keys are visited from the widest down.

    Every chunk carries its :class:`.microbatch.BatchShape`: its canonical widths and, with fixed shapes
    (``shape``, :mod:`.microbatch`), the row counts of its forward, prefix and projection products, a function of
    the chunk's plan key alone. With fixed shapes the key also holds the class of the sequence's prefix group
    within its own request and width key (``f`` = :data:`FANOUT` when it has at least that many members, else
    1), so a batch of ``rows`` sequences, whose prefix groups are contiguous and at least ``f`` long, meets at
    most ``rows // f + 2`` distinct prefixes: the fixed row count of its prefix pass (:func:`prefix_rows`), a
    function of the key alone. Two classes only, so few keys (each key's last batch of a plan is padded).
    """
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"batch_size must be ≥ 1, got {batch_size}")
    if batch_size is None and (max_tokens is None or max_tokens < 1):
        raise ValueError(f"max_tokens must be ≥ 1 when batch_size is not given, got {max_tokens}")
    fanout = shape is not None
    prefix = share_prefixes(seqs, groups, min_prefix) if prefix_sharing and len(seqs) > 1 else [0] * len(seqs)
    widths = _widths(seqs, prefix, groups)
    sizes: dict[tuple[object, ...], int] = {}  # members of each prefix group within its width key

    def group_key(i: int) -> tuple[object, ...]:
        return (None if groups is None else groups[i], tuple(seqs[i][: prefix[i]]), widths[i])

    if fanout:
        for i in range(len(seqs)):
            if prefix[i]:
                sizes[group_key(i)] = sizes.get(group_key(i), 0) + 1
    buckets: dict[tuple[int, int, int], list[int]] = {}
    for i in range(len(seqs)):
        f = (FANOUT if sizes[group_key(i)] >= FANOUT else 1) if fanout and prefix[i] else 0
        buckets.setdefault((*widths[i], f), []).append(i)
    first_of_prefix: dict[tuple[object, tuple[int, ...]], int] = {}
    plan: list[Chunk] = []
    for (pw, w, f), members in sorted(buckets.items(), key=lambda kv: (-(kv[0][0] + kv[0][1]), -kv[0][1], kv[0][2])):
        def order(i: int) -> tuple[int, int]:
            key = (None if groups is None else groups[i], tuple(seqs[i][: prefix[i]]))
            return first_of_prefix.setdefault(key, i), i

        members = sorted(members, key=order)
        rows = batch_size if batch_size is not None else max(1, int(max_tokens) // (pw + w))  # type: ignore[arg-type]
        for s in range(0, len(members), rows):
            part = members[s : s + rows]
            chunk = Chunk(part, [prefix[i] for i in part], pw, w, f)
            chunk.shape = _batch_shape(chunk, shape)
            plan.append(chunk)
    return plan


def prefix_rows(rows: int, fanout: int) -> int:
    """Rows of the fixed-shape prefix pass of a batch of ``rows`` sequences whose prefix groups are at least
    ``fanout`` long (see :func:`plan_chunks`)."""
    return min(rows, rows // max(1, fanout) + 2)


def _batch_shape(chunk: Chunk, shape: MicroBatchShape | None) -> BatchShape:
    """The shape plan of a batch: its canonical widths and, with fixed shapes (``shape``), the row counts of its
    forward, prefix and projection products, a function of the chunk's plan key alone."""
    if shape is None:
        return BatchShape(chunk.prefix_width, chunk.width)
    rows = shape.rows(chunk.prefix_width, chunk.width)
    return shape.plan(chunk.prefix_width, chunk.width, prefix_rows(rows, chunk.fanout) if chunk.shared else 0)


@dataclass(frozen=True)
class BatchPolicy:
    """How a plan cuts its forward batches, decided in one place for scoring and the one-token route:
    ``batch_size`` sequences per forward, else as many as fit ``batch_tokens`` padded tokens; ``shape``: fixed
    micro-batches instead (:mod:`.microbatch`; ``batch_size`` and ``batch_tokens`` then decide nothing)."""

    batch_size: int | None = None
    batch_tokens: int | None = 4096
    shape: MicroBatchShape | None = None

    def plan(self, seqs: Sequence[Sequence[int]], prefix_sharing: bool = True,
             groups: Sequence[Hashable] | None = None) -> list[Chunk]:
        """The chunks of ``seqs`` (:func:`plan_chunks`), each with its :class:`.microbatch.BatchShape`."""
        if self.shape is not None:
            return plan_chunks(seqs, None, prefix_sharing, groups=groups, max_tokens=self.shape.tokens,
                               shape=self.shape)
        tokens = None if self.batch_size is not None else self.batch_tokens
        return plan_chunks(seqs, self.batch_size, prefix_sharing, groups=groups, max_tokens=tokens)
