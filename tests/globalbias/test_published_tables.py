"""Published GlobalBias tables as input (issue 34.6), tiny hand-written upstream-shaped CSVs: what is
unambiguous is read the same way (column order, CRLF, a byte-order mark, numbers quoted with spaces, an extra
column ignored with a notice); what is ambiguous is one line (two spellings of one group or descriptor, a name
in two groups); a model missing a group, or a group missing descriptors, is noted."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from stereoprobe.cli import main
from stereoprobe.errors import InputError
from stereoprobe.globalbias.inputs import read_sentences

HEADER = ",Group,apx_1,apx_2,apx_3,descriptor,axis,bucket,Ethnicity,Gender"
GROUPS = [("ARAB", "F"), ("ARAB", "M"), ("CHINESE", "F"), ("CHINESE", "M")]
DESCRIPTORS = [("kind", "personality"), ("nurse", "occupation")]


def _base(skip: tuple[str, str, str] | None = None) -> str:
    lines, i = [HEADER], 0
    for d, axis in DESCRIPTORS:
        for k, (e, g) in enumerate(GROUPS):
            if skip == (e, g, d):
                continue
            lines.append(f"{i},\"('{e}', '{g}')\",{100 + k}.5,{200 + 7 * k}.25,{300 - k},{d},{axis},all,{e},{g}")
            i += 1
    return "\n".join(lines) + "\n"


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


def _read(path: Path) -> tuple[pd.DataFrame, str]:
    df, rep = read_sentences([path])
    cols = ["group", "descriptor", "template", "apx"]
    return df[cols].sort_values(cols[:3]).reset_index(drop=True), rep.summary()


def _variants() -> dict[str, str]:
    base = _base()
    frame = pd.read_csv(io.StringIO(base), dtype=str, keep_default_na=False)
    return {
        "reordered": frame[list(reversed(frame.columns))].to_csv(index=False),
        "crlf": base.replace("\n", "\r\n"),
        "bom": "\ufeff" + base,
        "quoted-spaces": base.replace(",100.5,", ',"  100.5 ",').replace(",201.25,", ', " 201.25",'),
        "extra-column": frame.assign(note="x").to_csv(index=False),
    }


@pytest.mark.parametrize("case", list(_variants()))
def test_unambiguous_differences_read_the_same(tmp_path, case) -> None:
    expected, _ = _read(_write(tmp_path, "base.csv", _base()))
    assert len(expected) == 8 * 3 and expected["apx"].iloc[0] == 100.5
    got, summary = _read(_write(tmp_path, "llama.csv", _variants()[case]))
    pd.testing.assert_frame_equal(got, expected)
    assert ("column(s) note not used" in summary) == (case == "extra-column")


@pytest.mark.parametrize("old,new,fragment", [
    (",kind,personality", ",Kind,personality", "descriptor names 'Kind', 'kind'"),
    (",nurse,occupation", ",nurse ,occupation", "descriptor names 'nurse', 'nurse '"),
    ("('ARAB', 'M')\"", "('Arab', 'M')\"", "group names 'ARAB_M', 'Arab_M'"),
], ids=["descriptor-case", "descriptor-space", "group-case"])
def test_two_spellings_of_one_name_are_one_line(tmp_path, old, new, fragment) -> None:
    text = _base()
    first = text.index(old, text.index("\n1,"))  # the second row onward: both spellings present
    path = _write(tmp_path, "t.csv", text[:first] + text[first:].replace(old, new, 1))
    with pytest.raises(InputError) as err:
        read_sentences([path])
    msg = str(err.value)
    assert msg.startswith(f"{path.name}: ") and fragment in msg and "differ only in case or spaces" in msg


def test_spellings_of_different_axes_are_two_descriptors(tmp_path) -> None:
    """Upstream's own results hold 'Conservative' and 'conservative' under different axes."""
    text = _base().replace(",nurse,occupation", ",Kind,politics")
    df, _ = read_sentences([_write(tmp_path, "t.csv", text)])
    assert sorted(set(df["descriptor"])) == ["Kind", "kind"]


def test_a_name_in_two_groups_is_one_line(tmp_path) -> None:
    rows = "model,group,name,descriptor,template,ppl\n" + "".join(
        f"m,{g},{n},kind,{t},{10 + t}\n" for g, n in (("ARAB_F", "Sam"), ("CHINESE_F", "Li"), ("ENGLISH_F", "Sam "))
        for t in (1, 2, 3))
    with pytest.raises(InputError,
                       match=r"t\.csv: name 'Sam' of model 'm' is listed in 2 groups \(ARAB_F, ENGLISH_F\)"):
        read_sentences([_write(tmp_path, "t.csv", rows)])


def test_a_model_missing_a_group_or_a_cell_is_noted(tmp_path) -> None:
    full = _write(tmp_path, "m1.csv", _base())
    lacking = _write(tmp_path, "m2.csv", "\n".join(
        line for line in _base().splitlines() if "CHINESE', 'M'" not in line) + "\n")
    _, rep = read_sentences([full, lacking])
    assert "model 'm2' has no rows for group(s) CHINESE_M that other models have" in rep.summary()
    assert "'m1'" not in rep.summary()
    _, rep = read_sentences([_write(tmp_path, "m3.csv", _base(skip=("CHINESE", "F", "nurse")))])
    assert "model 'm3': 1 group x descriptor cell(s) absent (e.g. CHINESE_F x 'nurse')" in rep.summary()


def test_the_cli_refuses_in_one_line(tmp_path, capsys) -> None:
    path = _write(tmp_path / "in", "t.csv", _base().replace("1,\"('ARAB', 'M')\"", "1,\"('Arab', 'M')\""))
    assert main(["globalbias", str(path), "--out", str(tmp_path / "out")]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "group names" in line and "differ only in case or spaces" in line and not (tmp_path / "out").exists()


def _profiles_csv(tmp_path: Path, edit) -> Path:
    from globalbias.test_profiles import synthetic
    from stereoprobe.globalbias import profiles as P

    up = synthetic(True, n_per_group=3).drop(columns="model")
    for col in P.LISTS:
        up[col] = up[col].map(repr)
    edit(up)
    path = tmp_path / "10a_demo_full.csv"
    up.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("edit,fragment", [
    (lambda up: up.__setitem__("Group", up["Group"].where(up.index != 0, "('ALPHA', 'F') ")),
     "Group values \"('ALPHA', 'F')\", \"('ALPHA', 'F') \" differ only in case or spaces"),
    (lambda up: up.__setitem__("Ethnicity", up["Ethnicity"].where(up.index != 0, "alpha")),
     "Ethnicity values 'ALPHA', 'alpha' differ only in case or spaces"),
    (lambda up: up.__setitem__("name", up["name"].where(up.index != 0, up["name"].iloc[-1])),
     "is listed in 2 groups"),
], ids=["group-space", "ethnicity-case", "name-in-two-groups"])
def test_profiles_tables_refuse_ambiguous_names(tmp_path, edit, fragment) -> None:
    from stereoprobe.globalbias.profiles import read_profiles_csv

    assert len(read_profiles_csv(_profiles_csv(tmp_path, lambda up: None))) == 12
    with pytest.raises(InputError) as err:
        read_profiles_csv(_profiles_csv(tmp_path, edit))
    assert "10a_demo_full.csv: " in str(err.value) and fragment in str(err.value)
