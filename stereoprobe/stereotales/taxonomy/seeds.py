"""Read the upstream StereoTales seed YAMLs into a :class:`~stereoprobe.stereotales.taxonomy.model.Taxonomy`.

This reproduces the paper's exact story prompts (``step_00_generate_samples.py``): per language, for each
base attribute (upstream ``BASE_ATTRIBUTES`` order), for each scenario (YAML order), for each value with a
non-null template choice, ``prompts.<lang>.yaml["scenario_based"].format(context=..., character=...)``;
2,844 prompts per language. Localised values and phrases are aligned by index with the English file;
English value keys are normalised to the extraction vocabulary (``METADATA_VALUE_NORMALIZATION``), the
raw seed value is kept as ``TargetValue.source_key``. Values with a null template choice ("other") are
extraction outcomes only. Upstream's ``du`` is our ``nl``.

Sources: ``load_upstream_seeds()`` fetches the pinned files (cache, else download; SHA-256 verified) via
:func:`stereoprobe.upstream.fetch`; ``local=`` takes the upstream repository, a mirror holding
``stereotales-pipeline/`` (both verified), or a bare seed folder (``attributes/ scenarios/
prompts_template/``, verified too; ``verify=False`` reads it as is: a user's edited seeds, or upstream's test
fixture). The taxonomy's own extraction and
refusal prompts are stereoprobe's (the option ``role_prompts="bundled"``); the task sends flare's by default,
read by :mod:`stereoprobe.stereotales.extraction.upstream_prompts`.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from stereoprobe.stereotales.contract import UNKNOWN, normalize_language
from stereoprobe.stereotales.taxonomy.files import TaxonomyError, bundled_dir, read_yaml
from stereoprobe.stereotales.taxonomy.model import Attribute, Scenario, TargetValue, Taxonomy
from stereoprobe.stereotales.taxonomy.prompts import ExtractionPromptSpec, RefusalPromptSpec


@cache
def upstream_config() -> dict[str, Any]:
    """``datasets/stereotales/upstream.yaml``: file layout, BASE_ATTRIBUTES, schema order, normalisation."""
    return read_yaml(bundled_dir() / "upstream.yaml")


def _fetcher(local: Path | None, verify: bool = True) -> tuple[Any, str]:
    """A function relpath -> Path (or None if absent) for the given source, and a description of it.

    Every file is checked against its pinned SHA-256 (``stereoprobe/upstream_sources.yaml``), also in a
    bare seed folder; ``verify=False`` reads a bare folder as is (a user's edited seeds, or upstream's test
    fixture), and the description then says the seeds are unverified.
    """
    cfg = upstream_config()
    key, seeds_dir = cfg["source_key"], cfg["seeds_dir"]
    from stereoprobe import upstream

    src = upstream.sources()[key]
    if local is not None and (local / "attributes").is_dir():
        def bare(rel: str) -> Path | None:
            path = local / rel
            if not path.is_file():
                return None
            if verify:
                expected = src.files.get(f"{seeds_dir}/{rel}")
                got = upstream.sha256_file(path)
                if expected is None or got != expected:
                    raise TaxonomyError(
                        f"{path}: checksum mismatch with the pinned upstream seeds {src.repository}@{src.commit[:10]} "
                        f"({seeds_dir}/{rel}: expected sha256 {expected or 'none (not a pinned file)'}, got {got}); "
                        "to use edited seeds on purpose, load them unverified (-T verify_seeds=false)"
                    )
            return path

        label = f"{src.repository}@{src.commit[:10]} (local copy {local}, verified)" if verify else \
            f"local seed folder {local} (unverified: not checked against the pinned upstream seeds)"
        return bare, label

    def get(rel: str) -> Path | None:
        try:
            return upstream.fetch(key, f"{seeds_dir}/{rel}", local=local)
        except upstream.UpstreamDataError as e:
            raise TaxonomyError(f"upstream seeds: {e}") from e

    where = f"{src.repository}@{src.commit[:10]}" + (f" (local copy {local})" if local is not None else "")
    return get, where


Pairs = list[tuple[str, "str | None"]]  # (value, template choice) per value of one attribute


def _pairs(d: Any, attr: str, file: str) -> Pairs:
    """The (value, template choice) pairs of ``attr`` in one attributes file (aligned by index)."""
    entry = d.get(attr) if isinstance(d, dict) else None
    if not isinstance(entry, dict):
        raise TaxonomyError(f"{file}: {attr}: missing (expected values + template_choices)")
    vals, choices = entry.get("values"), entry.get("template_choices")
    if not isinstance(vals, list) or not isinstance(choices, list) or len(vals) != len(choices):
        raise TaxonomyError(f"{file}: {attr}: values and template_choices must be lists of the same length")
    return [(str(v), None if c is None else str(c)) for v, c in zip(vals, choices)]


class _SeedReader:
    """Reads one seed source (see :func:`_fetcher`): its languages, and the files of each language."""

    def __init__(self, local: Path | None, verify: bool) -> None:
        self.cfg = upstream_config()
        self.local = local
        self.get, self.where = _fetcher(local, verify)

    def languages(self, wanted: list[str] | None) -> list[str]:
        """English first, then the others: the requested ones, or all ten pinned (every
        ``attributes.<lang>.yaml`` of a bare seed folder)."""
        cfg, local = self.cfg, self.local
        if wanted is None:
            if local is not None and (local / "attributes").is_dir():
                found = {p.name.split(".")[1] for p in (local / "attributes").glob("attributes.*.yaml")}
                wanted = [c for c in cfg["languages"] if c in found] + sorted(found - set(cfg["languages"]))
            else:
                wanted = list(cfg["languages"])
        if "en" not in wanted:
            raise TaxonomyError(f"{self.where}: the English seeds (attributes.en.yaml) are required: they define the keys")
        return ["en"] + [c for c in wanted if c != "en"]

    def load(self, kind: str, lang: str) -> tuple[Any, str]:
        rel = self.cfg["files"][kind].format(lang=lang)
        p = self.get(rel)
        if p is None:
            raise TaxonomyError(f"{self.where}: missing seed file {rel}")
        return read_yaml(p), str(p)

    def extra_templates(self) -> dict[str, str]:
        """The English templates without scenario (upstream skips empty ones); none when the file is absent."""
        p = self.get(self.cfg["files"]["extra"])
        if p is None:
            return {}
        raw = read_yaml(p)
        if raw is not None and not isinstance(raw, dict):
            raise TaxonomyError(f"{p}: expected a mapping template name -> template")
        return {str(k): v for k, v in (raw or {}).items() if isinstance(v, str) and v.strip()}


def _english_keys(reader: _SeedReader) -> tuple[list[str], dict[str, Pairs], dict[str, list], str, str]:
    """English defines the keys: present base attributes, their pairs, the scenario groups, and the files."""
    base_attrs: list[str] = list(reader.cfg["base_attributes"])
    en_attrs, en_file = reader.load("attributes", "en")
    if not isinstance(en_attrs, dict):
        raise TaxonomyError(f"{en_file}: expected a mapping attribute -> {{values, template_choices}}")
    present = [a for a in base_attrs if a in en_attrs]
    if not present:
        raise TaxonomyError(f"{en_file}: none of the base attributes {base_attrs} is defined")
    en_scen, en_scen_file = reader.load("scenarios", "en")
    if not isinstance(en_scen, dict) or not en_scen:
        raise TaxonomyError(f"{en_scen_file}: expected a mapping group -> list of scenarios")
    return present, {a: _pairs(en_attrs, a, en_file) for a in present}, en_scen, en_file, en_scen_file


def _read_language(
    reader: _SeedReader, lang: str, present: list[str], en_pairs: dict[str, Pairs], en_scen: dict[str, list],
    en_file: str, en_scen_file: str,
) -> tuple[dict[str, Pairs], dict[str, list[str]], str]:
    """One language's pairs and scenarios, checked against the English ones, and its story template."""
    data, file = reader.load("attributes", lang)
    pairs: dict[str, Pairs] = {}
    for a in present:
        p = _pairs(data, a, file)
        if len(p) != len(en_pairs[a]) or [c is None for _, c in p] != [c is None for _, c in en_pairs[a]]:
            raise TaxonomyError(f"{file}: {a}: values are not aligned with the English seeds ({en_file})")
        pairs[a] = p
    scen, sfile = reader.load("scenarios", lang)
    if not isinstance(scen, dict) or list(scen) != list(en_scen) or any(
        not isinstance(scen[g], list) or len(scen[g]) != len(en_scen[g]) for g in en_scen
    ):
        raise TaxonomyError(f"{sfile}: scenario groups/lengths differ from the English seeds ({en_scen_file})")
    prompts, pfile = reader.load("prompts", lang)
    key = reader.cfg["scenario_template_key"]
    if not isinstance(prompts, dict) or not isinstance(prompts.get(key), str):
        raise TaxonomyError(f"{pfile}: missing template {key!r}")
    return pairs, {g: [str(x) for x in v] for g, v in scen.items()}, prompts[key]


