"""Writing result tables: every table goes out as CSV (for people) and Parquet (for programs)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def write_table(df: pd.DataFrame, out_dir: str | Path, name: str) -> Path:
    """Write ``df`` as ``out_dir/name.csv`` and ``out_dir/name.parquet``; return the CSV path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / f"{name}.csv"
    df.to_csv(csv_path, index=False)
    # Parquet needs homogeneous column types: object columns holding mixed values are written as strings.
    pq = df.copy()
    for col in pq.columns:
        if pq[col].dtype == object and not pq[col].map(lambda v: v is None or isinstance(v, str)).all():
            pq[col] = pq[col].map(lambda v: None if v is None else str(v))
    pq.to_parquet(out / f"{name}.parquet", index=False)
    return csv_path
