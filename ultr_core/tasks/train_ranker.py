"""Train rankers on clicks: simulate a click log on a data set, fit one algorithm for each seed, and report its test
metrics and its estimate of the observation curve beside the truth (``python -m ultr_core train``); or train several
methods side by side on one log (the Train page).

:func:`train_ranker` takes a :class:`TrainOptions` and returns a :class:`TrainedRanker` that owns its JSON and its
text; a fit whose metrics or observation estimate are not finite numbers is named in ``diverged``.
:func:`train_methods_jobs` takes a :class:`MethodsOptions` and returns one pooled job per method.

>>> TrainOptions(seeds=0)
Traceback (most recent call last):
...
ultr_core.errors.ConfigError: --seeds: must be 1 to 100, got 0
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ultr_core.algorithms.config import TrainConfig
from ultr_core.errors import ConfigError
from ultr_core.simulation.clickmodel import ClickModelConfig

__all__ = ["TrainOptions", "TrainedRanker", "train_ranker", "diverged", "MethodsOptions", "train_methods_jobs"]

#: the largest seed numpy's generators take
MAX_SEED = 2 ** 32 - 1


@dataclass(frozen=True, kw_only=True)
class TrainOptions:
    """What to simulate and train (each field is the ``train`` flag of the same name; errors name the flag).  Checked
    on creation.  ``train.seed`` is the first seed; seed s simulates its log with seed s too."""

    dataset: str = "synthetic"                                  #: synthetic, mq2008:PATH[:FOLD], yahoo:PATH, …
    click: ClickModelConfig = field(default_factory=ClickModelConfig)   #: the simulated users
    train: TrainConfig = field(default_factory=TrainConfig)     #: the algorithm and its hyper-parameters
    sessions: int = 20_000                                      #: simulated sessions
    seeds: int = 1                                              #: seeds train.seed … train.seed + seeds − 1
    data_seed: int = 0                                          #: the generated data set's seed

    def __post_init__(self):
        if not 1 <= self.seeds <= 100:
            raise ConfigError("--seeds", f"must be 1 to 100, got {self.seeds}")
        last = self.train.seed + self.seeds - 1
        if last > MAX_SEED:                         # checked before any seed runs: none is discarded
            raise ConfigError("--seeds", f"seeds {self.train.seed} to {last:,} pass the largest seed "
                                         f"{MAX_SEED:,}; start lower or run fewer")
        if self.train.device == "cuda":
            import torch
            if not torch.cuda.is_available():
                raise ConfigError("--device", "cuda was asked for, but torch sees no CUDA device here; use auto or "
                                              "cpu")


def diverged(run: dict) -> str | None:
    """Why a run's fit is not usable — a metric or an estimated observation that is not a finite number (a diverged
    or collapsed model, e.g. SGD at lr = 10) — or None."""
    bad = [k for k, v in run["metrics"].items() if v is None or not np.isfinite(v)]
    obs = run.get("observation")
    if obs is not None and not np.isfinite(np.asarray(obs, dtype=float)).all():
        bad.append("observation")
    return f"non-finite {', '.join(bad)}: the fit diverged (lower lr, clip_norm or max_weight)" if bad else None


@dataclass(frozen=True)
class TrainedRanker:
    """The result of :func:`train_ranker`: one run per seed (:func:`~ultr_core.studies.experiment.run_experiment`'s
    result: metrics on the test split, the observation estimate beside the truth, the spec) and the options."""

    runs: tuple
    options: TrainOptions

    @property
    def seeds(self) -> list[int]:
        return [self.options.train.seed + i for i in range(len(self.runs))]

    @property
    def diverged(self) -> list[int]:
        """The seeds whose fit diverged."""
        return [s for s, run in zip(self.seeds, self.runs) if diverged(run)]

    def payload(self):
        """One JSON-ready object per seed (one object alone for one seed): the CLI's ``--json``."""
        out = [{"seed": s, "diverged": diverged(r), "metrics": r["metrics"], "config": r["spec"],
                "algorithm": r["algorithm"], "observation": r["observation"],
                "true_observation": r["true_observation"]} for s, r in zip(self.seeds, self.runs)]
        return out[0] if len(out) == 1 else out

    def to_json(self) -> str:
        from ultr_core.logs.outputs import json_text
        return json_text(self.payload())

    def lines(self) -> list[str]:
        """The result as the CLI prints it."""
        o, first = self.options, self.runs[0]
        t = o.train
        lines = [f"{first['algorithm']} on {o.dataset} ({o.sessions:,} sessions, clicks from the {t.clicks}"
                 f"{'' if t.clicks == 'log' else ' simulation'}) — test split:"]
        if t.algorithm.startswith("lbd") and (t.lbd_lambda is None or t.lbd_t is None):
            from ultr_core.algorithms.config import lbd_table3
            lam, tt = lbd_table3(o.click.coupling, t.model)
            lines.append(f"  LBD λ = {t.lbd_lambda if t.lbd_lambda is not None else lam:g}, "
                         f"t = {t.lbd_t if t.lbd_t is not None else tt:g} (paper's Table 3 for η_c = "
                         f"{o.click.coupling:g} where not set)")
        if len(self.runs) == 1:
            return lines + [f"  {k:10s} {v:.4f}" for k, v in first["metrics"].items()]
        keys = list(first["metrics"])
        lines.append("  seed  " + "  ".join(f"{k:>8s}" for k in keys))
        lines += [f"  {s:4d}  " + "  ".join(f"{r['metrics'][k]:8.4f}" for k in keys)
                  for s, r in zip(self.seeds, self.runs)]
        lines.append("  mean  " + "  ".join(f"{np.mean([r['metrics'][k] for r in self.runs]):8.4f}" for k in keys))
        return lines


