"""``stereoprobe plan TASK``: items, samples, model calls, tokens, dollars and time of a run, before it runs."""

from __future__ import annotations

import argparse
import difflib
import json
from pathlib import Path
from typing import Any

from stereoprobe.errors import InputError


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``plan`` subcommand."""
    from stereoprobe.cli.common import positive_int

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
    p.add_argument("--epochs", type=positive_int, default=None, help="epochs (default: the task's)")
    p.add_argument("--json", dest="json_out", default=None, metavar="FILE", help="also write the plan as JSON")
    p.add_argument("--prices", default=None, metavar="FILE", help="price table (default: bundled datasets/prices.yaml)")
    p.add_argument("--calibrate", type=positive_int, default=None, metavar="N",
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
            names = [str(s.get("model", "")) if isinstance(s, dict) else str(s) for s in specs]
            names = [n for n in names if n]
        else:
            names = [m.strip() for m in models.split(",") if m.strip()]
        if not sep or not role.strip() or not names:
            raise InputError(f"--model-role {item!r}: expected ROLE=MODEL[,MODEL...]")
        roles[role.strip()] = names
    return roles


def task_names() -> list[str]:
    """The registered stereoprobe tasks, without the ``stereoprobe/`` prefix (sorted)."""
    import stereoprobe._registry  # noqa: F401 - registers the tasks
    from inspect_ai._util.registry import registry_find, registry_info

    names = {registry_info(t).name for t in registry_find(lambda info: info.type == "task")}
    return sorted(n.split("/", 1)[1] for n in names if n.startswith("stereoprobe/"))


def load_task(name: str, args: dict[str, Any]) -> Any:
    """The task through inspect's registry (``stereoprobe/<name>``), built with ``args``."""
    import stereoprobe._registry  # noqa: F401 - registers the tasks
    from inspect_ai._eval.registry import task_create
    from inspect_ai._util.registry import registry_lookup

    # inspect names a package's tasks "stereoprobe/<task>" when it maps the module to the installed
    # distribution; the bare name is the fallback it uses otherwise
    candidates = [name] if "/" in name else [f"stereoprobe/{name}", name]
    full = next((c for c in candidates if registry_lookup("task", c) is not None), None)
    if full is None:
        known = task_names()
        close = difflib.get_close_matches(name.split("/")[-1], known, n=2, cutoff=0.6)
        hint = f"did you mean {' or '.join(close)}? " if close else ""
        raise InputError(f"unknown task {name!r}: {hint}stereoprobe's tasks are {', '.join(known)}")
    try:
        return task_create(full, **args)
    except InputError:
        raise
    except (ValueError, TypeError, FileNotFoundError) as e:
        raise InputError(f"task {name}: {' '.join(str(e).split())}") from None


def _fmt(x: Any) -> str:
    if x is None:
        return "unknown"
    return f"{x:,.2f}" if isinstance(x, float) else f"{x:,}"


def run(args: argparse.Namespace) -> int:
    """Build the task, count, print (and write --json)."""
    from stereoprobe.plan import load_prices, plan_task
    from stereoprobe.plan.calibrate import calibrate

    task_args = parse_kv(args.task_args, "-T")
    roles = parse_roles(args.roles)
    prices = load_prices(args.prices)
    task = load_task(args.task, task_args)
    spc = None
    if args.calibrate:
        if not args.model or not prices.is_local(args.model):
            raise InputError("--calibrate needs a local --model (transformers/..., hf/..., vllm/...)")
        spc = calibrate(lambda: load_task(args.task, task_args), args.model, roles, args.calibrate)
    plan = plan_task(task, model=args.model, roles=roles, epochs=args.epochs, prices=prices, seconds_per_call=spc)
    d = plan.as_dict()
    print(f"{args.task}: {_fmt(plan.items)} {plan.unit}, {_fmt(plan.samples)} inspect samples x {plan.epochs} epoch(s)")
    for role, n in plan.model_calls.items():
        t = plan.tokens_by_role[role]
        print(f"  {role:<10} {_fmt(n):>12} model calls  {_fmt(t['input']):>15} input tokens  "
              f"{_fmt(t['output']):>13} output tokens  ({', '.join(plan.models.get(role) or ['?'])})")
    print(f"  total: {_fmt(plan.input_tokens)} input, {_fmt(plan.output_tokens)} output tokens; "
          f"USD {_fmt(plan.usd)} (prices as of {prices.as_of}); "
          f"time {'unknown (use --calibrate N on a local model)' if plan.seconds is None else f'{plan.seconds / 3600:,.2f} h'}")
    for note in plan.notes:
        print(f"  note: {note}")
    if args.json_out:
        Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_out).write_text(json.dumps(d, indent=2) + "\n", encoding="utf-8")
    return 0
