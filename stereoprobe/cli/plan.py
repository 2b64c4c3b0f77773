"""``stereoprobe plan TASK``: items, samples, model calls, tokens, dollars and time of a run, before it runs."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from typing import Any

from stereoprobe.errors import InputError


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``plan`` subcommand."""
    from stereoprobe.cli.common import int_between, out_file

    p = sub.add_parser(
        "plan",
        help="count items, samples, model calls, tokens, USD and time of a task run before running it",
        description="Plan a run of an inspect task of stereoprobe (stereotales, stereotales_judge, dbb, dbb_sg, "
        "globalbias, globalbias_profiles, ...) with the same -T arguments as inspect eval: the benchmark's "
        "units (stories, questions, sentences), inspect samples, model calls per role (epochs included), "
        "estimated input and output tokens (the model's local tokenizer, else characters / 4), estimated USD "
        "from a dated price table, and for local models an estimated time from --calibrate N samples.",
    )
    p.add_argument("task", metavar="TASK", help="task name, e.g. globalbias or stereoprobe/globalbias")
    p.add_argument("-T", dest="task_args", action="append", default=[], metavar="K=V",
                   help="task argument, as inspect eval -T (value parsed as YAML); repeatable")
    p.add_argument("--model", default=None, help="model under evaluation, e.g. openai/gpt-4o or transformers/default")
    p.add_argument("--model-role", dest="roles", action="append", default=[], metavar="R=M[,M...]",
                   help="role binding as inspect eval --model-role (a comma-separated list binds several models)")
    p.add_argument("--epochs", type=int_between(1, 10_000), default=None, help="epochs (default: the task's)")
    p.add_argument("--json", dest="json_out", type=out_file, default=None, metavar="FILE", help="also write the plan as JSON")
    p.add_argument("--prices", default=None, metavar="FILE", help="price table (default: bundled datasets/prices.yaml)")
    p.add_argument("--calibrate", type=int_between(1, 10_000), default=None, metavar="N",
                   help="time N samples on the (local) model to estimate the run's duration")
    p.set_defaults(func=run)


