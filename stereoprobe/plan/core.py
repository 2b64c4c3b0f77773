"""Counting a task run before it runs: items, inspect samples, model calls per role, tokens, USD, seconds.

The task object comes from the task's own builder (``stereoprobe plan`` loads it through inspect's registry,
with the same ``-T`` arguments as ``inspect eval``), so the counts follow the task's defaults and selection.
What the task does not fix (story lengths, role prompts, the roles bound by default) comes from the probe's
descriptor (:class:`stereoprobe.probes.PlanTask`), what holds for every task from ``datasets/plan.yaml``;
both are reported as assumptions. Nothing here names a probe: a likelihood sample's texts are its ``texts``
items (:mod:`stereoprobe.likelihood`) or what the descriptor's ``texts`` function reads from it.

Per task family:

- StereoTales (``stereotales``): items = stories = samples × epochs; the subject writes each story, the
  refusal detector reads each story, every extractor reads each story the detector let through, so the
  extractor count is an upper bound (refused stories skip extraction).
- StereoTales judge (``stereotales_judge``): the model under evaluation is the judge; one call per sample
  and epoch.
- Likelihood tasks (``globalbias``, ``dbb_sg``, ``dbb`` in logprob mode): the texts of a sample (GlobalBias
  sentences, DBB-SG prompt + option sentences, DBB MCQ prompts in both option orders) are scored in one
  request per sample and epoch by providers that batch them; items = sentences (GlobalBias) or questions
  (DBB); no output tokens, one answer token per prompt in DBB's logprob mode.
- Everything else (``dbb`` sampled, ``globalbias_profiles``, builders): one generation per sample and epoch.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stereoprobe.errors import InputError
from stereoprobe.likelihood import N_TEXTS_METADATA, TEXTS_METADATA, logprob_requirement, require_logprobs
from stereoprobe.plan.cost import price_run
from stereoprobe.plan.prices import PriceTable, load_prices, stale_prices
from stereoprobe.plan.tokens import count_texts, counter_for
from stereoprobe.probes import PlanTask, RegistryView, registered
from stereoprobe.probes import plan_task as probe_plan_task

#: the benchmark's own unit per task (the ``items`` of a plan), from the registered probes' descriptors
UNITS: Mapping[str, str] = RegistryView(lambda: {k: v.unit for d in registered() for k, v in d.tasks.items()})


@dataclass
class Plan:
    """The plan of one task run (JSON keys of ``stereoprobe plan --json``)."""

    task: str
    items: int
    unit: str
    samples: int
    epochs: int
    model_calls: dict[str, int]
    input_tokens: int
    output_tokens: int
    usd: float | None
    seconds: float | None
    models: dict[str, list[str]] = field(default_factory=dict)
    tokens_by_role: dict[str, dict[str, int]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    usd_priced: float = 0.0
    usd_batch: float | None = None
    usd_batch_priced: float = 0.0
    unpriced: list[str] = field(default_factory=list)
    batch_models: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The plan as a JSON-ready dict (required keys first)."""
        return {"task": self.task, "items": self.items, "unit": self.unit, "samples": self.samples,
                "epochs": self.epochs, "model_calls": dict(self.model_calls), "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "usd": self.usd, "seconds": self.seconds,
                "usd_priced": self.usd_priced, "unpriced": list(self.unpriced), "usd_batch": self.usd_batch,
                "usd_batch_priced": self.usd_batch_priced, "batch_models": list(self.batch_models),
                "models": self.models, "tokens_by_role": self.tokens_by_role, "notes": list(self.notes)}


def load_assumptions() -> dict[str, Any]:
    """``datasets/plan.yaml``: chars per token, default roles, expected output and role-prompt tokens."""
    import yaml

    from stereoprobe.paths import dataset_file

    return yaml.safe_load(dataset_file("plan.yaml").read_text(encoding="utf-8"))


