"""The probe registry: one :class:`ProbeDescriptor` per probe, read by every part that spans the probes.

A probe package (``stereoprobe/<probe>/``, e.g. :mod:`stereoprobe.dbb`) describes itself in its module
``probe.py``: the tables its post-processing command writes and the leaderboard reads (with their columns and
value ranges), its headline figures and their direction, the settings the leaderboard re-applies (each a
``stereoprobe leaderboard`` option), the plan's facts per inspect task, its command-line commands and its
listing. The leaderboard (:mod:`stereoprobe.leaderboard.sources`, :mod:`~stereoprobe.leaderboard.headline`,
:mod:`~stereoprobe.leaderboard.pairwise`), the planner (:mod:`stereoprobe.plan.core`), the command line
(:func:`stereoprobe.cli.command_modules`, ``stereoprobe leaderboard``'s options) and the landing page
(:mod:`stereoprobe.report.index`) loop over :func:`registered` instead of naming the probes, and
``stereoprobe._registry`` imports every module of the tasks, solvers and scorers, so a new probe is new files
only (docs/adding-a-probe.md)::

    from stereoprobe.probes import Board, Metric, PlanTask, ProbeDescriptor, Setting, register

    DESCRIPTOR = register(ProbeDescriptor(
        name="toy", title="Toy probe", tables={"summary": ("model", "item", "score")},
        domains={"summary": {"score": (0.0, 10.0)}},
        boards=(Board("toy", "Toy: a made-up score", (Metric("mean_score", "lower"),)),),
        settings={"bonus": Setting(0.0, "Toy: added to every mean score", low=0, high=1)},
        metrics="stereoprobe.toy.leaderboard:toy_metrics", tasks={"toy_task": PlanTask("widgets")},
        commands=("stereoprobe.cli.toy",)))

The descriptors of the shipped probes are found by file name (every ``probe.py`` one or two folders below
``stereoprobe/``) and imported on the first call of :func:`registered`; a descriptor module imports only
contract modules, so listing the probes stays cheap (``stereoprobe --help``). Callables are given as
``"module:function"`` strings and imported when called (:meth:`ProbeDescriptor.call`).
"""

from __future__ import annotations

import importlib
import inspect
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "Board", "HeadlineFunction", "LeaderboardOptions", "LmEvalFunction", "Metric", "PlanTask", "ProbeDescriptor",
    "RegistryView", "ReportFolder", "Setting", "board", "columns", "get", "plan_task", "register",
    "register_report_folder", "registered", "report_folders", "unregister",
]

Better = Literal["lower", "higher", ""]


@dataclass(frozen=True)
class Metric:
    """A headline figure of a leaderboard board: its metric name, which direction is better (``""``: none,
    e.g. a p-value or a reach that is neither good nor bad), and for the leaderboard's comparison table a
    short ``label`` and its ``meaning`` in plain words (what a higher value says about the model, never a
    verdict)."""

    name: str
    better: Better = "lower"
    label: str = ""
    meaning: str = ""

    @property
    def title(self) -> str:
        """The column title: ``label``, else the metric name."""
        return self.label or self.name


@dataclass(frozen=True)
class Board:
    """One block of the leaderboard: the value of its ``probe`` column (a probe may fill several, e.g. DBB's
    ``dbb`` and ``dbb_sg``, whose numbers are not comparable), its title and its headline figures in display
    order (the forest plots and the Hub export use these)."""

    name: str
    title: str
    headline: tuple[Metric, ...] = ()

    @property
    def metric_names(self) -> list[str]:
        return [m.name for m in self.headline]


@dataclass(frozen=True)
class Setting:
    """A setting of a probe's statistics that the leaderboard re-applies (e.g. DBB's S ``threshold``): its
    ``default``, the ``help`` line of its ``stereoprobe leaderboard --<name>`` option, and its range ``low`` to
    ``high`` (ends included, or excluded when ``open_range``; None: unbounded). The leaderboard takes the value
    from the command line, else from the probe folders' ``run_info.json``, else the default."""

    default: float
    help: str = ""
    low: float | None = None
    high: float | None = None
    open_range: bool = False


@dataclass(frozen=True)
class LeaderboardOptions:
    """What every probe's leaderboard functions get: bootstrap draws, seed, interval level and the probe
    settings resolved from the command line or the folders' ``run_info.json`` (:attr:`ProbeDescriptor.settings`;
    e.g. ``threshold`` of DBB, ``alpha`` of GlobalBias)."""

    n_boot: int = 2000
    seed: int = 0
    level: float = 0.95
    settings: Mapping[str, float] = field(default_factory=dict)

    def setting(self, key: str, default: float) -> float:
        return float(self.settings.get(key, default))


