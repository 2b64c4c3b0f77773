"""Loading a taxonomy: stereoprobe's YAML format, the upstream seeds, or a user's file or folder."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stereoprobe.stereotales.contract import LANGUAGE_ALIASES, UNKNOWN, normalize_language
from stereoprobe.stereotales.taxonomy.files import TaxonomyError, bundled_dir, check_format_template, read_yaml
from stereoprobe.stereotales.taxonomy.model import LANGUAGE_CODE, Attribute, Scenario, TargetValue, Taxonomy
from stereoprobe.stereotales.taxonomy.prompts import ExtractionPromptSpec, RefusalPromptSpec
from stereoprobe.stereotales.taxonomy.seeds import load_upstream_seeds


def _req(mapping: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in mapping or mapping[key] is None:
        raise TaxonomyError(f"{where}: missing field {key!r}")
    return mapping[key]


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise TaxonomyError(f"{where}: must be a non-empty string")
    return value


def _mapping(value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        raise TaxonomyError(f"{where}: expected a mapping, got {type(value).__name__}")
    return value


def _list(value: Any, where: str) -> list:
    if not isinstance(value, list):
        raise TaxonomyError(f"{where}: expected a list, got {type(value).__name__}")
    return value


def _load_locale(raw: Any, file: str, lang: str, attrs: list[dict], scenario_groups: dict[str, list[str]]) -> dict:
    """Check a locale against the base structure: every key translated, no unknown key."""
    raw = _mapping(raw, file)
    if "language" in raw and normalize_language(str(raw["language"])) != lang:
        raise TaxonomyError(f"{file}: language: says {raw['language']!r} but is used for {lang!r}")
    allowed = {"language", "name", "story_template", "attributes", "scenarios"}
    extra = sorted(set(raw) - allowed)
    if extra:
        raise TaxonomyError(f"{file}: unknown field(s) {extra}; allowed: {sorted(allowed)}")
    out: dict[str, Any] = {
        "story_template": check_format_template(
            _req(raw, "story_template", file), {"context", "character"}, f"{file}: story_template"
        )
    }
    loc_attrs = _mapping(_req(raw, "attributes", file), f"{file}: attributes")
    unknown = sorted(set(loc_attrs) - {a["key"] for a in attrs})
    if unknown:
        raise TaxonomyError(f"{file}: attributes: unknown attribute(s) {unknown}")
    out["values"] = {}
    for a in attrs:
        akey = a["key"]
        where = f"{file}: attributes.{akey}"
        if akey not in loc_attrs:
            raise TaxonomyError(f"{where}: missing translation of attribute {akey!r}")
        vals = _mapping(loc_attrs[akey], where)
        keys = [v["key"] for v in a["values"]]
        unknown = sorted(set(vals) - set(keys))
        if unknown:
            raise TaxonomyError(f"{where}: unknown value key(s) {unknown}; keys must be the English value keys")
        for vkey in keys:
            if vkey not in vals:
                raise TaxonomyError(f"{where}: missing translation of value {vkey!r}")
            entry = _mapping(vals[vkey], f"{where}.{vkey!r}")
            out["values"][(akey, vkey)] = (
                _text(_req(entry, "label", f"{where}.{vkey!r}"), f"{where}.{vkey!r}.label"),
                _text(_req(entry, "phrase", f"{where}.{vkey!r}"), f"{where}.{vkey!r}.phrase"),
            )
    loc_sc = _mapping(_req(raw, "scenarios", file), f"{file}: scenarios")
    unknown = sorted(set(loc_sc) - set(scenario_groups))
    if unknown:
        raise TaxonomyError(f"{file}: scenarios: unknown group(s) {unknown}")
    out["scenarios"] = {}
    for group, keys in scenario_groups.items():
        where = f"{file}: scenarios.{group}"
        if group not in loc_sc:
            raise TaxonomyError(f"{where}: missing translation of scenario group {group!r}")
        texts = _mapping(loc_sc[group], where)
        unknown = sorted(set(texts) - set(keys))
        if unknown:
            raise TaxonomyError(f"{where}: unknown scenario key(s) {unknown}; keys must be the English texts")
        for k in keys:
            if k not in texts:
                raise TaxonomyError(f"{where}: missing translation of scenario {k!r}")
            out["scenarios"][(group, k)] = _text(texts[k], f"{where}.{k!r}")
    return out


def _load_prompts(raw: dict, base_dir: Path, file: str) -> tuple[ExtractionPromptSpec, RefusalPromptSpec]:
    prompts = _mapping(raw.get("prompts") or {}, f"{file}: prompts")
    unknown = sorted(set(prompts) - {"extraction", "refusal"})
    if unknown:
        raise TaxonomyError(f"{file}: prompts: unknown field(s) {unknown}; allowed: extraction, refusal")

    def resolve(name: str) -> Path:
        if name in prompts:
            p = Path(_text(prompts[name], f"{file}: prompts.{name}")).expanduser()
            p = p if p.is_absolute() else base_dir / p
            if not p.is_file():
                raise TaxonomyError(f"{file}: prompts.{name}: file not found: {p}")
            return p
        return bundled_dir() / "prompts" / f"{name}.yaml"

    return ExtractionPromptSpec.from_file(resolve("extraction")), RefusalPromptSpec.from_file(resolve("refusal"))


_TOP_FIELDS = {
    "format_version", "name", "description", "languages", "base_language", "language_names", "prompts",
    "story_template", "extra_templates", "attributes", "extraction_order", "scenarios", "locales", "locales_dir",
}


def _read_languages(raw: Mapping[str, Any], file: str) -> tuple[list[str], str]:
    """The ``languages`` list (canonical codes, no repeat) and the ``base_language`` among them."""
    languages: list[str] = []
    for x in _list(_req(raw, "languages", file), f"{file}: languages"):
        if not isinstance(x, str) or not LANGUAGE_CODE.match(normalize_language(x)):
            raise TaxonomyError(f"{file}: languages: {x!r} is not a language code (e.g. en, fr, pt-BR)")
        lang = normalize_language(x)
        if lang in languages:
            raise TaxonomyError(f"{file}: languages: {x!r} listed twice (du is an alias of nl)")
        languages.append(lang)
    base = normalize_language(str(raw.get("base_language", "en")))
    if base not in languages:
        raise TaxonomyError(f"{file}: base_language: {base!r} is not in languages {languages}")
    return languages, base


def _read_values(a: Mapping[str, Any], where: str) -> list[dict[str, str]]:
    """The target values of one attribute entry (base-language key, phrase, label)."""
    values: list[dict[str, str]] = []
    for j, v in enumerate(_list(_req(a, "values", where), f"{where}.values")):
        vw = f"{where}.values[{j}]"
        v = _mapping(v, vw)
        extra = sorted(set(v) - {"key", "phrase", "label"})
        if extra:
            raise TaxonomyError(f"{vw}: unknown field(s) {extra}")
        vkey = _text(_req(v, "key", vw), f"{vw}.key")
        if vkey == UNKNOWN:
            raise TaxonomyError(f"{vw}.key: {UNKNOWN!r} is reserved and cannot be a target value")
        if any(x["key"] == vkey for x in values):
            raise TaxonomyError(f"{vw}.key: duplicate value key {vkey!r}")
        values.append({"key": vkey, "phrase": _text(_req(v, "phrase", vw), f"{vw}.phrase"),
                       "label": _text(v.get("label", vkey), f"{vw}.label")})
    if not values:
        raise TaxonomyError(f"{where}.values: at least one target value is needed")
    return values


def _read_extraction_values(a: Mapping[str, Any], target_keys: list[str], where: str) -> list[str]:
    """``extraction_values`` as given, or target values + ``non_target_values`` + ``unknown``."""
    if "extraction_values" in a:
        if "non_target_values" in a:
            raise TaxonomyError(f"{where}: give extraction_values or non_target_values, not both")
        ev = [_text(x, f"{where}.extraction_values") for x in _list(a["extraction_values"], f"{where}.extraction_values")]
        missing = [k for k in target_keys if k not in ev]
        if missing:
            raise TaxonomyError(f"{where}.extraction_values: target value(s) {missing} missing")
        if UNKNOWN not in ev:
            raise TaxonomyError(f"{where}.extraction_values: must include {UNKNOWN!r}")
        if len(set(ev)) != len(ev):
            raise TaxonomyError(f"{where}.extraction_values: duplicate value")
        return ev
    nt = [_text(x, f"{where}.non_target_values") for x in _list(a.get("non_target_values") or [], f"{where}.non_target_values")]
    clash = [x for x in nt if x in target_keys or x == UNKNOWN]
    if clash:
        raise TaxonomyError(f"{where}.non_target_values: {clash} already a target value or reserved")
    if len(set(nt)) != len(nt):
        raise TaxonomyError(f"{where}.non_target_values: duplicate value")
    return target_keys + nt + [UNKNOWN]


def _read_attributes(raw: Mapping[str, Any], file: str) -> list[dict]:
    """The ``attributes`` list (base-language wording): key, values, extraction values."""
    attrs: list[dict] = []
    for i, a in enumerate(_list(_req(raw, "attributes", file), f"{file}: attributes")):
        where = f"{file}: attributes[{i}]"
        a = _mapping(a, where)
        extra = sorted(set(a) - {"key", "values", "non_target_values", "extraction_values"})
        if extra:
            raise TaxonomyError(f"{where}: unknown field(s) {extra}")
        akey = _text(_req(a, "key", where), f"{where}.key")
        where = f"{file}: attributes.{akey}"
        if any(x["key"] == akey for x in attrs):
            raise TaxonomyError(f"{where}: duplicate attribute key {akey!r}")
        values = _read_values(a, where)
        ev = _read_extraction_values(a, [v["key"] for v in values], where)
        attrs.append({"key": akey, "values": values, "extraction_values": ev})
    return attrs


def _read_extraction_order(raw: Mapping[str, Any], attr_keys: list[str], file: str) -> list[str]:
    order = raw.get("extraction_order") or attr_keys
    order = [_text(x, f"{file}: extraction_order") for x in _list(order, f"{file}: extraction_order")]
    if sorted(order) != sorted(attr_keys) or len(set(order)) != len(order):
        raise TaxonomyError(
            f"{file}: extraction_order: must list every attribute exactly once "
            f"(missing: {sorted(set(attr_keys) - set(order))}, unknown: {sorted(set(order) - set(attr_keys))})"
        )
    return order


def _read_scenarios(raw: Mapping[str, Any], file: str) -> dict[str, list[str]]:
    """Scenario group -> English scenario keys; keys unique over all groups."""
    groups: dict[str, list[str]] = {}
    for g, items in _mapping(_req(raw, "scenarios", file), f"{file}: scenarios").items():
        gw = f"{file}: scenarios.{g}"
        if not isinstance(g, str) or not g:
            raise TaxonomyError(f"{gw}: group keys must be strings")
        keys = [_text(x, gw) for x in _list(items, gw)]
        if not keys:
            raise TaxonomyError(f"{gw}: empty scenario group")
        groups[g] = keys
    all_keys = [k for ks in groups.values() for k in ks]
    dup = sorted({k for k in all_keys if all_keys.count(k) > 1})
    if dup:
        raise TaxonomyError(f"{file}: scenarios: duplicate scenario key(s) {dup}")
    return groups


def _read_locales(
    raw: Mapping[str, Any], path: Path, languages: list[str], base: str, attrs: list[dict], groups: dict[str, list[str]]
) -> dict[str, dict]:
    """Every non-base language's translations: inline ``locales.<lang>``, else ``locales_dir/<lang>.yaml``
    (default ``locales/`` beside the file); a locale file of an unlisted language is an error."""
    file = str(path)
    inline = _mapping(raw.get("locales") or {}, f"{file}: locales")
    inline = {normalize_language(str(k)): v for k, v in inline.items()}
    unknown = sorted(set(inline) - set(languages))
    if unknown:
        raise TaxonomyError(f"{file}: locales: language(s) {unknown} not listed in languages")
    loc_dir = path.parent / str(raw.get("locales_dir", "locales"))
    locales: dict[str, dict] = {}
    for lang in languages:
        if lang == base:
            continue
        if lang in inline:
            locales[lang] = _load_locale(inline[lang], f"{file}: locales.{lang}", lang, attrs, groups)
            continue
        candidates = [loc_dir / f"{lang}.yaml"] + [loc_dir / f"{k}.yaml" for k, v in LANGUAGE_ALIASES.items() if v == lang]
        loc_file = next((c for c in candidates if c.is_file()), None)
        if loc_file is None:
            raise TaxonomyError(f"{file}: languages: no translation for {lang!r} (expected {candidates[0]} or locales.{lang})")
        locales[lang] = _load_locale(read_yaml(loc_file), str(loc_file), lang, attrs, groups)
    if loc_dir.is_dir():
        listed = set(languages) | {alias for alias, lang in LANGUAGE_ALIASES.items() if lang in languages}
        stray = sorted(p.name for p in loc_dir.glob("*.yaml") if p.stem not in listed)
        if stray:
            raise TaxonomyError(f"{loc_dir}: locale file(s) {stray} for language(s) not listed in {file}: languages")
    return locales


def _assemble(
    base: str, attrs: list[dict], groups: dict[str, list[str]], locales: dict[str, dict]
) -> tuple[list[Attribute], list[Scenario]]:
    """Attributes and scenarios with the wording of every language."""
    attributes = []
    for a in attrs:
        tvs = []
        for idx, v in enumerate(a["values"]):
            phrase, label = {base: v["phrase"]}, {base: v["label"]}
            for lang, loc in locales.items():
                label[lang], phrase[lang] = loc["values"][(a["key"], v["key"])]
            tvs.append(TargetValue(key=v["key"], index=idx, phrase=phrase, label=label, attribute=a["key"]))
        attributes.append(Attribute(key=a["key"], target_values=tvs, extraction_values=a["extraction_values"]))
    scenarios = []
    for g, keys in groups.items():
        for idx, k in enumerate(keys):
            text = {base: k}
            for lang, loc in locales.items():
                text[lang] = loc["scenarios"][(g, k)]
            scenarios.append(Scenario(key=k, group=g, index=idx, text=text))
    return attributes, scenarios


def load_taxonomy_file(path: str | Path, *, source: str | None = None) -> Taxonomy:
    """Load a taxonomy in stereoprobe's format (``taxonomy.yaml`` + ``locales/<lang>.yaml``), validated."""
    path = Path(path)
    file = str(path)
    raw = _mapping(read_yaml(path), file)
    unknown = sorted(set(raw) - _TOP_FIELDS)
    if unknown:
        raise TaxonomyError(f"{file}: unknown field(s) {unknown}; allowed: {sorted(_TOP_FIELDS)}")
    if raw.get("format_version", 1) != 1:
        raise TaxonomyError(f"{file}: format_version: only version 1 is supported")
    languages, base = _read_languages(raw, file)
    attrs = _read_attributes(raw, file)
    order = _read_extraction_order(raw, [a["key"] for a in attrs], file)
    groups = _read_scenarios(raw, file)
    story_template = {base: check_format_template(_req(raw, "story_template", file), {"context", "character"},
                                                  f"{file}: story_template")}
    extra_templates = {}
    for tname, t in _mapping(raw.get("extra_templates") or {}, f"{file}: extra_templates").items():
        extra_templates[str(tname)] = check_format_template(t, {"character"}, f"{file}: extra_templates.{tname}")
    locales = _read_locales(raw, path, languages, base, attrs, groups)
    names = {normalize_language(str(k)): str(v) for k, v in _mapping(raw.get("language_names") or {}, f"{file}: language_names").items()}
    for lang, loc in locales.items():
        story_template[lang] = loc["story_template"]
    attributes, scenarios = _assemble(base, attrs, groups, locales)
    extraction, refusal = _load_prompts(raw, path.parent, file)
    return Taxonomy(
        languages=languages, attributes=attributes, scenarios=scenarios, story_templates=story_template,
        extra_templates=extra_templates, extraction_order=order, extraction=extraction, refusal=refusal,
        base_language=base, language_names=names, name=str(raw.get("name", path.stem)), source=source or file,
    )