def _text(x: Any) -> str:
    if isinstance(x, str):
        return x
    parts = []
    for m in x or ():
        c = getattr(m, "content", "")
        parts.append(c if isinstance(c, str) else " ".join(getattr(p, "text", "") or "" for p in c))
    return "\n".join(parts)


def _scored_texts(sample: Any, unit: PlanTask) -> list[str] | None:
    """Texts a likelihood sample scores: ``metadata["texts"]`` items, else the descriptor's ``texts`` reader."""
    md = sample.metadata or {}
    if isinstance(md.get(TEXTS_METADATA), list):
        return [str(t.get("text", "")) if isinstance(t, Mapping) else str(t) for t in md[TEXTS_METADATA]]
    return unit.call("texts", sample)


def _items(sample: Any, unit: PlanTask) -> int:
    """Benchmark items in a sample: the descriptor's ``items`` reader, else one."""
    n = unit.call("items", sample)
    return 1 if n is None else int(n)


def plan_unit(task: str) -> PlanTask:
    """What the planner knows of inspect task ``task`` from its probe's descriptor (``samples`` for a task
    no probe describes, e.g. the DBB builders)."""
    return probe_plan_task(task) or PlanTask("samples")


def _short_name(task: Any) -> str:
    return str(getattr(task, "name", "") or "").split("/")[-1]


@dataclass
class _Counts:
    """Model calls and tokens per role of a run, its benchmark items and the notes on how they were counted."""

    items: int = 0
    calls: dict[str, int] = field(default_factory=dict)
    tok_in: dict[str, int] = field(default_factory=dict)
    tok_out: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Run:
    """What every count of one run reads: the task's samples, epochs, descriptor facts and model."""

    name: str
    samples: list[Any]
    epochs: int
    unit: PlanTask
    model: str | None
    likelihood: bool
    max_tokens: int | None
    count: Callable[[str], int]
    sample_cap: int

    @property
    def n(self) -> int:
        return len(self.samples)


def _bind_roles(run: _Run, roles: Mapping[str, Sequence[str]] | None, notes: list[str]) -> dict[str, list[str]]:
    """The given role bindings, else the probe's default roles (the paper's setup), priced as the subject."""
    bound: dict[str, list[str]] = {k: list(v) for k, v in (roles or {}).items()}
    assumed = []
    for role, k in run.unit.default_roles.items():
        if role not in bound:
            bound[role] = [run.model or "?"] * int(k)
            assumed.append(f"role '{role}' not given: assumed {k} model{'s' if int(k) != 1 else ''}")
    if assumed:  # one note for every role assumed (issue 35.12: near-identical notes merged)
        notes.append(f"{'; '.join(assumed)}, as in the paper, priced as the subject")
    return bound


def _likelihood_counts(run: _Run, texts: list[list[str] | None], batching: Sequence[str]) -> _Counts:
    """Requests over given texts: one per text, or one per sample where the provider batches a sample's texts."""
    c = _Counts()
    role, e = run.unit.main_role, run.epochs
    flat = [x for t in texts for x in (t or [])]
    grouped = any(N_TEXTS_METADATA in (s.metadata or {}) for s in run.samples)
    c.items = len(flat) if run.unit.counts == "texts" else sum(_items(s, run.unit) for s in run.samples)
    batched = grouped and (run.model or "").split("/", 1)[0] in set(batching)
    c.calls[role] = (run.n if batched else len(flat)) * e
    c.tok_in[role] = count_texts(flat, run.count, run.sample_cap) * e
    c.tok_out[role] = 0 if run.likelihood else len(flat) * e  # logprob MCQ: one answer token per text
    c.notes.append(f"{len(flat):,} texts scored per epoch, " + ("one request per sample (the provider batches "
                   "a sample's texts)" if batched else "one request per text"))
    return c