def parse_kv(items: list[str], what: str) -> dict[str, Any]:
    """``k=v`` strings -> dict, values parsed as YAML (as inspect's CLI); ``InputError`` on a bad item."""
    import yaml

    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"{what} {item!r}: expected KEY=VALUE")
        if not value.strip():  # inspect eval reads it as unset: the task's default (e.g. every category)
            raise InputError(f"{what} {item!r}: no value (inspect eval takes an empty value as not given, the "
                             f"task's default); give a value or leave {key.strip()} out")
        if key.strip() in out:  # inspect eval keeps the last silently: refused there too (stereoprobe.preflight)
            raise InputError(f"{what} {key.strip()} is given twice: give it once (a list as {key.strip()}=a,b)")
        try:
            out[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError:
            out[key.strip()] = value
    return out


def parse_roles(items: list[str]) -> dict[str, list[str]]:
    """``role=m1,m2`` (or inspect's YAML form ``role={model: m1, temperature: 0}``) -> {role: [m1, m2]}."""
    import yaml

    roles: dict[str, list[str]] = {}
    for item in items:
        role, sep, models = item.partition("=")
        if models.strip().startswith(("{", "[")):  # inspect's YAML form: {model: ..., temperature: 0} or a list
            try:
                spec = yaml.safe_load(models)
            except yaml.YAMLError:
                raise InputError(f"--model-role {item!r}: not valid YAML") from None
            specs = spec if isinstance(spec, list) else [spec]
            names = [s.get("model") if isinstance(s, dict) else s for s in specs]
            if not names or any(n is None or n == "" for n in names):  # {model: } or {} names no model
                raise InputError(f"--model-role {item!r}: a role entry without a model; expected "
                                 "ROLE={model: PROVIDER/NAME, ...}")
        else:
            names = [m.strip() for m in models.split(",") if m.strip()]
        if not sep or not role.strip() or not names:
            raise InputError(f"--model-role {item!r}: expected ROLE=MODEL[,MODEL...]")
        roles[role.strip()] = [model_name(n, f"--model-role {role.strip()}") for n in names]
    return roles


#: a model name as inspect takes it: ``provider/name`` (the name may hold further slashes), no spaces, no YAML
_MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*/[^\s\[\]{}'\",]+")


def model_name(value: Any, where: str) -> str:
    """``value`` if it is a model name ``provider/name``; else ``InputError`` naming ``where`` (a list, an
    empty YAML role or ``null`` are not model names)."""
    if not isinstance(value, str) or not _MODEL_NAME.fullmatch(value.strip()):
        raise InputError(f"{where}: expected a model name PROVIDER/NAME (e.g. openai/gpt-4o), got {value!r}")
    return value.strip()


def counting_args(task: str, given: dict[str, Any]) -> dict[str, Any]:
    """The probe's ``plan_args`` the user did not give (:class:`stereoprobe.probes.PlanTask`): task arguments
    that give the same counts without a download, e.g. DBB's drawn names instead of the published file."""
    from stereoprobe.plan.core import plan_unit

    return {k: v for k, v in plan_unit(task.split("/")[-1]).plan_args.items() if k not in given}


def task_names() -> list[str]:
    """The registered stereoprobe tasks, without the ``stereoprobe/`` prefix (sorted)."""
    import stereoprobe._registry  # noqa: F401 - registers the tasks
    from stereoprobe.preflight import task_names as names

    return names()


def load_task(name: str, args: dict[str, Any]) -> Any:
    """The task through inspect's registry (``stereoprobe/<name>``), built with ``args``."""
    import stereoprobe._registry  # noqa: F401 - registers the tasks
    from stereoprobe.inspect_internals import registry_lookup, task_create

    # inspect names a package's tasks "stereoprobe/<task>" when it maps the module to the installed
    # distribution; the bare name is the fallback it uses otherwise
    candidates = [name] if "/" in name else [f"stereoprobe/{name}", name]
    full = next((c for c in candidates if registry_lookup("task", c) is not None), None)
    if full is None:
        known = task_names()
        from stereoprobe.hints import did_you_mean

        raise InputError(f"unknown task {name!r}{did_you_mean(name.split('/')[-1], known)}: stereoprobe's tasks are "
                         f"{', '.join(known)}")
    try:
        return task_create(full, **args)
    except InputError as e:  # the one line names the task (its parameter, its data)
        text = " ".join(str(getattr(e, "message", None) or e).split())
        if text.startswith(f"task {name}"):
            raise
        raise InputError(f"task {name}: {text}") from None
    except (ValueError, TypeError, FileNotFoundError) as e:
        raise InputError(f"task {name}: {' '.join(str(e).split())}") from None


def _fmt(x: Any) -> str:
    if x is None:
        return "unknown"
    return f"{x:,.2f}" if isinstance(x, float) else f"{x:,}"


class CalibrationProgress:
    """Progress of ``--calibrate`` on stderr: a rich bar with elapsed time and ETA on a terminal, a plain line
    per step otherwise, nothing with ``--quiet``. Called as ``on_progress(stage, done, total)`` by
    :func:`stereoprobe.plan.calibrate.calibrate`."""

    def __init__(self, model: str) -> None:
        from stereoprobe.console import is_quiet

        self.model = model
        self.quiet = is_quiet()
        self.tty = sys.stderr.isatty() and not os.environ.get("STEREOPROBE_NO_PROGRESS")
        self.bar: Any = None
        self.task: Any = None
        self.started = 0.0

    def __enter__(self) -> CalibrationProgress:
        if not self.quiet and self.tty:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)

            self.bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                console=Console(stderr=True), transient=True)
            self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.quiet:
            return
        what = f"calibrating on {self.model}: " + ("loading the model(s)" if stage == "loading" else "timed samples")
        if self.bar is not None:
            if self.task is None or stage != self.stage:
                if self.task is not None:
                    self.bar.remove_task(self.task)
                self.task = self.bar.add_task(what, total=total)
                self.stage = stage
            self.bar.update(self.task, completed=done)
            return
        now = time.perf_counter()
        if stage == "samples" and done == 0:
            self.started = now
        line = f"{what} {done}/{total}"
        if stage == "samples" and done:
            elapsed = now - self.started
            line += f", {elapsed:,.0f} s elapsed, ETA {elapsed / done * (total - done):,.0f} s"
        _say(line, file=sys.stderr)


