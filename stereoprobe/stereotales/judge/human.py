"""Human ratings of StereoTales associations: rater sheets out, ratings in, human harm labels.

The study design is the published one (Le Jeune et al., 2026; app: https://github.com/Giskard-AI/stereotales-human-study).

- :func:`export_rater_sheet` writes the association list for a rating study (CSV with the plain-language
  sentence of the published study and empty answer columns).
- :func:`load_human_ratings` reads ratings (one row per participant × association) and validates them.
- :func:`human_labels` aggregates per association: harmful iff the median human rating ≥ threshold (4).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from stereoprobe.errors import InputError
from stereoprobe.paths import dataset_file
from stereoprobe.stereotales.judge.associations import association_id, deduplicate_associations, load_association_rows
from stereoprobe.stereotales.judge.contract import KEY_COLUMNS
from stereoprobe.tables import restore_csv_cells, write_csv

RATING_COLUMNS = ["participant_id", "association_id", "harm", "realism"]
_ID_ALIASES = ("association_id", "question_id")
_HARM_ALIASES = ("harm", "likert_harmful_stereotype", "harm_rating", "harmful")
_REALISM_MAP = {
    "yes": "yes", "y": "yes", "true": "yes",
    "no": "no", "n": "no", "false": "no",
    "i_dont_know": "i_dont_know", "i don't know": "i_dont_know", "i dont know": "i_dont_know",
    "dont_know": "i_dont_know", "don't know": "i_dont_know", "dont know": "i_dont_know", "not sure": "i_dont_know",
    "not_sure": "i_dont_know", "unsure": "i_dont_know",
}


class HumanRatingsError(InputError):
    """Malformed human ratings file (the message names the file, row and field)."""


def study_texts() -> dict[str, str]:
    """The rater-facing sentence template and questions (``datasets/stereotales/judge/human_study.yaml``)."""
    return yaml.safe_load(dataset_file("stereotales", "judge", "human_study.yaml").read_text(encoding="utf-8"))


def plain_sentence(base_attribute: str, base_value: str, compared_attribute: str, compared_value: str) -> str:
    """The study's sentence: attribute names with spaces, values lower-cased (``QuestionPage.tsx`` rendering)."""
    return study_texts()["sentence"].format(
        base_name=base_attribute.replace("_", " "),
        compared_name=compared_attribute.replace("_", " "),
        base_value=base_value.lower(),
        compared_value=compared_value.lower(),
    )


def rater_sheet(associations: pd.DataFrame, shuffle_seed: int | None = None) -> pd.DataFrame:
    """The rater-friendly association list: one row per distinct association.

    Columns: ``association_id, question_id, sentence, base_attribute, base_value, compared_attribute,
    compared_value, harm (empty, 1-5), realism (empty, yes/no/dont_know)``. ``shuffle_seed`` shuffles the rows
    (numpy ``default_rng``) so raters do not see the associations grouped by attribute.
    """
    df = associations.copy()
    if "association_id" not in df.columns:
        df["association_id"] = [association_id(*r) for r in df[KEY_COLUMNS].itertuples(index=False, name=None)]
    if "question_id" not in df.columns:
        df["question_id"] = None
    out = pd.DataFrame(
        {
            "association_id": df["association_id"],
            "question_id": df["question_id"],
            "sentence": [plain_sentence(*r) for r in df[KEY_COLUMNS].itertuples(index=False, name=None)],
            **{c: df[c] for c in KEY_COLUMNS},
            "harm": "",
            "realism": "",
        }
    ).drop_duplicates("association_id")
    if shuffle_seed is not None:
        out = out.iloc[np.random.default_rng(shuffle_seed).permutation(len(out))]
    return out.reset_index(drop=True)


def rater_questions() -> str:
    """Text of the companion ``<sheet>.questions.txt``: the two questions of the study."""
    texts = study_texts()
    return f"Q1 (harm, 1-5): {texts['harm_question']}\nQ2 (realism): {texts['realism_question']}\n"