def _main_output(run: _Run, outs: Mapping[str, int], c: _Counts) -> int:
    """Output tokens of the main role (set in ``c``); returns the tokens per call the reader roles read."""
    role, n, e = run.unit.main_role, run.n, run.epochs
    per_out = 1 if run.likelihood else int(outs.get(role, outs.get("generator", 300)))
    if run.max_tokens and not run.likelihood:
        per_out = min(per_out, int(run.max_tokens))
    c.tok_out[role] = per_out * n * e
    per_name = run.unit.output_tokens_per_name
    named = [len((s.metadata or {}).get("names") or ()) for s in run.samples]
    if per_name and not run.likelihood and any(named):  # one answer per name of the request
        cap = int(run.max_tokens) if run.max_tokens else None
        c.tok_out[role] = sum(min(per_name * k, cap) if cap else per_name * k for k in named) * e
        per_out = round(c.tok_out[role] / max(n * e, 1))
        c.notes.append(f"output: {per_name} tokens per name ({per_out:,} per request on average) assumed "
                       f"(the {run.name} descriptor)")
    elif not run.likelihood:
        c.notes.append(f"output: {per_out} tokens per {role} call assumed")
    return per_out


def _generation_counts(run: _Run, bound: Mapping[str, list[str]], default_out: Mapping[str, int]) -> _Counts:
    """One request per sample and epoch, plus the reader roles' calls on each output."""
    c = _Counts()
    unit, role, n, e = run.unit, run.unit.main_role, run.n, run.epochs
    outs = {**default_out, **unit.output_tokens}
    prompt = unit.role_prompt_tokens
    c.items = n * e if unit.per_epoch else n
    c.calls[role] = n * e
    c.tok_in[role] = (count_texts([_text(s.input) for s in run.samples], run.count, run.sample_cap) * e
                      + int(prompt.get(role, 0)) * c.calls[role])
    per_out = _main_output(run, outs, c)
    for reader in unit.reader_roles:
        k = len(bound.get(reader, []))
        if k == 0:
            continue
        c.calls[reader] = n * e * k
        c.tok_in[reader] = (int(prompt.get(reader, 0)) + per_out) * c.calls[reader]
        c.tok_out[reader] = int(outs.get(reader, 100)) * c.calls[reader]
    if unit.reader_roles and any(r in c.calls for r in unit.reader_roles[1:]):
        c.notes.append(f"{', '.join(unit.reader_roles[1:])} calls are an upper bound: outputs the "
                       f"{unit.reader_roles[0]} role sets aside skip them")
    return c


def duration(seconds: float) -> str:
    """A time in the unit a person reads it in: ``21 s``, ``4.5 min``, ``3.2 h``, ``2.1 days``.

    >>> [duration(x) for x in (0.4, 21, 270, 11_520, 181_440)]
    ['0.4 s', '21 s', '4.5 min', '3.2 h', '2.1 days']
    """
    x = float(seconds)
    if x < 10:
        return f"{x:.1f} s"
    if x < 90:
        return f"{x:.0f} s"
    if x < 90 * 60:
        return f"{x / 60:.1f} min"
    if x < 48 * 3600:
        return f"{x / 3600:.1f} h"
    return f"{x / 86400:,.1f} days"


def time_note(seconds_per_call: float, model: str | None) -> str:
    """The note of a measured time: seconds per sample and epoch, and where they were measured."""
    return f"time: {float(seconds_per_call):,.2f} s per sample and epoch, measured on {model} (--calibrate)"


def with_seconds(plan: Plan, seconds_per_call: float, model: str | None) -> Plan:
    """``plan`` with the time of its run at ``seconds_per_call`` per sample and epoch (``--calibrate``)."""
    plan.seconds = float(seconds_per_call) * plan.samples * plan.epochs
    plan.notes.append(time_note(seconds_per_call, model))
    return plan


