"""Model names that differ only in Unicode normal form are one model (issue 34.3): ``café`` written with one
code point or with ``e`` and a combining accent looked like one name but made two rows. Labels are NFC where
they are made: logs (``model_label``), GlobalBias tables and StereoTales release tables (their model column)."""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "stereotales"))
from _stories_fixtures import ATTRS, planted_stories, release_rows, story_sample, write_log  # noqa: E402

from stereoprobe.globalbias.inputs import read_sentences  # noqa: E402
from stereoprobe.logs import read_header  # noqa: E402
from stereoprobe.model_labels import model_label  # noqa: E402
from stereoprobe.stereotales.mining.stories_release import read_stories_from_release  # noqa: E402

COMPOSED, DECOMPOSED = "caf\u00e9-7b", "cafe\u0301-7b"  # the same name in NFC and in NFD


def test_the_two_spellings_differ_as_text() -> None:
    assert COMPOSED != DECOMPOSED and unicodedata.normalize("NFC", DECOMPOSED) == COMPOSED


def test_log_labels_are_nfc(tmp_path) -> None:
    s = story_sample("en:gender:woman:1", attribute="gender", value="woman", profile={"gender": "woman"})
    a = write_log(tmp_path / "a.eval", [s], model=f"mockllm/{COMPOSED}")
    b = write_log(tmp_path / "b.eval", [s], model=f"mockllm/{DECOMPOSED}")
    assert read_header(a).model == read_header(b).model == f"mockllm/{COMPOSED}"
    assert model_label({"pretrained": f"/models/{DECOMPOSED}"}) == COMPOSED


def test_globalbias_table_models_are_one(tmp_path) -> None:
    rows = "model,group,name,descriptor,template,ppl\n"
    rows += "".join(f"{m},ARAB_F,n{i},kind,{t},{10 + i + t}\n" for i, m in enumerate((COMPOSED, DECOMPOSED))
                    for t in (1, 2, 3))
    (tmp_path / "t.csv").write_text(rows, encoding="utf-8")
    df, _ = read_sentences([tmp_path / "t.csv"])
    assert sorted(set(df["model"])) == [COMPOSED] and len(df) == 6


def test_release_models_are_one(tmp_path) -> None:
    frame = planted_stories(models=(COMPOSED, DECOMPOSED), languages=("en",), per_cell=2)
    path = tmp_path / "stories.csv"
    release_rows(frame, ATTRS).to_csv(path, index=False)
    stories = read_stories_from_release([path])
    assert sorted(set(stories.frame["model"].astype(str))) == [COMPOSED] and len(stories.frame) == len(frame)
