"""Counting a task run before it runs: items, inspect samples, model calls per role, tokens, USD, seconds.

The task object comes from the task's own builder (``stereoprobe plan`` loads it through inspect's registry,
with the same ``-T`` arguments as ``inspect eval``), so the counts follow the task's defaults and selection.
What the task does not fix (story lengths, role prompts, the roles bound by default) comes from
``datasets/plan.yaml`` and is reported as an assumption.

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

from stereoprobe.dbb import contract as DBB
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


def _scored_texts(sample: Any) -> list[str] | None:
    """Texts a likelihood sample scores: ``metadata["texts"]`` items, or DBB-SG's prompt + option sentences."""
    md = sample.metadata or {}
    if isinstance(md.get(TEXTS_METADATA), list):
        return [str(t.get("text", "")) if isinstance(t, Mapping) else str(t) for t in md[TEXTS_METADATA]]
    if isinstance(md.get(DBB.META_MCQ_QUESTIONS), list):  # DBB logprob mode grouped: both option orders
        from stereoprobe.dbb import scoring as SC

        tmpl = SC.prompts()["mcq"]
        return [SC.mcq_prompt(q["context"], first, second, tmpl) for q in md[DBB.META_MCQ_QUESTIONS]
                for first, second in ((q["option_a"], q["option_b"]), (q["option_b"], q["option_a"]))]
    if isinstance(md.get(DBB.META_SG_QUESTIONS), list):  # DBB-SG grouped: one sample per template
        return [f"{q['prompt']} {o}" for q in md[DBB.META_SG_QUESTIONS] for pair in q.get("options", []) for o in pair]
    if DBB.META_SG_PROMPT in md and DBB.META_SG_OPTIONS in md:
        return [f"{md[DBB.META_SG_PROMPT]} {o}" for pair in md[DBB.META_SG_OPTIONS] for o in pair]
    return None


def _questions(sample: Any) -> int:
    """DBB questions in a sample (grouped DBB-SG samples hold a template's questions)."""
    md = sample.metadata or {}
    for key in (DBB.META_SG_QUESTIONS, DBB.META_MCQ_QUESTIONS):
        if isinstance(md.get(key), list):
            return len(md[key])
    return 1


def plan_unit(task: str) -> PlanTask:
    """What the planner knows of inspect task ``task`` from its probe's descriptor (``samples`` for a task
    no probe describes, e.g. the DBB builders)."""
    return probe_plan_task(task) or PlanTask("samples")


