"""Experiments: one run (simulate → fit → evaluate) and grids of runs over seeds.

:class:`ExperimentSpec` holds everything a run depends on; :func:`run_experiment` executes one;
:func:`run_grid` expands a base spec over a grid of dotted keys (``"click.coupling"``,
``"train.lbd_lambda"``, ``"n_sessions"`` …) × seeds, runs the cells in parallel processes with
joblib (``backend="loky"`` locally; ``"dask"`` or ``"ray"`` when those are installed and a
cluster is configured) and returns a tidy DataFrame.  With ``cache_dir`` each finished cell is
written as JSON under the hash of its spec, and a re-run resumes from the cache.
"""
from __future__ import annotations

import functools
import itertools
import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from ultr_core.algorithms import TrainConfig
from ultr_core.algorithms.specs import ALGORITHM_SPECS
from ultr_core.constraints import Rule, validate
from ultr_core.errors import ConfigError
from ultr_core.simulation.clickmodel import ClickModelConfig, binary_rule
from ultr_core.simulation.params import PARAMS
from ultr_core.simulation.simulated import simulate_log

__all__ = ["ExperimentSpec", "run_experiment", "run_grid", "expand_grid", "check_cells", "SELECTION_METHODS",
           "train_many", "train_spec", "train_jobs", "simulated", "grid_job", "live_observation_curves", "steps_done",
           "training_progress"]