@dataclass(frozen=True)
class PlanTask:
    """What the run planner (:mod:`stereoprobe.plan.core`) needs to know of one inspect task of a probe.

    ``unit``: the benchmark's own unit, the plan's ``items`` (stories, questions, sentences, ...).
    ``counts``: what one item is: ``"samples"`` (one per sample, times the epochs when ``per_epoch``), ``"texts"``
    (each text a likelihood sample scores) or ``"questions"`` (DBB questions, several in a grouped sample).
    ``main_role``: the role the model under evaluation plays; ``reader_roles``: role models that read each
    output of the main model (StereoTales' refusal detector and extractors).

    The probe's own plan facts (``datasets/plan.yaml`` keeps only what holds for every task): ``texts`` and
    ``items``, ``"module:function"`` of ``sample -> the texts a likelihood sample scores`` (default: the ``texts``
    items of :mod:`stereoprobe.likelihood`) and ``sample -> the benchmark items it holds`` (default: one);
    ``plan_args``: ``-T`` arguments the planner uses unless given, which give the same counts without a
    download (e.g. DBB's drawn names instead of the published names file); ``default_roles``: role -> models
    bound when ``--model-role`` does not name it (the paper's setup); ``output_tokens``: expected output tokens
    per call of a role; ``output_tokens_per_name``: per name of a request instead (requests that answer for
    several names); ``role_prompt_tokens``: tokens a role call reads besides the text it judges."""

    unit: str
    counts: Literal["samples", "texts", "questions"] = "samples"
    per_epoch: bool = False
    main_role: str = "generator"
    reader_roles: tuple[str, ...] = ()
    texts: str | None = None
    items: str | None = None
    plan_args: Mapping[str, Any] = field(default_factory=dict)
    default_roles: Mapping[str, int] = field(default_factory=dict)
    output_tokens: Mapping[str, int] = field(default_factory=dict)
    output_tokens_per_name: int | None = None
    role_prompt_tokens: Mapping[str, int] = field(default_factory=dict)

    def call(self, what: Literal["texts", "items"], sample: Any) -> Any:
        """The ``texts`` or ``items`` function of this task applied to ``sample`` (None when not given)."""
        fn = getattr(self, what)
        return None if fn is None else _resolve(fn)(sample)


#: ``(Sources, LeaderboardOptions) -> list of metric rows`` (or of pairwise rows), or its ``"module:function"``
LeaderboardFunction = Callable[..., list[dict[str, Any]]] | str
#: ``(lm-eval samples files, **options) -> table name -> DataFrame``, or its ``"module:function"``
LmEvalFunction = Callable[..., Mapping[str, Any]] | str


