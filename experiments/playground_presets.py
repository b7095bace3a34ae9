"""Does each Playground preset show its story?  Every preset at its own settings (the classroom
size: 10,000 sessions, 300 steps) over seeds 0–4 — a fresh log and initialisation per seed —
test nDCG@3 / nDCG@10 per method with 90 % t-intervals, and each of the preset's claims as a
paired difference with its 90 % interval.  Writes docs/results/playground_presets.md.

    python experiments/playground_presets.py [--seeds 5] [--preset NAME]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from _common import frame_md, table
from joblib import Parallel, delayed

from ultr_core.app.playground import PRESETS, check_claims, preset_runs
from ultr_core.evaluation.stats import summarise

ROOT = Path(__file__).resolve().parents[1]


#: test nDCG, and how near each method's final observation curve came to the truth (−mean |ô/ô₁ − o/o₁|; the
#: flat curve Naive assumes is the reference of a curve claim)
METRICS = ["ndcg@3", "ndcg@10", "curve_fit"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--preset", default=None, help="only this preset (its name)")
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" / "playground_presets.md"))
    a = ap.parse_args()
    presets = [p for p in PRESETS if a.preset in (None, p.name)]
    t0 = time.time()
    runs = Parallel(n_jobs=2)(delayed(preset_runs)(p, [s]) for p in presets for s in range(a.seeds))
    lines = ["# Playground presets over seeds", "",
             f"`python experiments/playground_presets.py --seeds {a.seeds}` ({time.time() - t0:.0f} s on 2 cores). "
             "Each preset at its own settings (10,000 sessions, 300 steps, the page's defaults for every knob it "
             f"does not set), seeds 0–{a.seeds - 1}: a fresh log and initialisation per seed. Test-set nDCG, "
             "mean [90 % t-interval]; curve fit: minus the mean absolute difference between a method's final "
             "observation curve and the truth, both ÷ position 1 (the flat curve Naive assumes as the reference; "
             "empty for methods without a curve). Claims are paired differences over seeds. "
             "`tests/app/test_playground_presets.py` asserts the same claims (three presets through the pages "
             "that show their verdicts: tests/app/test_playground.py in AppTest, tests/app/test_browser.py in "
             "chromium).", ""]
    for i, p in enumerate(presets):
        df = __import__("pandas").concat(runs[i * a.seeds:(i + 1) * a.seeds], ignore_index=True)
        claims = check_claims(df, p.claims)
        if p.log_claims:                      # claims about the log itself (issue #46): no training needed
            from ultr_core.app.playground import log_runs
            claims = __import__("pandas").concat([claims, check_claims(log_runs(p, range(a.seeds)), p.log_claims)])
        lines += [f"## {p.name}", "", f"> {p.story} — *{p.cite}*", "",
                  table(summarise(df, "method", METRICS), ["method"], METRICS), "",
                  frame_md(claims, index=False), ""]
        print(p.name)
        print(claims.to_string(index=False))
    Path(a.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
