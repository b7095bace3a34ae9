"""Issue #47, item 6: our click models beside CLAX (PyPI ``clax-models`` 0.1.1, run unmodified in its own virtual
environment) on the same sessions, scored by the same metric code (ours, :func:`ultr_core.clickmodels.evaluation.
scores`' log-likelihood on CLAX's conditional click probabilities).

    python benchmarks/clax_comparison.py TRAIN TEST --clax-python /path/to/clax_venv/bin/python [--format pyclick]

CLAX is trained with its Yandex baseline's settings (``experiments/1-yandex-baseline/config.yaml``: AdamW, learning
rate 0.01, batches of 4,096 sessions, up to 100 epochs, early stopping on validation loss, full embedding tables) on
the first 80 % of our training sessions, the last 20 % its validation set; ours fit on all training sessions (the
learned prior holds out its own fifth to choose, then refits).  Our seconds are each model's fit, torch imported
and warmed up by one tiny fit before the clock starts (as CLAX's start after jax's import).  Prints one markdown row
per model.
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

#: CLAX's class and our keys for each model both have (DCM: our counting and maximum-likelihood fits)
MODELS = {"pbm": ("PositionBasedModel", ["pbm"]), "ubm": ("UserBrowsingModel", ["ubm"]),
          "dcm": ("DependentClickModel", ["dcm", "dcm_ml"]), "dbn": ("DynamicBayesianNetwork", ["dbn"]),
          "ccm": ("ClickChainModel", ["ccm"])}

DRIVER = r'''
import json, sys, time
import numpy as np, optax, jax, jax.numpy as jnp
from flax import nnx
import clax
from clax.trainer import Trainer
d = np.load(sys.argv[1]); out = sys.argv[2]; name = sys.argv[3]; n_pairs = int(d["n_pairs"])
def batches(pairs, clicks, size):
    n, depth = pairs.shape
    for lo in range(0, n, size):
        p, c = pairs[lo:lo + size], clicks[lo:lo + size]
        yield {"query_id": np.zeros(len(p), np.int32), "n": np.full(len(p), depth, np.int16),
               "query_doc_ids": p.astype(np.int32),
               "positions": np.tile(np.arange(1, depth + 1, dtype=np.int16), (len(p), 1)),
               "mask": np.ones(p.shape, bool), "clicks": c.astype(np.float32)}
tr_p, tr_c = d["train_pairs"], d["train_clicks"]; cut = int(len(tr_p) * 0.8)
train = list(batches(tr_p[:cut], tr_c[:cut], 4096)); val = list(batches(tr_p[cut:], tr_c[cut:], 8192))
import inspect
cls = getattr(clax, name)
kw = {"positions": tr_p.shape[1]} if "positions" in inspect.signature(cls.__init__).parameters else {}
model = cls(query_doc_pairs=n_pairs, rngs=nnx.Rngs(42), **kw)
t0 = time.perf_counter()
Trainer(optax.adamw(0.01), epochs=100).train(model, train, val)
seconds = time.perf_counter() - t0
model.eval()
test = batches(d["test_pairs"], d["test_clicks"], 8192)
cond = np.concatenate([np.asarray(model.predict_conditional_clicks(b)) for b in test])
np.save(out, cond); print(json.dumps({"seconds": seconds}))
'''


def _our_scores(train, test, keys, prior):
    from ultr_core.clickmodels.compare import compare_click_models
    out = compare_click_models(train, "train", models=keys, test=test, prior=prior)
    return {k: (m.log_likelihood, m.seconds) for k, m in out.models.items()}


def _warm_up() -> None:
    """torch imported and one tiny gradient fit made before the clock starts (≈ 1 s once per process), as CLAX's
    seconds start after jax's import."""
    from ultr_core.clickmodels.cascade_ml import DCMML
    from ultr_core.clickmodels.sessions import SessionTable
    DCMML().fit(SessionTable(np.array([[0, 1], [1, 0]]), np.array([[1, 0], [0, 1]], bool), np.ones(2), 2, 2))


def _clax_ll(cond_log: np.ndarray, clicks: np.ndarray) -> float:
    p = np.exp(np.clip(cond_log, -700, 0))
    obs = np.clip(np.where(clicks, p, 1 - p), 1e-300, 1.0)
    return float(np.log(obs).mean(1).mean())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("train")
    ap.add_argument("test")
    ap.add_argument("--format", default=None)
    ap.add_argument("--clax-python", required=True)
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated of " + ", ".join(MODELS))
    a = ap.parse_args()
    chosen = {k: MODELS[k] for k in a.models.split(",")}
    from ultr_core.clickmodels.compare import train_test
    from ultr_core.clickmodels.outofcore import read_sessions
    train, test = read_sessions(a.train, a.format, "train"), read_sessions(a.test, a.format, "test")
    tr, te, dropped = train_test(train, test=test)
    print(f"{tr.n_sessions:,} training sessions, {te.n_sessions:,} test sessions ({dropped:,} of unseen queries "
          f"dropped), {tr.n_pairs:,} pairs", file=sys.stderr)
    keys = [k for _, ks in chosen.values() for k in ks]
    _warm_up()
    ours = {p: _our_scores(train, test, keys, p) for p in ("pyclick", "learned")}
    print("| model | CLAX log-likelihood | CLAX seconds | ours, PyClick prior | ours, learned prior | our seconds "
          "(½ / learned) |\n|---|---:|---:|---:|---:|---:|")
    for key, ours_keys, ll, secs, wall, error in run_clax(tr, te, chosen, a.clax_python):
        if error:
            print(f"| {key} | CLAX failed: {error[:80]} | | | | |")
            continue
        for k in ours_keys:
            print(f"| {k} | {ll:.4f} | {secs:.1f} ({wall:.0f} wall) | {ours['pyclick'][k][0]:.4f} | "
                  f"{ours['learned'][k][0]:.4f} | {ours['pyclick'][k][1]:.2f} / {ours['learned'][k][1]:.2f} |")


def run_clax(tr, te, chosen: dict, clax_python: str):
    """CLAX run unmodified (its own interpreter) on training sessions ``tr``, scored on ``te`` by our metric: per
    model of ``chosen`` (key → (CLAX class, our keys)), (key, our keys, log-likelihood, CLAX's seconds, wall
    seconds, None) or (key, our keys, None, None, None, the error's last line)."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "sessions.npz"
        np.savez(data, train_pairs=tr.pairs, train_clicks=tr.clicks, test_pairs=te.pairs, test_clicks=te.clicks,
                 n_pairs=tr.n_pairs)
        driver = Path(tmp) / "driver.py"
        driver.write_text(DRIVER)
        for key, (cls, ours_keys) in chosen.items():
            t0 = time.perf_counter()
            res = subprocess.run([clax_python, str(driver), str(data), str(Path(tmp) / f"{key}.npy"), cls],
                                 capture_output=True, text=True)
            if res.returncode:
                yield key, ours_keys, None, None, None, res.stderr.strip().splitlines()[-1]
                continue
            secs = json.loads(res.stdout.strip().splitlines()[-1])["seconds"]
            ll = _clax_ll(np.load(Path(tmp) / f"{key}.npy"), te.clicks)
            yield key, ours_keys, ll, secs, time.perf_counter() - t0, None

if __name__ == "__main__":
    main()