def load_taxonomy(source: str | Path | None = None, *, verify: bool = True) -> Taxonomy:
    """Load and validate a taxonomy.

    ``None`` or ``"bundled"``: stereoprobe's reference taxonomy. ``"upstream"``: the upstream seeds at the
    pinned commit (cache, else download; checksums verified). A folder: a ``taxonomy.yaml`` in our format
    inside it, else a local copy of the upstream seeds (checked against the pinned checksums; ``verify=False``
    reads a bare seed folder as is). A ``.yaml``/``.yml`` file: a taxonomy in our format.
    """
    if source is None or str(source) in ("bundled", "default", ""):
        return load_taxonomy_file(bundled_dir() / "taxonomy.yaml", source="bundled")
    if str(source) == "upstream":
        return load_upstream_seeds()
    path = Path(source).expanduser()
    if path.is_dir():
        if (path / "taxonomy.yaml").is_file():
            return load_taxonomy_file(path / "taxonomy.yaml")
        seed_layouts = ("attributes", "configs/stereotales_seeds", "stereotales-pipeline/configs/stereotales_seeds")
        if not any((path / p).is_dir() for p in seed_layouts):
            raise TaxonomyError(
                f"{path}: holds neither a taxonomy.yaml (our format) nor upstream StereoTales seeds "
                f"(looked for {', '.join(p + '/' for p in seed_layouts)})"
            )
        return load_upstream_seeds(local=path, verify=verify)
    if path.is_file():
        if path.suffix.lower() not in (".yaml", ".yml"):
            raise TaxonomyError(f"{path}: a taxonomy file must be YAML (.yaml/.yml)")
        return load_taxonomy_file(path)
    raise TaxonomyError(
        f"taxonomy source {str(source)!r} not found: use 'bundled', 'upstream', a taxonomy .yaml file, or a folder "
        "(our format with taxonomy.yaml, or a local copy of the upstream StereoTales seeds)"
    )