def cost_line(plan: Any, prices: Any) -> str:
    """The dollars of a plan in one line: the total (or the partial sum and what has no price) and the price
    with inspect's ``--batch`` for providers that offer a batch API."""
    if plan.usd is not None:
        text = f"USD {_fmt(plan.usd)}"
        batch = plan.usd_batch
    else:
        text = f"USD unknown: {_fmt(plan.usd_priced)} for the priced models (no price for {', '.join(plan.unpriced)})"
        batch = plan.usd_batch_priced
    if plan.batch_models:
        offers = {}
        for m in plan.batch_models:
            offers.setdefault(m.split("/", 1)[0], prices.batch_discount(m))
        saving = ", ".join(f"{provider} {100 * x:.0f}% off" for provider, x in offers.items())
        text += f", {_fmt(batch)} with inspect eval --batch ({saving})"
    return f"{text}; prices as of {prices.as_of}"


def _say(line: str, file: Any = None) -> None:
    """Print one console line of the plan, credentials redacted (a key inside a model name or a role binding)."""
    from stereoprobe.redact import redact_text

    print(redact_text(line), file=file)


def _check_models(args: argparse.Namespace, roles: dict[str, list[str]], prices: Any) -> None:
    """Every model named exists (its provider: a misspelt one is refused with the closest), and
    ``--calibrate`` has a local model: checked before the task is built and any model loads."""
    from stereoprobe.plan.providers import check_priced, check_provider

    if args.model is not None:
        check_provider(model_name(args.model, "--model"), "--model", prices)
        check_priced(args.model, "--model", prices)
    for role, models in roles.items():
        for m in models:
            check_provider(m, f"--model-role {role}", prices)
            check_priced(m, f"--model-role {role}", prices)
    if args.calibrate and (not args.model or not prices.is_local(args.model)):
        raise InputError("--calibrate needs a local --model (transformers/..., hf/..., vllm/...)")


def _print_plan(args: argparse.Namespace, plan: Any, prices: Any) -> None:
    from stereoprobe.plan.core import duration

    _say(f"{args.task}: {_fmt(plan.items)} {plan.unit}, {_fmt(plan.samples)} inspect samples x {plan.epochs} epoch(s)")
    for role, n in plan.model_calls.items():
        t = plan.tokens_by_role[role]
        _say(f"  {role:<10} {_fmt(n):>12} model calls  {_fmt(t['input']):>15} input tokens  "
             f"{_fmt(t['output']):>13} output tokens  ({', '.join(plan.models.get(role) or ['?'])})")
    when = "unknown (use --calibrate N on a local model)" if plan.seconds is None else duration(plan.seconds)
    _say(f"  total: {_fmt(plan.input_tokens)} input, {_fmt(plan.output_tokens)} output tokens; time {when}")
    _say(f"  {cost_line(plan, prices)}")
    for note in plan.notes:  # stale prices: a warning on stderr (below), not a note
        if not note.startswith("prices of "):
            _say(f"  note: {note}")
    for note in plan.notes:
        if note.startswith("prices of "):
            _say(f"stereoprobe plan: warning: {note}", file=sys.stderr)