@dataclass(frozen=True)
class ExperimentSpec:
    dataset: str = "synthetic"
    click: ClickModelConfig = field(default_factory=ClickModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    n_sessions: int = 20_000
    seed: int = 0               #: seeds the click simulation and the training
    data_seed: int = 0          #: seeds generated datasets (fixed across seeds of a comparison)

    #: the log's fields as the simulation schema declares them (as :class:`LogSpec`'s), the rest by type
    CONSTRAINTS = {"dataset": [Rule(lambda d: isinstance(d, str), "a data set name")],
                   "click": [Rule(lambda c: isinstance(c, ClickModelConfig), "a ClickModelConfig")],
                   "train": [Rule(lambda t: isinstance(t, TrainConfig), "a TrainConfig")],
                   **{p.field: list(p.domain) for p in PARAMS if not p.on_click}}

    def __post_init__(self):
        validate(self)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["train"]["hidden"] = list(self.train.hidden)
        return d

    def key(self) -> str:
        """The cell's cache key: the code version (sources that decide the numbers) and the spec."""
        from ultr_core.studies.resultcache import cell_key
        return cell_key(json.dumps(self.to_dict(), sort_keys=True))

    def with_value(self, dotted: str, value) -> "ExperimentSpec":
        """Set a dotted field (``click.eta``, ``train.lr``, ``n_sessions``); several comma-separated
        fields receive the same value (e.g. ``train.ips_eta,train.cld_rho_eta``)."""
        if "," in dotted:
            spec = self
            for part in dotted.split(","):
                spec = spec.with_value(part.strip(), value)
            return spec
        head, _, tail = dotted.partition(".")
        if head in ("click", "train") and tail:
            sub = getattr(self, head)
            if tail not in sub.__dataclass_fields__:
                raise ConfigError(dotted, f"{head} has no field {tail!r}")
            return replace(self, **{head: replace(sub, **{tail: value})})
        if head not in self.__dataclass_fields__ or tail:
            raise ConfigError(dotted, "unknown grid key (use n_sessions, dataset, click.<field> or train.<field>)")
        return replace(self, **{head: value})


def run_experiment(spec: ExperimentSpec, *, on_step=None, stop=None, data=None) -> dict:
    """Simulate, fit and evaluate one spec.  ``data`` = (dataset, simulator, log) reuses a
    simulation.  Returns metrics on the test split, the history, the observation estimate
    against the truth and the spec."""
    ds, sim, log = data if data is not None else simulate_log(spec.dataset, spec.click, n_sessions=spec.n_sessions,
                                                               seed=spec.seed, data_seed=spec.data_seed)
    train = spec.train if spec.train.seed == spec.seed else replace(spec.train, seed=spec.seed)
    from ultr_core.algorithms import (  # torch loads here, not when a page imports this module
        evaluate,
        fit,
    )
    result = fit(log, ds, train, on_step=on_step, stop=stop)
    metrics = evaluate(result, ds.test, noise=spec.click.noise, max_label=ds.max_label,
                       binary=binary_rule(spec.click.relevance))
    metrics["valid_ndcg@10"] = evaluate(result, ds.valid, noise=None)["ndcg@10"]     # for model selection
    est = result.observation()
    from ultr_core.algorithms.data import session_data
    truth = session_data(log).true_propensity()
    return {"metrics": metrics, "history": result.history, "stopped": result.stopped,
            "observation": None if est is None else [float(x) for x in est],
            "true_observation": None if truth is None else [float(x) for x in truth / truth[0]],
            "spec": spec.to_dict(), "algorithm": train.display_name}


def expand_grid(base: ExperimentSpec, grid: dict, seeds) -> list[tuple[dict, ExperimentSpec]]:
    """Every combination of grid values × seeds as (cell values, spec)."""
    keys = list(grid)
    cells = []
    for values in itertools.product(*(grid[k] for k in keys)):
        spec = base
        for k, v in zip(keys, values):
            spec = spec.with_value(k, v)
        for s in seeds:
            cells.append(({**dict(zip(keys, values)), "seed": s}, replace(spec, seed=int(s))))
    return cells


#: methods that need candidates below a top-k cut-off (they model the selection)
SELECTION_METHODS = tuple(s.key for s in ALGORITHM_SPECS if s.needs_topk)     # ultr_core.algorithms.specs


def check_cells(cells) -> None:
    """Refuse a grid before it runs when a cell cannot run: a selection-bias method needs a
    top-k cut-off below the dataset's list length (else every candidate is shown).  The
    message names the first such cell."""
    lengths: dict = {}
    for values, spec in cells:
        if spec.train.algorithm not in SELECTION_METHODS:
            continue
        key = (spec.dataset, spec.data_seed)
        if key not in lengths:
            import numpy as np

            from ultr_core.data.sources import load_dataset
            offsets = load_dataset(spec.dataset, spec.data_seed).train.offsets
            lengths[key] = int(np.diff(offsets).max()) if len(offsets) > 1 else 0
        k = spec.click.topk
        if k is None or k >= lengths[key]:
            where = ", ".join(f"{name}={v}" for name, v in values.items() if name != "seed")
            raise ConfigError("click.topk", f"{spec.train.display_name} models top-k selection, but the run with "
                                            f"{where or 'these settings'} shows {'all' if k is None else k} of "
                                            f"{lengths[key]} candidates: choose k below {lengths[key]}")


def _run_cell_safe(spec: ExperimentSpec, cache_dir, data=None) -> dict:
    """:func:`_run_cell`, with a failure recorded in the result (``error``) instead of raised, so
    the finished cells of a grid are never thrown away."""
    try:
        return _run_cell(spec, cache_dir, data)
    except (ConfigError, ValueError, FloatingPointError, RuntimeError) as e:
        return {"metrics": {}, "observation": None, "true_observation": None, "final_step": 0, "history": [],
                "error": f"{type(e).__name__}: {str(e)[:300]}"}


def _run_cell(spec: ExperimentSpec, cache_dir, data=None) -> dict:
    """One cell, from the result cache when it holds it; ``data()`` (optional) returns the cell's simulated
    log (dataset, simulator, log), called only when the cell must run."""
    from ultr_core.studies import resultcache
    if cache_dir is not None:
        cached = resultcache.load(cache_dir, spec.key())      # None when absent, corrupt or edited
        if cached is not None:
            return cached
    out = run_experiment(spec, data=None if data is None else data())
    out = {"metrics": out["metrics"], "observation": out["observation"],
           "true_observation": out["true_observation"], "final_step": out["history"][-1]["step"]
           if out["history"] else 0, "history": [{k: v for k, v in h.items() if k != "observation"}
                                                 for h in out["history"]]}
    if cache_dir is not None:
        resultcache.store(cache_dir, spec.key(), json.loads(json.dumps(out, default=float)))
    return out


def _row(values: dict, spec: ExperimentSpec, out: dict, keep_history: bool) -> dict:
    row = {**values, "algorithm": spec.train.display_name, **out["metrics"],
           "observation": out["observation"], "true_observation": out["true_observation"],
           "error": out.get("error")}
    if keep_history:
        row["history"] = out["history"]
    return row


def run_grid(base: ExperimentSpec, grid: dict, *, seeds=(0, 1, 2), n_jobs: int = 1, backend: str = "loky",
             cache_dir=None, progress=None, stop=None, keep_history: bool = False, on_cell=None) -> pd.DataFrame:
    """Run ``base`` over ``grid`` × ``seeds``; one row per cell with its grid values, seed and
    test metrics (plus the observation estimate as a list).  ``progress(done, total)`` is called
    as cells finish and ``on_cell(row)`` with each finished cell's row (pages draw partial
    results); ``stop`` (threading.Event) skips the cells not yet started."""
    cells = expand_grid(base, grid, seeds)
    check_cells(cells)
    if cache_dir is not None:
        Path(cache_dir).mkdir(parents=True, exist_ok=True)
    from ultr_core.studies.backends import check_backend
    check_backend(backend)
    if progress is not None:
        progress(0, len(cells))
    report = (lambda values, spec, out: on_cell(_row(values, spec, out, keep_history))) if on_cell else None
    run = _run_sequential if n_jobs == 1 or backend == "sequential" else _run_parallel
    outputs = run(cells, cache_dir, stop, report, progress, backend, n_jobs)
    return pd.DataFrame([_row(values, spec, out, keep_history) for (values, spec), out in zip(cells, outputs)
                         if out is not None])                   # None: not run (stopped)


def _simulation_key(spec: ExperimentSpec) -> tuple:
    """What a cell's simulated log depends on: cells equal here share one log."""
    return spec.dataset, spec.click, spec.n_sessions, spec.seed, spec.data_seed


def _run_sequential(cells, cache_dir, stop, report, progress, backend, n_jobs) -> list:
    """The cells one after another, grouped by their simulated log (the order its first cell has in the
    grid): every method and setting that shares a log (dataset, clicks, sessions, seed) is trained on one
    simulation of it, held while its group runs.  Outputs are in grid order (None: stopped before it ran)."""
    first: dict = {}
    for i, (_, spec) in enumerate(cells):
        first.setdefault(_simulation_key(spec), i)
    order = sorted(range(len(cells)), key=lambda i: (first[_simulation_key(cells[i][1])], i))
    outputs, held = [None] * len(cells), {}          # held: the current group's log, one at a time

    def log_of(spec):
        def get():
            key = _simulation_key(spec)
            if key not in held:
                held.clear()                         # the previous group's log is released
                held[key] = simulate_log(spec.dataset, spec.click, n_sessions=spec.n_sessions, seed=spec.seed,
                                         data_seed=spec.data_seed)
            return held[key]
        return get

    for n, i in enumerate(order):
        if stop is not None and stop.is_set():
            break
        values, spec = cells[i]
        outputs[i] = _run_cell_safe(spec, cache_dir, log_of(spec))
        if report is not None:
            report(values, spec, outputs[i])
        if progress is not None:
            progress(n + 1, len(cells))
    return outputs


def _run_parallel(cells, cache_dir, stop, report, progress, backend, n_jobs) -> list:
    """Cells in batches of ``n_jobs`` so that ``stop`` and ``progress`` stay responsive."""
    from joblib import Parallel, delayed, parallel_config
    outputs = []
    with parallel_config(backend=backend, n_jobs=n_jobs):
        for start in range(0, len(cells), max(1, n_jobs)):
            if stop is not None and stop.is_set():
                break
            chunk = cells[start:start + max(1, n_jobs)]
            done = Parallel()(delayed(_run_cell_safe)(spec, cache_dir) for _, spec in chunk)
            outputs += done
            if report is not None:
                for (values, spec), out in zip(chunk, done):
                    report(values, spec, out)
            if progress is not None:
                progress(len(outputs), len(cells))
    return outputs


def grid_job(base: ExperimentSpec, grid: dict, seeds, *, report=None, stop=None, n_jobs: int = 2,
             cache_dir=None, keep_history: bool = False) -> pd.DataFrame:
    """:func:`run_grid` with progress reported as {"done", "total"} records and every finished
    cell as a {"cell": row} record (the pages' job; they draw partial grids live)."""
    prog = (lambda d, t: report({"done": d, "total": t})) if report else None
    cell = (lambda row: report({"cell": row})) if report else None
    return run_grid(base, grid, seeds=seeds, n_jobs=n_jobs, cache_dir=cache_dir, progress=prog, stop=stop,
                    keep_history=keep_history, on_cell=cell)


def train_many(log, dataset, configs, *, report=None, stop=None, noise: float | None = 0.1) -> dict:
    """Fit several configurations one after another on one log (the Train page's job).
    ``report`` receives every history record tagged with its algorithm's display name."""
    from ultr_core.algorithms import evaluate, fit
    results = {}
    for cfg in configs:
        if stop is not None and stop.is_set():
            break
        name = cfg.display_name
        res = fit(log, dataset, cfg, on_step=(lambda rec, n=name: report({"algorithm": n, **rec})) if report else None,
                  stop=stop)
        obs = res.observation()
        binary = binary_rule(log.meta.get("click_model", {}).get("relevance", "graded"))
        results[name] = {"metrics": evaluate(res, dataset.test, noise=noise, max_label=dataset.max_label,
                                             binary=binary),
                         "observation": None if obs is None else [float(x) for x in obs], "stopped": res.stopped,
                         "steps": res.history[-1]["step"] if res.history else 0}
    return results


@functools.lru_cache(maxsize=4)
def simulated(spec: str):
    """``LogSpec.parse(spec).simulate()`` once per process for the last few specs (a pooled
    worker trains several runs on the same log; the spec string is the log's content key)."""
    from ultr_core.simulation.logspec import LogSpec
    return LogSpec.parse(spec).simulate()


def train_jobs(configs, noise: float | None, *, spec: str | None = None, log=None, dataset=None) -> list[tuple]:
    """One pooled job per configuration, as ``(key, fn, args, kwargs)`` for
    :meth:`ultr_core.app.jobpool.JobPool.submit`: the methods of one request train side by side on
    the pool's workers, and a run (log spec, configuration, noise) already made for anyone — a
    Naive or Oracle reference, a method kept when another is added — is shared, not repeated.
    A log without a spec (an upload) travels itself and is never shared (key None).

    >>> jobs = train_jobs([TrainConfig("naive"), TrainConfig("dla")], 0.1, spec="synthetic:50")
    >>> [(k[0], k[1], fn.__name__, args[0]) for k, fn, args, kw in jobs]
    [('train', 'synthetic:50', 'train_spec', 'synthetic:50'), ('train', 'synthetic:50', 'train_spec', 'synthetic:50')]
    >>> jobs[0][0] == train_jobs([TrainConfig("naive")], 0.1, spec="synthetic:50")[0][0]
    True
    """
    if spec is not None:
        return [(("train", spec, repr(c), noise), train_spec, (spec, [c]), {"noise": noise}) for c in configs]
    return [(None, train_many, (log, dataset, [c]), {"noise": noise}) for c in configs]


def train_spec(spec: str, configs, *, report=None, stop=None, noise: float | None = 0.1) -> dict:
    """:func:`train_many` on the log a :class:`~ultr_core.simulation.logspec.LogSpec` string describes — the
    Playground's pooled job: only the short spec travels to the worker, which simulates the log
    itself (deterministic: the same rows the page shows)."""
    from ultr_core.simulation.clickmodel import signal_curve
    ds, _, log = simulated(spec)
    return with_curve_fit(train_many(log, ds, configs, report=report, stop=stop, noise=noise), signal_curve(log))


def with_curve_fit(results: dict, truth) -> dict:
    """``results`` (:func:`train_many`'s) with ``curve_fit`` — minus the mean absolute difference between each method's
    final observation curve and ``truth``, both ÷ position 1 (:func:`observation_curve_error`) — in the metrics of
    every method that has a curve, and ``flat_curve_fit`` (the same for a flat curve) in every method's metrics;
    unchanged without a truth.

    >>> r = with_curve_fit({"DLA": {"metrics": {}, "observation": [1.0, 0.5]}}, [1.0, 0.6])
    >>> {k: round(v, 3) for k, v in r["DLA"]["metrics"].items()}
    {'curve_fit': -0.05, 'flat_curve_fit': -0.2}
    """
    from ultr_core.evaluation.metrics import observation_curve_error
    if truth is None:
        return results
    truth = np.asarray(truth, np.float64)
    flat = -observation_curve_error(np.ones_like(truth), truth, relative=False)
    for v in results.values():
        obs = v.get("observation")
        if obs is not None and len(obs):
            n = min(len(obs), len(truth))
            v["metrics"]["curve_fit"] = -observation_curve_error(np.asarray(obs[:n]), truth[:n], relative=False)
        v["metrics"]["flat_curve_fit"] = flat
    return results


def steps_done(records: list[dict]) -> int:
    """Training steps finished so far over all algorithms of :func:`train_many`'s tagged history.

    >>> steps_done([{"algorithm": "DLA", "step": 10}, {"algorithm": "DLA", "step": 20},
    ...             {"algorithm": "LBD", "step": 10}])
    30
    """
    last = {}
    for r in records:
        last[r["algorithm"]] = max(last.get(r["algorithm"], 0), r["step"])
    return sum(last.values())


def training_progress(job, steps_per_job: int) -> tuple[int, int]:
    """``(done, total)`` training steps of a pooled request — a job handle or a group of them
    (``.jobs``), each training one configuration for ``steps_per_job`` steps (:func:`train_jobs`; the
    Playground: one method of one seed).  A finished job counts in full (a run served from the result
    cache reports no steps); an unfinished one by :func:`steps_done` of its own records.  Counted per
    job: the records of different seeds carry the same method names, so :func:`steps_done` over the
    whole request would stop at one seed's steps.

    >>> class Job:                                   # a finished (cached) job and a running one
    ...     def __init__(self, status, steps):
    ...         self.status, self.records = status, [{"algorithm": "DLA", "step": s} for s in steps]
    >>> class Group:
    ...     jobs = [Job("done", []), Job("running", [10, 20])]
    >>> training_progress(Group(), 300)
    (320, 600)
    """
    jobs = job.jobs if hasattr(job, "jobs") else [job]
    done = sum(steps_per_job if j.status == "done" else min(steps_done(j.records), steps_per_job) for j in jobs)
    return done, steps_per_job * len(jobs)


def live_observation_curves(records: list[dict], truth) -> dict:
    """The latest observation estimate of every algorithm in ``records`` (:func:`train_many`'s
    tagged history) and ``truth``, cut to a common length — what the live observation chart
    draws.  Empty without a truth.

    >>> live_observation_curves([{"algorithm": "DLA", "observation": [1.0, 0.5, 0.3]}], [1.0, 0.6])
    {'DLA': [1.0, 0.5], 'truth': [1.0, 0.6]}
    """
    if truth is None:
        return {}
    latest = {r["algorithm"]: r["observation"] for r in records if r.get("observation")}
    n = min(len(truth), *(len(v) for v in latest.values())) if latest else len(truth)
    return {**{k: v[:n] for k, v in latest.items()}, "truth": truth[:n]}
