"""Benchmark: reading StereoTales eval logs into the stories frame.

Writes one synthetic ``stereotales`` .eval log (N samples with a 2,000-character story, three extractor
records and a full profile, like the task writes) and times, in the same run:

- ours: ``stereoprobe.stereotales.mining.stories.read_stories`` (single zip open, plain JSON per sample member);
- peer: inspect's ``read_eval_log_samples`` (the documented streaming API; reopens the archive and validates
  the sample model for every sample), timed on the first ``--peer-samples`` samples and reported per sample.

Usage: ``python bench/stories_reader.py [--samples 5000] [--peer-samples 300]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "stereotales"))

from _stories_fixtures import planted_stories, story_sample, write_log  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=5000)
    ap.add_argument("--peer-samples", type=int, default=300)
    args = ap.parse_args()

    from inspect_ai.log import read_eval_log_samples

    from stereoprobe.stereotales.mining.stories import read_stories

    per_cell = max(1, args.samples // 9)
    frame = planted_stories(models=("bench/model",), languages=("en",), per_cell=per_cell)
    attrs = ["gender", "income_level", "education"]
    samples = []
    for r in frame.to_dict("records"):
        s = story_sample(r["sample_id"], attribute=r["target_attribute"], value=r["attribute_value_key"],
                         profile={a: r[a] for a in attrs}, story="word " * 400)
        s.scores["stereotales_extraction"].metadata["extractions"] = [
            {"model": f"extractor/{k}", "status": "ok", "values": {a: r[a] for a in attrs}, "raw": "{...}" * 100,
             "error": None} for k in range(3)
        ]
        samples.append(s)
    with tempfile.TemporaryDirectory() as d:
        path = write_log(Path(d) / "bench.eval", samples)
        t = time.perf_counter()
        st = read_stories([path])
        ours = time.perf_counter() - t
        t = time.perf_counter()
        n = 0
        for _ in read_eval_log_samples(str(path), all_samples_required=False, exclude_fields={"events", "messages", "store"}):
            n += 1
            if n >= args.peer_samples:
                break
        peer = time.perf_counter() - t
    ours_ps = ours / len(st.frame)
    peer_ps = peer / n
    print(f"samples in log: {len(samples)}; stories read: {len(st.frame)}")
    print(f"ours  read_stories:            {ours:.2f} s total, {1e3 * ours_ps:.3f} ms/sample")
    print(f"peer  read_eval_log_samples:   {peer:.2f} s for {n} samples, {1e3 * peer_ps:.3f} ms/sample")
    print(f"ratio (peer/ours, per sample): {peer_ps / ours_ps:.1f}x")
    print(f"projected for 650,000 stories: ours {650_000 * ours_ps / 60:.1f} min, peer {650_000 * peer_ps / 60:.1f} min")


if __name__ == "__main__":
    main()