def _written(plan: Any, prices: Any) -> dict[str, Any]:
    """``plan --json``'s content through the allow-list writer (:mod:`stereoprobe.harmless`): numbers as they
    are; role names as keys known harmless; model names (the command line's, a role binding's) as
    :func:`~stereoprobe.harmless.safe_model` writes them; the notes (our own text) with every model name and
    the price table's path or URL they quote in those forms; the task's name as a plain name."""
    from stereoprobe.harmless import REDACTED, safe_in_text, safe_model, safe_settings, safe_url

    d = plan.as_dict()
    names = {m for ms in d["models"].values() for m in ms}
    names |= {str(u).rsplit(" (", 1)[0] for u in d["unpriced"]} | {str(m) for m in d["batch_models"]}
    source = str(getattr(prices, "source", "") or "")
    outside = {n: safe_model(n) for n in names}
    if source:
        outside[source] = safe_url(source) if "://" in source else (safe_model(os.path.basename(source))
                                                                    if os.path.basename(source) else REDACTED)

    def roles(mapping: dict[str, Any]) -> dict[str, Any]:  # role names: keys written as plain identifiers only
        return dict(zip(safe_settings(dict.fromkeys(mapping)).keys(), mapping.values()))

    d["task"] = safe_model(str(d["task"]))
    d["models"] = roles({r: [safe_model(m) for m in ms] for r, ms in d["models"].items()})
    d["model_calls"], d["tokens_by_role"] = roles(d["model_calls"]), roles(d["tokens_by_role"])
    d["unpriced"] = [safe_in_text(str(u), outside) for u in d["unpriced"]]
    d["batch_models"] = [safe_model(str(m)) for m in d["batch_models"]]
    d["notes"] = [safe_in_text(str(n), outside) for n in d["notes"]]
    return d


def run(args: argparse.Namespace) -> int:
    """Check, build the task, count (and time with --calibrate), print (and write --json).

    Everything that can be refused is refused before a model loads: the names, the task's arguments, its
    epochs and the likelihood capability (by :func:`stereoprobe.plan.plan_task`); ``--calibrate`` then runs
    what the plan priced: its epochs, and every role bound as the plan bound it (issue 35.3)."""
    from stereoprobe.plan.prices import load_prices

    task_args = parse_kv(args.task_args, "-T")
    roles = parse_roles(args.roles)
    prices = load_prices(args.prices)
    _check_models(args, roles, prices)  # before anything imports inspect_ai (seconds)
    from stereoprobe.plan.calibrate import calibrate
    from stereoprobe.plan.core import plan_task, plan_unit, with_seconds
    implied = counting_args(args.task, task_args)
    task = load_task(args.task, {**implied, **task_args})
    if args.model is None:  # after the task's own refusals (a misspelt name, a bad -T value): one model is priced
        raise InputError("--model is needed: the plan counts and prices a run of one model (e.g. --model "
                         "openai/gpt-4o-mini, or --model transformers/default for the bundled local model)")
    plan = plan_task(task, model=args.model, roles=roles, epochs=args.epochs, prices=prices)
    if args.calibrate:
        main_role = plan_unit(plan.task).main_role
        bound = {r: ms for r, ms in plan.models.items() if r != main_role}
        with CalibrationProgress(args.model) as on_progress:
            spc = calibrate(lambda: load_task(args.task, {**implied, **task_args}), args.model, bound,
                            args.calibrate, on_progress=on_progress, epochs=plan.epochs)
        plan = with_seconds(plan, spc, args.model)
    if implied:  # one note for every argument the count assumed
        given = ", ".join(f"-T {k}={v}" for k, v in implied.items())
        plan.notes.append(f"counted with {given}: the same counts without a download (the run uses the "
                          "task's own defaults)")
    _print_plan(args, plan, prices)
    if args.json_out:  # written beside, then renamed over: a failed write leaves an earlier plan intact
        from stereoprobe.outputs import atomic_output_file

        with atomic_output_file(args.json_out, inputs=[args.prices] if args.prices else []) as tmp:
            tmp.write_text(json.dumps(_written(plan, prices), indent=2) + "\n", encoding="utf-8")
    return 0
