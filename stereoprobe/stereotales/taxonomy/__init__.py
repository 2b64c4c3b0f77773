"""The StereoTales taxonomy: dimensions, prompted values, scenarios and prompts, in several languages.

A taxonomy is configuration read from data files (stereoprobe's own wording in ``datasets/stereotales/``,
the upstream seeds of Giskard-AI/stereotales-pipeline ``configs/stereotales_seeds/`` at the pinned commit,
or a user's file). Modules, in the order a story is built:

- :mod:`.files`: YAML reading and template checks (:class:`TaxonomyError` names the file and field);
- :mod:`.prompts`: the extraction and refusal-detector prompts;
- :mod:`.model`: :class:`Taxonomy` and its parts (attributes, target values, scenarios);
- :mod:`.loading`: :func:`load_taxonomy` (our format, a folder, ``"upstream"``); :mod:`.seeds` reads the
  upstream seed YAMLs;
- :mod:`.samples`: :func:`build_samples`, one inspect sample per (language, attribute, value, scenario).
"""

from stereoprobe.stereotales.contract import LANGUAGE_ALIASES, OTHER, UNKNOWN, normalize_language
from stereoprobe.stereotales.taxonomy.files import TaxonomyError, check_format_template, read_yaml
from stereoprobe.stereotales.taxonomy.loading import load_taxonomy, load_taxonomy_file
from stereoprobe.stereotales.taxonomy.model import Attribute, Scenario, TargetValue, Taxonomy
from stereoprobe.stereotales.taxonomy.prompts import ExtractionPromptSpec, RefusalPromptSpec
from stereoprobe.stereotales.taxonomy.seeds import load_upstream_seeds, upstream_config

__all__ = [
    "Attribute",
    "EXTRA_ID_PREFIX",
    "ExtractionPromptSpec",
    "LANGUAGE_ALIASES",
    "OTHER",
    "RefusalPromptSpec",
    "SCENARIO_TEMPLATE",
    "Scenario",
    "TargetValue",
    "Taxonomy",
    "TaxonomyError",
    "UNKNOWN",
    "build_samples",
    "check_format_template",
    "extra_sample_id",
    "load_taxonomy",
    "load_taxonomy_file",
    "load_upstream_seeds",
    "normalize_language",
    "read_yaml",
    "sample_id",
    "upstream_config",
]

_SAMPLES = ("EXTRA_ID_PREFIX", "SCENARIO_TEMPLATE", "build_samples", "extra_sample_id", "sample_id")


def __getattr__(name: str) -> object:
    """The sample builders (:mod:`.samples`) on first use: they import inspect-ai (seconds), which reading the
    stories of a release table (``stereoprobe associations``, through :mod:`.seeds`) never needs."""
    if name in _SAMPLES:
        from stereoprobe.stereotales.taxonomy import samples

        return getattr(samples, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
