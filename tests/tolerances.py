"""Tolerances for comparing floating-point results of torch models in tests (any x86-64 CPU, any BLAS).

Log-probabilities are compared **per token** (never as sums of a whole sentence, whose error grows with its
length), with ``pytest.approx(expected, abs=LOGPROB_ABS, rel=LOGPROB_REL)``: the allowed difference of a
token is ``max(LOGPROB_ABS, LOGPROB_REL * |expected|)``.

Why these values. The model runs in float32 (24-bit mantissa, machine epsilon 1.19e-7). A token's
log-probability is its logit minus the log-sum-exp over the vocabulary (49,152 entries for the bundled
SmolLM2-135M), both the result of ~30 layers of matrix products whose summation order depends on the
batch shape, the padding and the BLAS kernel the CPU selects (AVX2, AVX-512, AMX). Identical inputs in
different batch shapes therefore give per-token log-probabilities that differ in their last bits, which
after the layers amounts to 1e-6 to 1e-4 nats: 1.14e-4 nats was observed between two x86-64 machines for
the same token, above the former 1e-4 limit. The reference computations of the tests use a float64
softmax on float32 logits, which removes the softmax's own rounding but not the logits'.

- ``LOGPROB_ABS = 5e-4`` nats: 4x the largest difference observed across machines, still 20x smaller
  than the smallest real effect the tests check (conditioning on BOS moves log-probabilities by > 1e-2;
  ``test_score_first_token_prepends_bos`` asserts a difference of more than 1e-3).
- ``LOGPROB_REL = 1e-5``: for very unlikely tokens (|log p| > 50 nats) the rounding of the logits scales
  with their magnitude; 1e-5 is ~100 float32 epsilons.

A sum over ``n`` tokens (a sentence total) may then differ by up to ``n * LOGPROB_ABS``: use
:func:`sum_tolerance`.
"""

from __future__ import annotations

LOGPROB_ABS = 5e-4
LOGPROB_REL = 1e-5


def sum_tolerance(n_tokens: int) -> float:
    """Allowed absolute difference of a sum of ``n_tokens`` per-token log-probabilities (errors may add up)."""
    return LOGPROB_ABS * max(1, n_tokens)
