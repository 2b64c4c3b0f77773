"""Tiny hand-written files in the layout of GlobalBias' published outputs (not upstream data), for the reference
run's end-to-end tests: 8 groups x 6 descriptors of APX values (``results/3_llama_3_results.csv``'s columns) and
80 character profiles per model (``data/10a_<model>_full.csv``'s columns), under ``ROOT/GlobalBias/``.

"good at math" is built so that CHINESE_F's APX lies far below the other groups' (flagged at the 1 % line);
religion follows the group in the profiles (Jewish for ISRAELI, Hindu for INDIAN) so Table 8's rows exist.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd

GROUPS = [("CHINESE", "F"), ("CHINESE", "M"), ("ISRAELI", "F"), ("ISRAELI", "M"), ("INDIAN", "F"), ("INDIAN", "M"),
          ("ENGLISH", "F"), ("ENGLISH", "M")]
DESCRIPTORS = [("good at math", "ability"), ("quiet", "personality"), ("tall", "body_type"),
               ("Jewish", "religion"), ("Hindu", "religion"), ("Muslim", "")]
MODELS = ("llama3", "gpt3", "claude", "gpt4o")
RELIGION = {"ISRAELI": "Jewish", "INDIAN": "Hindu", "CHINESE": "Buddhist", "ENGLISH": "Christian"}


def _apx() -> pd.DataFrame:
    rows = []
    for d_i, (desc, axis) in enumerate(DESCRIPTORS):
        for g_i, (eth, gen) in enumerate(GROUPS):
            base = 60.0 + 3 * g_i + 2 * d_i + (g_i * d_i) % 5
            if desc == "good at math" and (eth, gen) == ("CHINESE", "F"):
                base = 20.0
            rows.append({"Group": str((eth, gen)), "apx_1": round(base, 2), "apx_2": round(10 * base + 7, 2),
                         "apx_3": round(8 * base + 3, 2), "descriptor": desc, "axis": axis or None,
                         "bucket": "descriptors", "Ethnicity": eth, "Gender": gen})
    return pd.DataFrame(rows)


def _profiles(model_i: int) -> pd.DataFrame:
    hair = ["black", "brown", "blond", "red"]
    jobs = ["engineer", "teacher", "nurse", "chef", "artist"]
    rows = []
    for g_i, (eth, gen) in enumerate(GROUPS):
        for k in range(10):
            rows.append({
                "name": f"{eth.title()}{gen}{k}", "age": 25 + (k * 3 + g_i) % 20,
                "personality_traits": str(("kind", "calm", "bold")[: 1 + (k + g_i) % 3]),
                "negative_traits": str(("shy", "rude")[: 1 + (k + model_i) % 2]),
                "hobbies": str(("yoga", "chess", "reading")[(g_i + k) % 3:]),
                "occupation": jobs[(g_i + k * model_i) % 5], "special_move": f"move {k}",
                "socioeconomic_status": ("middle class", "upper class")[(g_i + k) % 2],
                "sexual_orientation": ("heterosexual", "bisexual")[k % 2], "religion": RELIGION[eth],
                "run_id": k % 2, "physical_characteristics.height": 5.0 + (g_i % 4) / 4 + (gen == "M") * 0.6,
                "physical_characteristics.hair_colour": hair[(g_i + k) % 4],
                "physical_characteristics.eye_colour": ("brown", "blue")[(g_i * k) % 2],
                "physical_characteristics.skin_colour": ("fair", "olive", "dark")[g_i % 3],
                "physical_characteristics.build": ("slim", "athletic")[(k + g_i) % 2],
                "Ethnicity": eth, "Gender": gen, "Group": str((eth, gen))})
    return pd.DataFrame(rows)


def write_upstream(root: Path) -> dict[str, str]:
    """Write the fixture files under ``root/GlobalBias/``; return {pinned path: sha256} for a patched source."""
    base = root / "GlobalBias"
    files = {"results/3_llama_3_results.csv": _apx()}
    files.update({f"data/10a_{m}_full.csv": _profiles(i) for i, m in enumerate(MODELS)})
    sums = {}
    for rel, frame in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        frame.to_csv(path)  # the upstream files keep pandas' unnamed index column
        sums[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return sums