def _short_name(task: Any) -> str:
    return str(getattr(task, "name", "") or "").split("/")[-1]


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
    if epochs is not None and int(epochs) < 1:
        raise InputError(f"--epochs must be >= 1, got {epochs}")
    n_epochs = int(epochs if epochs is not None else (getattr(task, "epochs", None) or 1))
    samples = list(task.dataset)
    n = len(samples)
    notes: list[str] = []
    cpt = float(a.get("chars_per_token", 4))
    if count is None:
        count, how = counter_for(model, cpt)
    else:
        how = "given counter"
    notes.append(f"tokens counted with the {how}")
    sample_cap = int(a.get("tokenizer_sample", 20000))

    # role bindings: given ones, else the papers' defaults for this task
    bound: dict[str, list[str]] = {k: list(v) for k, v in (roles or {}).items()}
    for role, k in ((a.get("default_roles") or {}).get(name) or {}).items():
        if role not in bound:
            bound[role] = [model or "?"] * int(k)
            notes.append(f"role '{role}' not given: assumed {k} model(s) as in the paper, priced as the subject")
    unit = plan_unit(name)
    main_role = unit.main_role
    cfg = getattr(task, "config", None)
    if model:  # a likelihood task on a chat API is refused, not priced
        require_logprobs(model, logprob_requirement(cfg), f"task {name}")
    likelihood = bool(cfg is not None and getattr(cfg, "prompt_logprobs", None))
    max_tokens = getattr(cfg, "max_tokens", None) if cfg is not None else None
    outs = {**(a.get("output_tokens") or {}).get("default", {}), **(a.get("output_tokens") or {}).get(name, {})}
    role_prompt = (a.get("role_prompt_tokens") or {}).get(name, {})

    texts = [_scored_texts(s) for s in samples]
    calls: dict[str, int] = {}
    tok_in: dict[str, int] = {}
    tok_out: dict[str, int] = {}
    if any(t is not None for t in texts):  # likelihood requests over given texts (one per text, or grouped)
        flat = [x for t in texts for x in (t or [])]
        grouped = any(N_TEXTS_METADATA in (s.metadata or {}) for s in samples)
        items = len(flat) if unit.counts == "texts" else sum(_questions(s) for s in samples)
        provider = (model or "").split("/", 1)[0]
        batched = grouped and provider in set(a.get("batching_providers") or ())
        calls[main_role] = (n if batched else len(flat)) * n_epochs
        tok_in[main_role] = count_texts(flat, count, sample_cap) * n_epochs
        tok_out[main_role] = 0 if likelihood else len(flat) * n_epochs  # logprob MCQ: one answer token per text
        notes.append(f"{len(flat):,} texts scored per epoch, "
                     + ("one request per sample (the provider batches a sample's texts)" if batched
                        else "one request per text"))
    else:
        inputs = [_text(s.input) for s in samples]
        per_out = 1 if likelihood else int(outs.get("generator", 300))
        if max_tokens and not likelihood:
            per_out = min(per_out, int(max_tokens))
        items = n * n_epochs if unit.per_epoch else n
        calls[main_role] = n * n_epochs
        tok_in[main_role] = (count_texts(inputs, count, sample_cap) * n_epochs
                             + int(role_prompt.get(main_role, 0)) * calls[main_role])
        tok_out[main_role] = per_out * n * n_epochs
        per_name = (a.get("output_tokens_per_name") or {}).get(name)
        named = [len((s.metadata or {}).get("names") or ()) for s in samples]
        if per_name and not likelihood and any(named):  # one profile per name of the request (GlobalBias)
            cap = int(max_tokens) if max_tokens else None
            tok_out[main_role] = sum(min(int(per_name) * k, cap) if cap else int(per_name) * k
                                     for k in named) * n_epochs
            per_out = round(tok_out[main_role] / max(n * n_epochs, 1))
            notes.append(f"output: {per_name} tokens per name ({per_out:,} per request on average) assumed "
                         "(datasets/plan.yaml)")
        elif not likelihood:
            notes.append(f"output: {per_out} tokens per {main_role} call assumed (datasets/plan.yaml)")
        for role in unit.reader_roles:
            k = len(bound.get(role, []))
            if k == 0:
                continue
            calls[role] = n * n_epochs * k
            tok_in[role] = (int(role_prompt.get(role, 0)) + per_out) * calls[role]
            tok_out[role] = int(outs.get(role, 100)) * calls[role]
        if "extractor" in calls:
            notes.append("extractor calls are an upper bound: refused stories skip extraction")

    models: dict[str, list[str]] = {main_role: [model or "?"]}
    for role in calls:
        models[role] = list(models[main_role] if role == main_role else bound.get(role, [])) or [model or "?"]
    tokens_by_role = {r: {"input": tok_in[r], "output": tok_out[r]} for r in calls}
    cost = price_run(tokens_by_role, models, prices)
    for item in cost.unpriced:
        notes.append(f"no price for {item} in {prices.source}: total USD unknown, USD of the priced models shown")
    stale = stale_prices(prices, [m for ms in models.values() for m in ms], today=today)
    if stale:
        notes.append(stale)
    seconds = None
    if seconds_per_call is not None:
        seconds = float(seconds_per_call) * n * n_epochs
        notes.append(f"time: {float(seconds_per_call):,.2f} s per sample and epoch, measured on {model} (--calibrate)")
    return Plan(task=name, items=int(items), unit=unit.unit, samples=n, epochs=n_epochs,
                model_calls=calls, input_tokens=int(sum(tok_in.values())), output_tokens=int(sum(tok_out.values())),
                usd=cost.usd, seconds=seconds, models=models, tokens_by_role=tokens_by_role,
                notes=list(dict.fromkeys(notes)), usd_priced=cost.usd_priced, usd_batch=cost.usd_batch,
                usd_batch_priced=cost.usd_batch_priced, unpriced=cost.unpriced, batch_models=cost.batch_models)