@dataclass(frozen=True)
class ProbeDescriptor:
    """What the rest of stereoprobe needs to know about one probe.

    ``name``: the probe's name in the leaderboard's sources and in ``run_info.json`` (``run_info_name`` where
    the writer uses another). ``tables``: output table -> the columns the leaderboard requires (every table the
    leaderboard reads; names from the probe's contract module). ``markers``: the tables whose presence marks an
    output folder of the probe (default: the first table). ``boards``: the leaderboard blocks the probe fills.
    ``settings``: ``run_info.json`` settings the leaderboard re-uses (:class:`Setting`: default, help, range; a
    bare number is the default), each an option ``--<name>`` of ``stereoprobe leaderboard``. ``domains``: table ->
    column -> the closed range of its values, checked when the leaderboard reads the table (a value outside is an
    error naming the file, never a figure). ``metrics`` /
    ``pairwise``: ``(Sources, LeaderboardOptions) -> rows``. ``lm_eval``: ``(files, **options) -> tables``, the
    leaderboard's reader of lm-eval ``--log_samples`` files (``samples_<task>_<time>.jsonl``) of the probe's
    shipped lm-eval tasks ``lm_eval_tasks``, returning tables of ``tables`` (:meth:`call_lm_eval`). ``tasks``: inspect task -> what the planner needs
    (:class:`PlanTask`: its unit, what an item is, the roles). ``commands``: modules with ``register(subparsers)`` (the command line, in display
    order). ``listing``: the
    ``tasks/<listing>.eval.yaml`` of the probe's tasks. ``order``: display order among the probes."""

    name: str
    title: str
    tables: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    markers: tuple[str, ...] = ()
    boards: tuple[Board, ...] = ()
    settings: Mapping[str, Setting | float] = field(default_factory=dict)
    domains: Mapping[str, Mapping[str, tuple[float, float]]] = field(default_factory=dict)
    metrics: LeaderboardFunction | None = None
    pairwise: LeaderboardFunction | None = None
    lm_eval: LmEvalFunction | None = None
    lm_eval_tasks: tuple[str, ...] = ()
    tasks: Mapping[str, PlanTask] = field(default_factory=dict)
    commands: tuple[str, ...] = ()
    listing: str | None = None
    run_info_name: str | None = None
    order: int = 100

    def __post_init__(self) -> None:
        if not self.name or not self.name.replace("_", "").isalnum():
            raise ValueError(f"probe name must be letters, digits and underscores, got {self.name!r}")
        unknown = [m for m in self.markers if m not in self.tables]
        if unknown:
            raise ValueError(f"probe {self.name}: markers {unknown} are not among its tables")
        unread = [f"{t}.{c}" for t, cols in self.domains.items() for c in cols if c not in self.tables.get(t, ())]
        if unread:
            raise ValueError(f"probe {self.name}: domains of {unread}, columns the leaderboard does not read "
                             "(not in its tables)")
        if (self.lm_eval is None) != (not self.lm_eval_tasks):
            raise ValueError(f"probe {self.name}: give lm_eval and lm_eval_tasks together")
        object.__setattr__(self, "settings", {k: v if isinstance(v, Setting) else Setting(float(v))
                                              for k, v in self.settings.items()})

    @property
    def setting_defaults(self) -> dict[str, float]:
        """Each of :attr:`settings` with its default."""
        return {k: s.default for k, s in self.settings.items()}  # type: ignore[union-attr]

    @property
    def marker_tables(self) -> tuple[str, ...]:
        """The tables that mark an output folder of this probe (all must be present)."""
        return self.markers or tuple(self.tables)[:1]

    @property
    def written_as(self) -> str:
        """The ``probe`` value the post-processing command writes into ``run_info.json``."""
        return self.run_info_name or self.name

    def call(self, what: Literal["metrics", "pairwise"], sources: Any, options: LeaderboardOptions) -> list[dict[str, Any]]:
        """Call the descriptor's ``metrics`` or ``pairwise`` function (imported if given as a string) as
        ``fn(sources, **kwargs)``, with the keyword arguments it names among ``n_boot``, ``seed``, ``level`` and
        this probe's :attr:`settings` (all of them if it takes ``**kwargs``); no function: no rows."""
        fn = getattr(self, what)
        if fn is None:
            return []
        offered: dict[str, Any] = {"n_boot": options.n_boot, "seed": options.seed, "level": options.level,
                                   **{k: options.setting(k, v) for k, v in self.setting_defaults.items()}}
        return list(_call(fn, sources, offered))

    def call_lm_eval(self, files: list[Path], options: Mapping[str, Any]) -> dict[str, Any]:
        """Call the descriptor's ``lm_eval`` reader on lm-eval samples ``files`` of its :attr:`lm_eval_tasks`, with
        the keyword arguments it names among ``options`` (e.g. ``n_boot``, ``seed``, this probe's settings, a
        ``tokenizer``; all of them if it takes ``**kwargs``; the others are left out); no reader: no tables."""
        if self.lm_eval is None:
            return {}
        return dict(_call(self.lm_eval, files, dict(options)))


def _call(fn: LeaderboardFunction | LmEvalFunction, first: Any, offered: dict[str, Any]) -> Any:
    """``fn(first, **offered)``, ``offered`` cut to the keyword arguments ``fn`` names unless it takes ``**kwargs``."""
    fn = _resolve(fn)
    params = inspect.signature(fn).parameters
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        offered = {k: v for k, v in offered.items() if k in params}
    return fn(first, **offered)


def _resolve(fn: Callable[..., Any] | str) -> Callable[..., Any]:
    if callable(fn):
        return fn
    module, _, attr = fn.partition(":")
    if not attr:
        raise ValueError(f"{fn!r}: give a callable as 'module:function'")
    return getattr(importlib.import_module(module), attr)


# ------------------------------------------------------------------------------------------------ registry
_REGISTRY: dict[str, ProbeDescriptor] = {}
_LOCK = threading.RLock()
_DISCOVERED = False


def register(descriptor: ProbeDescriptor) -> ProbeDescriptor:
    """Add (or replace, by name) a probe; returns it, so a descriptor module can write
    ``DESCRIPTOR = register(ProbeDescriptor(...))``."""
    with _LOCK:
        _REGISTRY[descriptor.name] = descriptor
    return descriptor


def unregister(name: str) -> None:
    """Remove a probe (tests registering a toy probe clean up with this)."""
    with _LOCK:
        _REGISTRY.pop(name, None)