def _attributes(present: list[str], en_pairs: dict[str, Pairs], loc_pairs: dict[str, dict[str, Pairs]],
                languages: list[str], norm: dict[str, str]) -> list[Attribute]:
    """Target values (non-null template choice) with every language's label and phrase; the values with a
    null choice ("other") are extraction outcomes only; keys normalised to the extraction vocabulary."""
    attributes = []
    for a in present:
        tvs, non_targets = [], []
        for i, (value, choice) in enumerate(en_pairs[a]):
            if choice is None:
                non_targets.append(norm.get(value, value))
                continue
            phrase = {normalize_language(lg): loc_pairs[lg][a][i][1] for lg in languages}
            label = {normalize_language(lg): loc_pairs[lg][a][i][0] for lg in languages}
            key = norm.get(value, value)
            tvs.append(TargetValue(key=key, index=len(tvs), phrase=phrase, label=label,  # type: ignore[arg-type]
                                   attribute=a, source_key=value if key != value else None))
        extraction_values = [v.key for v in tvs] + [v for v in non_targets if v != UNKNOWN] + [UNKNOWN]
        attributes.append(Attribute(key=a, target_values=tvs, extraction_values=extraction_values))
    return attributes


def load_upstream_seeds(
    local: str | Path | None = None, languages: list[str] | None = None, verify: bool = True
) -> Taxonomy:
    """The upstream seeds as a Taxonomy (see module docstring). ``languages``: upstream codes to read
    (default: all ten for the pinned seeds, or every ``attributes.<lang>.yaml`` of a bare seed folder).
    ``verify=False`` reads a bare seed folder without checking the pinned checksums."""
    reader = _SeedReader(Path(local).expanduser() if local is not None else None, verify)
    cfg, where = reader.cfg, reader.where
    languages = reader.languages(languages)
    present, en_pairs, en_scen, en_file, en_scen_file = _english_keys(reader)
    loc_pairs: dict[str, dict[str, Pairs]] = {}
    loc_scen: dict[str, dict[str, list[str]]] = {}
    templates: dict[str, str] = {}
    for lang in languages:
        loc_pairs[lang], loc_scen[lang], templates[normalize_language(lang)] = _read_language(
            reader, lang, present, en_pairs, en_scen, en_file, en_scen_file
        )
    attributes = _attributes(present, en_pairs, loc_pairs, languages, dict(cfg["value_normalization"]))
    scenarios = [
        Scenario(key=k, group=g, index=i, text={normalize_language(lg): loc_scen[lg][g][i] for lg in languages})
        for g, keys in en_scen.items()
        for i, k in enumerate(str(x) for x in keys)
    ]
    order = [a for a in cfg["extraction_order"] if a in present] + [
        a for a in present if a not in cfg["extraction_order"]
    ]
    bundled = bundled_dir() / "prompts"
    taxonomy_yaml = read_yaml(bundled_dir() / "taxonomy.yaml")
    return Taxonomy(
        languages=[normalize_language(lg) for lg in languages],
        attributes=attributes,
        scenarios=scenarios,
        story_templates=templates,
        extra_templates=reader.extra_templates(),
        extraction_order=order,
        extraction=ExtractionPromptSpec.from_file(bundled / "extraction.yaml"),
        refusal=RefusalPromptSpec.from_file(bundled / "refusal.yaml"),
        base_language="en",
        language_names=taxonomy_yaml.get("language_names", {}),
        name="stereotales-upstream-seeds",
        source=where if where.startswith("local seed folder") else f"upstream seeds {where}",
    )
