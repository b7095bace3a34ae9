"""Our click models against PyClick (markovi/PyClick, run unmodified from its repository in a separate Python
environment): the same sessions, the same split (PyClick's ``examples/Example.py``: the first 75 % train, test
sessions of unseen queries dropped), log-likelihood, perplexity and the time each side takes.

    python benchmarks/pyclick_agreement.py LOG [--test LOG2] [--pyclick DIR] [--python PYTHON] [--format F]

With ``--test`` the second log is the test set (PyClick's ``SimpleExample.py`` protocol: ``oneQueryTrain`` and
``oneQueryTest``), test sessions of unseen queries dropped on both sides.

DIR holds PyClick's ``pyclick`` package (e.g. ``git archive HEAD pyclick`` of its repository), PYTHON is the
interpreter of a separate virtual environment (PyClick is pure Python: no packages needed).  The sessions travel
to PyClick as a plain table (query, documents, 0/1 clicks) read by this project's reader, so both sides see
exactly the same sessions; the driver below only builds PyClick's own ``SearchSession`` objects and calls its
``train`` and ``Evaluation`` classes.  Prints a Markdown table (docs/click_models.md).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

DRIVER = r"""
import json, sys, time
from pyclick.click_models.Evaluation import LogLikelihood, Perplexity
from pyclick.click_models.CCM import CCM
from pyclick.click_models.CM import CM
from pyclick.click_models.CTR import DCTR, GCTR, RCTR
from pyclick.click_models.DBN import DBN
from pyclick.click_models.DCM import DCM
from pyclick.click_models.PBM import PBM
from pyclick.click_models.SDBN import SDBN
from pyclick.click_models.UBM import UBM
from pyclick.search_session.SearchResult import SearchResult
from pyclick.search_session.SearchSession import SearchSession
from pyclick.utils.Utils import Utils
sessions = []
for line in open(sys.argv[1]):
    query, docs, clicks = line.rstrip("\n").split("\t")
    s = SearchSession(query)
    for d, c in zip(docs.split(","), clicks.split(",")):
        s.web_results.append(SearchResult(d, int(c)))
    sessions.append(s)
cut = int(sys.argv[3]) if len(sys.argv) > 3 else int(len(sessions) * 0.75)
train = sessions[:cut]
test = Utils.filter_sessions(sessions[cut:], Utils.get_unique_queries(train))
out = {"train_sessions": len(train), "test_sessions": len(test), "models": {}}
for name in sys.argv[2].split(","):
    model = globals()[name]()
    t0 = time.time()
    model.train(train)
    ll = LogLikelihood().evaluate(model, test)
    perp, by_rank = Perplexity().evaluate(model, test)
    out["models"][name] = {"log_likelihood": ll, "perplexity": perp, "perplexity_by_rank": by_rank,
                           "seconds": time.time() - t0}
print(json.dumps(out))
"""


def export_sessions(s, path: Path) -> None:
    """One line per session in file order: query, comma-separated documents, comma-separated 0/1 clicks."""
    q = s.pair_keys["query_id"].astype(str).to_numpy()[s.pairs[:, 0]]
    docs = s.pair_keys["doc_id"].astype(str).to_numpy()[s.pairs]
    path.write_text("".join(f"{a}\t{','.join(d)}\t{','.join(map(str, c.astype(int)))}\n"
                            for a, d, c in zip(q, docs, s.clicks)))


def _pyclick_tails(label: str, sessions, test=None) -> dict:
    """Our CM with PyClick's conditional probabilities, or our DBN or CCM fitted by PyClick's EM instead of
    maximum likelihood: the places where they differ."""
    import time as _time

    from ultr_core.clickmodels import cascade_ml, models
    from ultr_core.clickmodels.compare import train_test
    from ultr_core.clickmodels.evaluation import scores
    train, test, _ = train_test(sessions, name="log", split=0.75, test=test)
    t0 = _time.perf_counter()
    model = (models.CM(pyclick_conditional=True) if label == "CM"
             else getattr(cascade_ml, label)(pyclick=True)).fit(train.compress())
    return {**scores(model, test.compress()), "seconds": _time.perf_counter() - t0}


def main():
    from ultr_core.clickmodels.compare import compare_click_models
    from ultr_core.clickmodels.outofcore import read_sessions
    from ultr_core.clickmodels.registry import CLICK_MODELS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log")
    ap.add_argument("--format")
    ap.add_argument("--pyclick", default="/tmp/pyclick")
    ap.add_argument("--python", default="/tmp/pyclick_venv/bin/python")
    ap.add_argument("--models", default=None, help="comma-separated labels (default: all ten)")
    ap.add_argument("--test", default=None, help="a test log (default: the last 25 %% of LOG)")
    a = ap.parse_args()
    sessions = read_sessions(a.log, a.format, a.log)
    test = read_sessions(a.test, a.format, a.test) if a.test else None
    t0 = time.perf_counter()
    specs = [s for s in CLICK_MODELS if a.models is None or s.label in a.models.split(",")]
    ours = compare_click_models(sessions, a.log, models=[s.key for s in specs], test=test,
                                prior="pyclick").to_json()   # PyClick's prior, as PyClick fits
    t_ours = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "sessions.tsv"
        export_sessions(sessions, table)
        cut = []
        if test is not None:
            export_sessions(test, Path(tmp) / "test.tsv")
            table.write_text(table.read_text() + (Path(tmp) / "test.tsv").read_text())
            cut = [str(sessions.n_sessions)]
        t0 = time.perf_counter()
        proc = subprocess.run([a.python, "-c", DRIVER, str(table), ",".join(s.label for s in specs), *cut],
                              capture_output=True, text=True, env={"PYTHONPATH": a.pyclick})
        t_theirs = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(proc.stderr[-2000:])
    theirs = json.loads(proc.stdout)
    print(f"{a.log}: train {ours['train_sessions']:,} / {theirs['train_sessions']:,} sessions, test "
          f"{ours['test_sessions']:,} / {theirs['test_sessions']:,} (ours / PyClick); wall: ours {t_ours:.2f} s "
          f"for all models, PyClick {t_theirs:.1f} s\n")
    print("| model | log-likelihood (ours) | (PyClick) | perplexity (ours) | (PyClick) | max abs. diff | seconds "
          "(ours) | (PyClick) |\n|---|---:|---:|---:|---:|---:|---:|---:|")
    rows = [(s.label, ours["models"][s.key], theirs["models"][s.label]) for s in specs]
    if "CM" in theirs["models"]:
        rows.append(("CM with PyClick's conditional", _pyclick_tails("CM", sessions, test), theirs["models"]["CM"]))
    for label in ("DBN", "CCM"):
        if label in theirs["models"]:
            rows.append((f"{label} with PyClick's EM", _pyclick_tails(label, sessions, test), theirs["models"][label]))
    for label, o, p in rows:
        diff = max(abs(o["log_likelihood"] - p["log_likelihood"]), abs(o["perplexity"] - p["perplexity"]))
        print(f"| {label} | {o['log_likelihood']:.6f} | {p['log_likelihood']:.6f} | {o['perplexity']:.6f} | "
              f"{p['perplexity']:.6f} | {diff:.1e} | {o['seconds']:.3f} | {p['seconds']:.2f} |")


if __name__ == "__main__":
    main()