def descriptor_modules(file_name: str = "probe.py") -> list[str]:
    """Module names of the shipped descriptors: every ``probe.py`` (or ``file_name``) one or two folders below
    ``stereoprobe/`` (each folder of the package's ``__path__``)."""
    import stereoprobe

    names: list[str] = []
    for folder in map(Path, stereoprobe.__path__):
        found = sorted(folder.glob(f"*/{file_name}")) + sorted(folder.glob(f"*/*/{file_name}"))
        names += [".".join(("stereoprobe", *p.relative_to(folder).with_suffix("").parts)) for p in found]
    return list(dict.fromkeys(names))


def _discover() -> None:
    global _DISCOVERED
    with _LOCK:
        if _DISCOVERED:
            return
        for module in descriptor_modules():
            importlib.import_module(module)
        _DISCOVERED = True


def registered() -> list[ProbeDescriptor]:
    """Every registered probe, in display order (``order``, then name)."""
    _discover()
    with _LOCK:
        return sorted(_REGISTRY.values(), key=lambda d: (d.order, d.name))


def get(name: str) -> ProbeDescriptor:
    """The probe ``name`` (its ``name`` or the name it writes into ``run_info.json``); KeyError if unknown."""
    for d in registered():
        if name in (d.name, d.written_as):
            return d
    raise KeyError(name)


def plan_task(name: str) -> PlanTask | None:
    """The planner's facts of inspect task ``name`` (None: a task no probe describes)."""
    for d in registered():
        if name in d.tasks:
            return d.tasks[name]
    return None


def board(name: str) -> Board:
    """The leaderboard board ``name`` (e.g. ``dbb_sg``) of any probe; KeyError if unknown."""
    for d in registered():
        for b in d.boards:
            if b.name == name:
                return b
    raise KeyError(name)


def columns(available: Iterable[str], *names: str) -> tuple[str, ...]:
    """``names``, each checked to be one of ``available`` (a contract module's column list), so a descriptor
    states which columns it needs without spelling a column the writers do not write."""
    have = set(available)
    missing = [n for n in names if n not in have]
    if missing:
        raise ValueError(f"columns {missing} are not in the contract's columns {sorted(have)}")
    return tuple(names)


# ------------------------------------------------------------------------------------------- report folders
#: ``folder -> one line of its headline figures`` (None: not a folder of this kind), or its ``"module:function"``
HeadlineFunction = Callable[[Path], "str | None"] | str


@dataclass(frozen=True)
class ReportFolder:
    """One kind of report folder and how the index page reads its headline figures, so that the index
    (:mod:`stereoprobe.report.headlines`) names no package above it. The package that writes such folders
    registers the kind in its module ``report_folder.py`` (found by file name, as the descriptors are): the
    reference comparison (:mod:`stereoprobe.reference.report_folder`), the leaderboard and the probes' output
    folders, whose figures are the boards' headline metrics (:mod:`stereoprobe.leaderboard.report_folder`).
    ``headline``: tried in ``order`` (then name); the first line found is the folder's."""

    name: str
    headline: HeadlineFunction
    order: int = 100

    def read_headline(self, folder: Path) -> str | None:
        """The headline line of ``folder``, or None when it is not a folder of this kind."""
        return _resolve(self.headline)(folder)


_REPORT_FOLDERS: dict[str, ReportFolder] = {}
_FOLDERS_DISCOVERED = False


def register_report_folder(kind: ReportFolder) -> ReportFolder:
    """Add (or replace, by name) a kind of report folder; returns it."""
    with _LOCK:
        _REPORT_FOLDERS[kind.name] = kind
    return kind


def report_folders() -> list[ReportFolder]:
    """Every kind of report folder, in the order the index tries them (the shipped ``report_folder.py`` modules
    imported on the first call)."""
    global _FOLDERS_DISCOVERED
    with _LOCK:
        if not _FOLDERS_DISCOVERED:
            for module in descriptor_modules("report_folder.py"):
                importlib.import_module(module)
            _FOLDERS_DISCOVERED = True
        return sorted(_REPORT_FOLDERS.values(), key=lambda k: (k.order, k.name))


class RegistryView(Mapping[str, Any]):
    """A read-only mapping computed from the registry on every access, so module-level tables such as
    ``leaderboard.sources.TABLES`` follow probes registered at run time."""

    def __init__(self, build: Callable[[], Mapping[str, Any]]) -> None:
        self._build = build

    def __getitem__(self, key: str) -> Any:
        return self._build()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._build())

    def __len__(self) -> int:
        return len(self._build())

    def __repr__(self) -> str:
        return f"RegistryView({dict(self._build())!r})"