def train_ranker(options: TrainOptions | None = None, *, on_step=None, stop=None) -> TrainedRanker:
    """Simulate and train each seed of ``options`` (module docstring); ``on_step(record)`` follows each fit's
    training history, ``stop`` (a threading.Event) ends the current fit early."""
    from ultr_core.studies.experiment import ExperimentSpec, run_experiment
    o = options or TrainOptions()
    runs = []
    for seed in range(o.train.seed, o.train.seed + o.seeds):
        spec = ExperimentSpec(dataset=o.dataset, click=o.click, train=replace(o.train, seed=seed),
                              n_sessions=o.sessions, seed=seed, data_seed=o.data_seed)
        runs.append(run_experiment(spec, on_step=on_step, stop=stop))
    return TrainedRanker(tuple(runs), o)


#: the reference methods trained beside the chosen ones: the floor (raw clicks) and the ceiling (true labels)
REFERENCES = ("naive", "oracle")


@dataclass(frozen=True, kw_only=True)
class MethodsOptions:
    """Several methods trained side by side on one log (the Train page): the algorithm keys, Naive and Oracle as
    references unless chosen or turned off, the optimisation settings every method shares (``train``: model, lr,
    steps, seed, clicks; its ``algorithm`` is ignored) and the methods' hyper-parameters as (TrainConfig field, value)
    pairs — each method takes those its record reads (``params``).  Checked on creation.

    >>> o = MethodsOptions(algorithms=("dla", "naive"), train=TrainConfig(steps=300))
    >>> [(c.algorithm, c.steps, c.eval_every) for c in o.configs()]
    [('dla', 300, 10), ('naive', 300, 10), ('oracle', 300, 10)]
    >>> MethodsOptions(algorithms=("dlaa",))
    Traceback (most recent call last):
    ...
    ultr_core.errors.ConfigError: algorithms: 'dlaa' is not an algorithm here
    """

    algorithms: tuple
    references: bool = True
    train: TrainConfig = field(default_factory=TrainConfig)
    hyper: tuple = ()

    def __post_init__(self):
        from ultr_core.algorithms.config import ALGORITHMS
        from ultr_core.algorithms.specs import SPECS_BY_KEY
        for a in self.algorithms:
            if a not in ALGORITHMS:
                raise ConfigError("algorithms", f"{str(a)[:40]!r} is not an algorithm here")
        fields = {f for spec in SPECS_BY_KEY.values() for f in spec.params}
        for f, _ in self.hyper:
            if f not in fields:
                raise ConfigError("hyper", f"{str(f)[:40]!r} is no method's hyper-parameter")

    @property
    def added_references(self) -> tuple:
        """The reference keys trained besides the chosen methods."""
        return tuple(r for r in REFERENCES if self.references and r not in self.algorithms)

    def configs(self) -> list[TrainConfig]:
        """One configuration per chosen method, then the added references: the shared settings, an evaluation every
        ``max(10, steps // 30)`` steps (about 30 points per curve) and each method's own hyper-parameters."""
        from ultr_core.algorithms.specs import SPECS_BY_KEY
        every = max(10, self.train.steps // 30)
        hyper = dict(self.hyper)
        out = [replace(self.train, algorithm=a, eval_every=every,
                       **{f: v for f, v in hyper.items() if f in SPECS_BY_KEY[a].params}) for a in self.algorithms]
        return out + [replace(self.train, algorithm=r, eval_every=every) for r in self.added_references]


def train_methods_jobs(options: MethodsOptions, *, noise: float | None, spec: str | None = None, log,
                       dataset=None) -> list[tuple]:
    """One pooled job per configuration of ``options`` on ``log`` (:func:`~ultr_core.studies.experiment.train_jobs`:
    a log with a ``spec`` travels as the spec and identical runs are shared), after checking that the log can train
    every method (a top-k selection method needs a log with unshown candidates) — before anything runs, so earlier
    results stay."""
    from ultr_core.algorithms.topk_selection import check_selection_log
    from ultr_core.studies.experiment import train_jobs
    configs = options.configs()
    check_selection_log(configs, log)
    return train_jobs(configs, noise, spec=spec, log=log, dataset=dataset)