def plan_task(task: Any, model: str | None = None, roles: Mapping[str, Sequence[str]] | None = None,
              epochs: int | None = None, prices: PriceTable | None = None,
              seconds_per_call: float | None = None, assumptions: Mapping[str, Any] | None = None,
              count: Callable[[str], int] | None = None, today: dt.date | None = None) -> Plan:
    """Count one run of ``task`` (an inspect ``Task``) with ``model`` and role bindings ``roles``.

    ``seconds_per_call``: measured by :func:`stereoprobe.plan.calibrate.calibrate` (local models), turned
    into the run's estimate as seconds per sample-epoch × samples × epochs. ``count``: text -> tokens
    (default: the model's local tokenizer, else characters / 4). ``today``: the date prices are aged against
    (default: the local date; a note warns about prices older than 90 days).
    """
    a = dict(assumptions or load_assumptions())
    prices = prices or load_prices()
    name = _short_name(task)
    from stereoprobe.preflight.run_settings import check_epochs  # the one rule of --epochs

    try:
        check_epochs(None if epochs is None else int(epochs), task, "stereoprobe plan")
    except ValueError as exc:
        raise InputError(f"task {name}: {exc}") from None
    cfg = getattr(task, "config", None)
    if model:  # a likelihood task on a chat API is refused, not priced
        require_logprobs(model, logprob_requirement(cfg), f"task {name}")
    notes: list[str] = []
    if count is None:
        count, how = counter_for(model, float(a.get("chars_per_token", 4)))
    else:
        how = "given counter"
    notes.append(f"tokens counted with the {how}")
    run = _Run(name=name, samples=list(task.dataset), unit=plan_unit(name), model=model,
               epochs=int(epochs if epochs is not None else (getattr(task, "epochs", None) or 1)),
               likelihood=bool(cfg is not None and getattr(cfg, "prompt_logprobs", None)),
               max_tokens=getattr(cfg, "max_tokens", None) if cfg is not None else None, count=count,
               sample_cap=int(a.get("tokenizer_sample", 20000)))
    bound = _bind_roles(run, roles, notes)
    texts = [_scored_texts(s, run.unit) for s in run.samples]
    if any(t is not None for t in texts):
        c = _likelihood_counts(run, texts, a.get("batching_providers") or ())
    else:
        c = _generation_counts(run, bound, a.get("output_tokens") or {})
    return _priced(run, c, bound, notes, prices, seconds_per_call, today)


def _priced(run: _Run, c: _Counts, bound: Mapping[str, list[str]], notes: list[str], prices: PriceTable,
            seconds_per_call: float | None, today: dt.date | None) -> Plan:
    """The plan of counts ``c``: models per role, USD, price age and time."""
    notes = notes + c.notes
    main = run.unit.main_role
    models: dict[str, list[str]] = {main: [run.model or "?"]}
    for role in c.calls:
        models[role] = list(models[main] if role == main else bound.get(role, [])) or [run.model or "?"]
    tokens_by_role = {r: {"input": c.tok_in[r], "output": c.tok_out[r]} for r in c.calls}
    cost = price_run(tokens_by_role, models, prices)
    for item in cost.unpriced:
        notes.append(f"no price for {item} in {prices.source}: total USD unknown, USD of the priced models shown")
    stale = stale_prices(prices, [m for ms in models.values() for m in ms], today=today)
    if stale:
        notes.append(stale)
    seconds = None
    if seconds_per_call is not None:
        seconds = float(seconds_per_call) * run.n * run.epochs
        notes.append(time_note(seconds_per_call, run.model))
    return Plan(task=run.name, items=int(c.items), unit=run.unit.unit, samples=run.n, epochs=run.epochs,
                model_calls=c.calls, input_tokens=int(sum(c.tok_in.values())),
                output_tokens=int(sum(c.tok_out.values())), usd=cost.usd, seconds=seconds, models=models,
                tokens_by_role=tokens_by_role, notes=list(dict.fromkeys(notes)), usd_priced=cost.usd_priced,
                usd_batch=cost.usd_batch, usd_batch_priced=cost.usd_batch_priced, unpriced=cost.unpriced,
                batch_models=cost.batch_models)