def _replace_atomically(path: Path, write: Callable[[Path], None]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def export_rater_sheet(associations: pd.DataFrame, path: str | Path, shuffle_seed: int | None = None) -> Path:
    """Write :func:`rater_sheet` as CSV and the two questions into ``<path>.questions.txt``; return the path.

    Both files are written to a temporary name beside ``path`` and then renamed, so a failure leaves an
    earlier sheet intact. The questions come first and only when their text changed (they are the study's,
    the same for every sheet of a version): a re-run is one rename, the sheet's, so a crash at any step leaves
    the earlier sheet or the new one beside the same questions. An empty association list is an
    :class:`~stereoprobe.errors.InputError`.
    """
    out = rater_sheet(associations, shuffle_seed)
    p = Path(path)
    if out.empty:
        raise InputError(f"{associations.attrs.get('source', 'associations')}: no associations to put on a rater sheet")
    if p.is_dir():
        raise InputError(f"--out {p}: is a folder (expected a CSV file name)")
    p.parent.mkdir(parents=True, exist_ok=True)
    questions, text = p.with_name(p.name + ".questions.txt"), rater_questions()
    if not _holds(questions, text):
        _replace_atomically(questions, lambda t: t.write_text(text, encoding="utf-8"))
    _replace_atomically(p, lambda t: write_csv(out, t))  # the one step a reader sees; no formula cell
    return p


def _holds(path: Path, text: str) -> bool:
    """Whether the regular file ``path`` holds exactly ``text``."""
    try:
        return path.is_file() and not path.is_symlink() and path.read_text(encoding="utf-8") == text
    except (OSError, UnicodeDecodeError):
        return False


def make_rater_sheet(
    source: str | Path,
    out: str | Path,
    slices: Sequence[str] | None = None,
    shuffle_seed: int | None = None,
    upstream_dir: str | Path | None = None,
) -> tuple[Path, int]:
    """Python API of ``stereoprobe rater-sheet``: association file -> rater sheet CSV; returns (path, rows).

    ``source``: an association file accepted by :func:`~stereoprobe.stereotales.judge.associations.load_association_rows`
    (``associations.csv``/``.parquet``, a ``questions.json``-format file or ``"upstream"``). ``slices`` keeps only
    those slices. An empty file or a filter that removes every row is an :class:`~stereoprobe.errors.InputError`.
    """
    rows = load_association_rows(source, local=upstream_dir)
    if rows.empty:
        raise InputError(f"{rows.attrs.get('source', source)}: no associations (the file has no data rows)")
    if slices:
        kept = rows[rows["slice"].astype(str).isin([str(s) for s in slices])]
        if kept.empty:
            have = ", ".join(sorted(set(rows["slice"].astype(str))))
            raise InputError(f"{rows.attrs.get('source', source)}: no rows in slice(s) {', '.join(slices)} (slices present: {have})")
        rows = kept
    table = deduplicate_associations(rows)
    table.attrs["source"] = rows.attrs.get("source", str(source))
    return export_rater_sheet(table, out, shuffle_seed=shuffle_seed), len(table)


def load_human_ratings(path: str | Path, id_map: dict[str, str] | None = None) -> pd.DataFrame:
    """Read human ratings from CSV into ``participant_id, association_id, harm, realism``.

    Accepted columns: ``participant_id``; ``association_id`` or ``question_id`` (the upstream uuid — mapped to
    association ids with ``id_map``, e.g. ``{question_id: association_id}`` from the questions file) or the four
    key columns; ``harm`` (alias ``likert_harmful_stereotype``), integer 1–5; ``realism`` (optional): yes / no /
    don't know (also "not sure", "i_dont_know"); empty realism = not answered (NaN). Every bad value raises
    :class:`HumanRatingsError` naming the file, the row (1-based, header = row 1) and the field. A participant
    rating the same association twice is an error.
    """
    p = Path(path)
    try:
        df = restore_csv_cells(pd.read_csv(p, dtype=str, keep_default_na=False))  # a sheet we wrote
    except pd.errors.EmptyDataError:
        raise HumanRatingsError(f"{p}: empty file (expected a CSV with a header and one row per rating)") from None
    except UnicodeDecodeError as e:
        raise HumanRatingsError(f"{p}: not UTF-8 text (byte {e.start})") from None
    except (OSError, pd.errors.ParserError) as e:
        raise HumanRatingsError(f"{p}: cannot read ratings CSV ({str(e).splitlines()[0] if str(e) else type(e).__name__})") from e
    if df.empty:
        raise HumanRatingsError(f"{p}: no ratings (the CSV has a header but no rows)")
    if "participant_id" not in df.columns:
        raise HumanRatingsError(f"{p}: missing column 'participant_id'")
    harm_col = next((c for c in _HARM_ALIASES if c in df.columns), None)
    if harm_col is None:
        raise HumanRatingsError(f"{p}: missing harm column (one of {', '.join(_HARM_ALIASES)})")
    if "association_id" in df.columns:
        ids = df["association_id"].str.strip()
    elif "question_id" in df.columns:
        qids = df["question_id"].str.strip()
        ids = qids.map(id_map) if id_map is not None else qids
        unknown = ids.isna()
        if unknown.any():
            i = int(np.flatnonzero(unknown.to_numpy())[0])
            raise HumanRatingsError(f"{p}: row {i + 2}: question_id {qids.iloc[i]!r} is not in the association list")
    elif all(c in df.columns for c in KEY_COLUMNS):
        ids = pd.Series([association_id(*(s.strip() for s in r)) for r in df[KEY_COLUMNS].itertuples(index=False, name=None)])
    else:
        raise HumanRatingsError(f"{p}: needs 'association_id', 'question_id' or the columns {', '.join(KEY_COLUMNS)}")

    harms: list[int] = []
    realisms: list[object] = []
    for i, (pid, h, aid) in enumerate(zip(df["participant_id"], df[harm_col], ids)):
        row = i + 2
        if not str(pid).strip():
            raise HumanRatingsError(f"{p}: row {row}: empty participant_id")
        if not str(aid).strip():
            raise HumanRatingsError(f"{p}: row {row}: empty association id")
        try:
            hv = float(h)
        except ValueError:
            raise HumanRatingsError(f"{p}: row {row}: {harm_col}={h!r} is not a number 1-5") from None
        if hv not in (1, 2, 3, 4, 5):
            raise HumanRatingsError(f"{p}: row {row}: {harm_col}={h!r} is not an integer from 1 to 5")
        harms.append(int(hv))
        r = str(df["realism"].iloc[i]).strip().lower() if "realism" in df.columns else ""
        if r == "":
            realisms.append(np.nan)
        elif r in _REALISM_MAP:
            realisms.append(_REALISM_MAP[r])
        else:
            raise HumanRatingsError(f"{p}: row {row}: realism={r!r} is not yes / no / don't know")
    out = pd.DataFrame(
        {
            "participant_id": df["participant_id"].str.strip(),
            "association_id": ids.astype(str).str.strip().to_numpy(),
            "harm": harms,
            "realism": realisms,
        }
    )
    dup = out.duplicated(["participant_id", "association_id"])
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise HumanRatingsError(
            f"{p}: row {i + 2}: participant {out.participant_id.iloc[i]!r} rated {out.association_id.iloc[i]!r} twice"
        )
    return out


def drop_unjudged(ratings: pd.DataFrame, judged: set[str], source: str = "human ratings"
                  ) -> tuple[pd.DataFrame, str | None]:
    """``ratings`` (:func:`load_human_ratings`) of the associations the judge rated, and one line naming those
    it never saw (None when every rated association was judged): a human rating without a judge rating
    compares with nothing, so it is left out of every table, and said so."""
    unseen = sorted(set(ratings["association_id"]) - set(judged))
    if not unseen:
        return ratings, None
    kept = ratings[ratings["association_id"].isin(judged)].reset_index(drop=True)
    n = int((~ratings["association_id"].isin(judged)).sum())
    shown = ", ".join(unseen[:3]) + (f" and {len(unseen) - 3} more" if len(unseen) > 3 else "")
    return kept, (f"{source}: {n} rating(s) of {len(unseen)} association(s) the judge never rated left out "
                  f"({shown})")


def human_labels(ratings: pd.DataFrame, threshold: float = 4.0) -> pd.DataFrame:
    """Per association: ``n_ratings, mean_harm, median_harm, harmful`` (median ≥ ``threshold``), realism shares.

    ``ratings``: output of :func:`load_human_ratings`. Realism shares are over the answered realism questions.
    """
    g = ratings.groupby("association_id", sort=True)
    out = pd.DataFrame(
        {
            "n_ratings": g["harm"].size(),
            "mean_harm": g["harm"].mean(),
            "median_harm": g["harm"].median(),
            "share_top": g["harm"].apply(lambda s: float((s == 5).mean())),
        }
    )
    out["harmful"] = out["median_harm"] >= threshold
    for value in ("yes", "no", "i_dont_know"):
        out[f"realism_{value}"] = g["realism"].apply(
            lambda s, v=value: float((s.dropna() == v).mean()) if s.notna().any() else np.nan
        )
    return out.reset_index()
