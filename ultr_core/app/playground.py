"""The teaching playground: one set of knobs → a simulated click log, its identifiability
verdict, and Naive, the chosen methods and Oracle trained on it — small enough that a run
finishes in seconds on a laptop CPU.

The knobs are the click model's (η, ε, top-k, η_c, contexts, shuffled sessions) and a few
training settings; :class:`PlaygroundSettings` turns them into a reproducible
:class:`~ultr_core.simulation.logspec.LogSpec` and a list of :class:`~ultr_core.algorithms.TrainConfig`
(Naive and Oracle first: the floor and the ceiling every method is read against, drawn before
the methods' curves grow between them).
:data:`PRESETS` are the stories a teacher tells with it.

>>> s = PlaygroundSettings(eta=2.0)
>>> s.log_spec().to_string()
'synthetic:300/eta=2.0/shuffle=0.1/sessions=10000/seed=0'
>>> [c.display_name for c in s.train_configs()]
['Naive', 'Oracle', 'DLA', 'LBD']
>>> PlaygroundSettings(steps=5)
Traceback (most recent call last):
...
ultr_core.errors.ConfigError: steps: must be a whole number from 50 to 3,000, got 5
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ultr_core.algorithms import TrainConfig
from ultr_core.algorithms.config import ALGORITHMS
from ultr_core.algorithms.specs import ALGORITHM_SPECS, SPECS_BY_KEY
from ultr_core.app.igverdict import WEAK_RULE, certainty_rows, unshown_candidates, verdict  # noqa: F401  (re-exported)
from ultr_core.constraints import Interval, Rule, validate
from ultr_core.errors import ConfigError
from ultr_core.evaluation.claims import FLAT, Claim, check_claims  # noqa: F401  (the presets' claims; re-exported)
from ultr_core.simulation.clickmodel import ClickModelConfig
from ultr_core.simulation.logspec import LogSpec

__all__ = ["PlaygroundSettings", "Preset", "Claim", "PRESETS", "PRESET_SEEDS", "preset_runs", "check_claims",
           "story_settings", "score_guess", "METHODS", "verdict", "log_view", "LogView", "algorithm_names",
           "warm_worker", "seed_runs", "seed_table"]

#: the methods a playground run may train besides its references (``playground`` in the algorithm table)
METHODS = tuple(s.key for s in ALGORITHM_SPECS if s.playground)
#: the floor and ceiling every run trains first (``family == "reference"``: Naive, Oracle)
REFERENCES = tuple(s.key for s in ALGORITHM_SPECS if s.reference)
#: most sessions a playground log may hold (a run must stay interactive)
MAX_SESSIONS = 100_000
#: most seeds one playground request may train (each seed: a fresh log and initialisation)
MAX_SEEDS = 5
#: seeds a preset runs (0–4, the seeds its claims are checked over in tests and docs)
PRESET_SEEDS = 5


@dataclass(frozen=True)
class PlaygroundSettings:
    """Every knob of the playground (validated on construction)."""

    dataset: str = "synthetic:300"     #: ``synthetic[:N]`` or a data-root name (``yahoo_sample``)
    eta: float = 1.0                   #: position-bias severity η (o_p = v_p^η, eye-tracking v)
    noise: float = 0.1                 #: click noise ε
    topk: int | None = None            #: only the first k candidates are shown (None: all)
    coupling: float = 0.0              #: LBD coupling level η_c (observation depends on the document)
    contexts: int = 0                  #: context types of a contextual PBM (0: off)
    shuffle: float = 0.1               #: share of sessions shown in a random order (exploration)
    blocks: int = 1                    #: shuffle only within this many position blocks (K → K IG components)
    user_model: str = "pbm"            #: the user model clicks are drawn from (PBM: the papers' setting)
    continuation: float | None = None  #: its γ (None: the model's own; trust bias: ε⁻_p = γ/p)
    methods: tuple = ("dla", "lbd")    #: trained between the Naive and Oracle references
    steps: int = 300
    lr: float = 0.01
    sessions: int = 10_000
    seed: int = 0                      #: the first seed
    seeds: int = 1                     #: seeds seed, seed + 1, … trained (a fresh log and initialisation each)
    extra: tuple = ()                  #: (parameter, value) of simulation parameters an extension's knobs set

    #: what the Playground's own fields accept (:mod:`ultr_core.constraints`); the click-model fields are checked
    #: by :class:`ClickModelConfig` and the data set and seed by :class:`LogSpec` (``click()``, ``log_spec()`` below)
    CONSTRAINTS = {"steps": [Interval(int, 50, 3_000)], "sessions": [Interval(int, 1_000, MAX_SESSIONS)],
                   "lr": [Interval(float, 0, 1, closed="right")], "seeds": [Interval(int, 1, MAX_SEEDS)],
                   "methods": [Rule(lambda ms: all(m in METHODS for m in ms), "playground methods")],
                   "extra": [Rule(lambda e: isinstance(e, tuple) and all(len(x) == 2 for x in e),
                                  "(simulation parameter, value) pairs")]}
    #: fields another class declares (the test that every field is declared reads this)
    DELEGATED = ("dataset", "eta", "noise", "topk", "coupling", "contexts", "shuffle", "blocks", "user_model",
                 "continuation", "seed")

    def __post_init__(self):
        object.__setattr__(self, "methods", tuple(dict.fromkeys(self.methods)))
        bad = [m for m in self.methods if m not in METHODS]
        if bad:
            raise ConfigError("methods", f"{bad[0]!r} is not a playground method; choose from {', '.join(METHODS)}")
        validate(self)
        selection = [SPECS_BY_KEY[m].label for m in self.methods if SPECS_BY_KEY[m].needs_topk]
        if selection and self.topk is None:
            names = ", ".join(selection)
            raise ConfigError("methods", f"{names} model{'s' if len(selection) == 1 else ''} top-k selection: "
                                         f"choose a shown top-k (e.g. 3) or drop {names}")
        self.click()                                 # validates the click-model knobs
        self.log_spec()                              # validates dataset name and seed

    def click(self) -> ClickModelConfig:
        own = {name: getattr(self, name) for name in self.DELEGATED if name not in ("dataset", "seed")}
        return ClickModelConfig.from_values({**own, **dict(self.extra)})

    def log_spec(self) -> LogSpec:
        """The reproducible spec of the log this setting simulates (what links carry)."""
        return LogSpec(dataset=self.dataset, click=self.click(), n_sessions=self.sessions, seed=self.seed)

    def train_configs(self) -> list[TrainConfig]:
        """Naive, Oracle, then the chosen methods — the same model, steps, learning rate and seed;
        LBD's λ and t from the paper's Table 3 for this η_c."""
        names = [*REFERENCES, *[m for m in self.methods if m not in REFERENCES]]
        return [TrainConfig(algorithm=a, steps=self.steps, lr=self.lr, seed=self.seed,
                            eval_every=max(10, self.steps // 30)) for a in names]

    def seed_values(self) -> list[int]:
        """The seeds this setting trains: ``seed``, ``seed + 1``, … (``seeds`` of them)."""
        return list(range(self.seed, self.seed + self.seeds))

    def jobs(self) -> list[tuple]:
        """This setting's training runs as ``(key, fn, args, kwargs)`` for
        :meth:`ultr_core.app.jobpool.JobPool.submit_many`, one per method and seed, seed by seed
        (:func:`~ultr_core.studies.experiment.train_jobs`): the key is the run's content (log spec,
        configuration, click noise), so identical runs are shared across visitors and settings.

        >>> [(k[1], fn.__name__) for k, fn, args, kw in PlaygroundSettings(methods=("dla",)).jobs()]
        [('synthetic:300/shuffle=0.1/sessions=10000/seed=0', 'train_spec'),
        ('synthetic:300/shuffle=0.1/sessions=10000/seed=0', 'train_spec'),
        ('synthetic:300/shuffle=0.1/sessions=10000/seed=0', 'train_spec')]
        >>> [k[1][-6:] for k, *_ in PlaygroundSettings(methods=("dla",), seeds=2).jobs()]
        ['seed=0', 'seed=0', 'seed=0', 'seed=1', 'seed=1', 'seed=1']
        """
        from ultr_core.studies.experiment import train_jobs
        out = []
        for s in self.seed_values():
            one = replace(self, seed=s, seeds=1)
            out += train_jobs(one.train_configs(), one.noise, spec=one.log_spec().to_string())
        return out

    def with_(self, **changes) -> "PlaygroundSettings":
        return replace(self, **changes)


@dataclass(frozen=True)
class Preset:
    """A story: the knobs it sets (every knob the story depends on, the data included), one
    sentence that tells what to watch, its source, and the :class:`Claim` s that sentence makes —
    checked over seeds 0–4 by ``experiments/playground_presets.py`` and the tests
    (``tests/app/test_playground_presets.py``, which leaves three presets to the page tests that read their tiles'
    verdicts)."""

    name: str
    changes: dict = field(default_factory=dict)
    story: str = ""
    cite: str = ""
    claims: tuple = ()
    #: claims about the log itself, checked on :func:`~ultr_core.app.igverdict.certainty_rows` (no training)
    log_claims: tuple = ()

    def settings(self, seed: int = 0, **overrides) -> PlaygroundSettings:
        """The playground settings this preset sets (the remaining knobs at their defaults)."""
        return PlaygroundSettings(**{**self.changes, "seed": seed, **overrides})


_BASE = dict(dataset="synthetic:300", eta=1.0, noise=0.1, topk=None, coupling=0.0, contexts=0, shuffle=0.1, blocks=1)
PRESETS = [
    Preset("position bias breaks Naive", {**_BASE, "eta": 2.0, "methods": ("dla",)},
           "η = 2: users rarely look below rank 3, so raw clicks (Naive) reward the old ranker's top; DLA "
           "estimates the observation curve (nearer the truth than Naive's flat one, if rough) and divides it out.",
           "Joachims et al., WSDM 2017; Ai et al., SIGIR 2018",
           claims=(Claim("DLA", "Naive"), Claim("DLA", FLAT, "curve_fit"))),
    Preset("coupling breaks DLA, LBD holds", {**_BASE, "topk": 10, "coupling": 1.0, "sessions": 50_000,
                                              "methods": ("dla", "lbd")},
           "η_c = 1: observation depends on the document; DLA's position-only correction explains relevance away "
           "and falls below Naive, LBD stays above DLA (read the table: LBD's curve is no per-position estimate).",
           "Chen et al., LBD, NeurIPS 2022, Fig. 3a",
           claims=(Claim("Naive", "DLA", margin=0.02), Claim("LBD", "DLA", margin=0.02))),
    Preset("top-k cut hides relevance", {**_BASE, "topk": 3, "shuffle": 0.0, "methods": ("dla", "cld")},
           "Only the top 3 of 10 candidates are shown: documents below the cut never get a click, so every "
           "click-trained method stays well below Oracle.",
           "CLD, Table 2 and Fig. 4",
           claims=(Claim("Oracle", "DLA", margin=0.02), Claim("Oracle", "CLD", margin=0.02))),
    Preset("two components: features bridge them", {**_BASE, "shuffle": 0.3, "blocks": 2, "methods": ("dla",)},
           "Positions 1–5 and 6–10 never swap documents: the IG splits in two and clicks alone cannot compare the "
           "blocks (Thm. 1) — but DLA's features bridge them: its curve spans both blocks and it beats Naive.",
           "Chen et al., ICML 2024, Thm. 1 and §5",
           claims=(Claim("DLA", "Naive"), Claim("Oracle", "DLA"), Claim("DLA", FLAT, "curve_fit"))),
    Preset("trust bias breaks IPS, DR holds", {**_BASE, "user_model": "trust", "continuation": 0.9,
                                               "methods": ("ips", "dr")},
           "Trust bias: users also click non-relevant results, most at the top (ε⁻_p = 0.9/p). IPS counts those clicks "
           "as relevance, far below Oracle; DR subtracts the noise θε⁻ and divides by the signal θ(ε⁺ − ε⁻): it beats "
           "IPS.",
           "Vardasbi, Oosterhuis & de Rijke, CIKM 2020; Oosterhuis, TOIS 2023",
           claims=(Claim("DR", "IPS"), Claim("Oracle", "IPS", margin=0.02))),
    Preset("connected, yet unsure", {**_BASE, "shuffle": 0.02, "methods": ("dla",)},
           "2 % of sessions shuffled: the IG is connected, the graph says identifiable — yet few swaps link the "
           "deep positions: their 90 % intervals of o_p/o_1 span over ×2 (position 2's do not).",
           "Chen et al., ICML 2024, §7 (future work: errors along the graph); Fris & Hager, SIGIR 2026",
           log_claims=(Claim("position=10", WEAK_RULE, "log_se"), Claim(WEAK_RULE, "position=2", "log_se"))),
]


def story_settings(preset: Preset) -> PlaygroundSettings:
    """What the Playground runs when a visitor picks ``preset`` with the other knobs at their defaults: its seeds
    0 … PRESET_SEEDS − 1 (the server warms these; a test checks they are the page's own)."""
    return preset.settings(seeds=PRESET_SEEDS)


def log_runs(preset: Preset, seeds=range(5)) -> pd.DataFrame:
    """The rows a story's ``log_claims`` are read on: each seed's log, its factors' standard errors (no training)."""
    rows = []
    for seed in seeds:
        rows += certainty_rows(preset.settings(seed).log_spec().simulate()[2], seed)
    return pd.DataFrame(rows)


def preset_runs(preset: Preset, seeds=range(5), **overrides) -> pd.DataFrame:
    """The preset's runs over ``seeds`` (a fresh log and initialisation per seed), one after
    another: one row per (seed, method) with test nDCG@3 and nDCG@10."""
    from ultr_core.studies.experiment import train_spec
    rows = []
    for seed in seeds:
        s = preset.settings(seed, **overrides)
        rows += run_rows(seed, train_spec(s.log_spec().to_string(), s.train_configs(), noise=s.noise))
    return pd.DataFrame(rows, columns=RUN_COLUMNS)


#: the columns of a table of runs: test nDCG and how near the final observation curve came to the truth
RUN_COLUMNS = ["seed", "method", "ndcg@3", "ndcg@10", "curve_fit"]


def run_rows(seed: int, result: dict) -> list[dict]:
    """One row per method of one seed's :func:`~ultr_core.studies.experiment.train_spec` result (``curve_fit`` empty
    for a method without a curve) and, when the log has a true curve, a row for the flat curve Naive assumes — the
    reference of a curve claim.

    >>> r = {"DLA": {"metrics": {"ndcg@3": .7, "ndcg@10": .8, "curve_fit": -.1, "flat_curve_fit": -.4}}}
    >>> [(x["method"], x["curve_fit"]) for x in run_rows(0, r)]
    [('DLA', -0.1), ('flat curve', -0.4)]
    """
    rows = [{"seed": seed, "method": m, "ndcg@3": v["metrics"]["ndcg@3"], "ndcg@10": v["metrics"]["ndcg@10"],
             "curve_fit": v["metrics"].get("curve_fit", np.nan)} for m, v in result.items()]
    flat = next((v["metrics"]["flat_curve_fit"] for v in result.values() if "flat_curve_fit" in v["metrics"]), None)
    if flat is not None:
        rows.append({"seed": seed, "method": FLAT, "ndcg@3": np.nan, "ndcg@10": np.nan, "curve_fit": flat})
    return rows


def seed_runs(settings: PlaygroundSettings, results) -> pd.DataFrame:
    """The finished runs of a request as one row per (seed, method) with test nDCG@3 and nDCG@10:
    ``results`` are the :meth:`PlaygroundSettings.jobs` results in job order (None: not finished).
    A seed counts once every method of it has finished, so a table over seeds never mixes a seed's
    methods with another's.

    >>> s = PlaygroundSettings(methods=("dla",), seeds=2)
    >>> r = lambda m, x: {m: {"metrics": {"ndcg@3": x, "ndcg@10": x}}}
    >>> seed_runs(s, [r("Naive", .5), r("Oracle", .9), r("DLA", .7), r("Naive", .6), None, None])
       seed  method  ndcg@3  ndcg@10  curve_fit
    0     0   Naive     0.5      0.5        NaN
    1     0  Oracle     0.9      0.9        NaN
    2     0     DLA     0.7      0.7        NaN
    """
    n = len(settings.train_configs())
    rows = []
    for i, seed in enumerate(settings.seed_values()):
        part = list(results[i * n:(i + 1) * n])
        if len(part) < n or any(p is None for p in part):
            continue
        rows += run_rows(seed, {m: v for p in part for m, v in p.items()})     # one job per method: one result
    return pd.DataFrame(rows, columns=RUN_COLUMNS)


def seed_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Test nDCG per method over the seeds in ``runs``, as text for a results tile: with one seed
    nDCG@3 and nDCG@10; with several the mean nDCG@3 (the metric the live curves show) and its
    90 % t-interval, clipped to nDCG's range [0, 1].

    >>> runs = pd.DataFrame({"seed": [0, 1, 0, 1], "method": ["Naive", "Naive", "DLA", "DLA"],
    ...                      "ndcg@3": [.80, .82, .94, .98], "ndcg@10": [.9, .9, .95, .99]})
    >>> seed_table(runs)
      method nDCG@3   90 % interval
    0  Naive  0.810  [0.747, 0.873]
    1    DLA  0.960  [0.834, 1.000]
    >>> seed_table(runs[runs.seed == 0])
      method nDCG@3 nDCG@10
    0  Naive  0.800   0.900
    1    DLA  0.940   0.950
    """
    from ultr_core.evaluation.stats import mean_ci
    runs = runs.dropna(subset=["ndcg@3"])            # the flat-curve reference has no ranking
    several = runs["seed"].nunique() > 1
    rows = []
    for method, g in runs.groupby("method", sort=False):
        mean, lo, hi = mean_ci(g["ndcg@3"])
        rows.append({"method": method, "nDCG@3": f"{mean:.3f}",
                     **({"90 % interval": f"[{max(lo, 0.0):.3f}, {min(hi, 1.0):.3f}]"} if several else
                        {"nDCG@10": f"{g['ndcg@10'].mean():.3f}"})})
    return pd.DataFrame(rows, columns=["method", "nDCG@3", "90 % interval" if several else "nDCG@10"])


def score_guess(guess, actual, candidates) -> dict:
    """A prediction ("which methods end up below Naive?") against the result: the methods guessed
    right, missed, guessed wrongly, and one sentence.

    >>> r = score_guess(["DLA"], ["DLA", "IPS"], ["DLA", "IPS", "LBD"])
    >>> r["right"], r["missed"], r["wrong"], r["score"]
    (['DLA', 'LBD'], ['IPS'], [], '2 of 3')
    """
    guess, actual = set(guess), set(actual)
    right = [m for m in candidates if (m in guess) == (m in actual)]
    missed = [m for m in candidates if m in actual and m not in guess]
    wrong = [m for m in candidates if m in guess and m not in actual]
    parts = [f"you called {len(right)} of {len(candidates)} methods right"]
    if missed:
        parts.append(f"missed: {', '.join(missed)} (below Naive)")
    if wrong:
        parts.append(f"not below Naive after all: {', '.join(wrong)}")
    return {"right": right, "missed": missed, "wrong": wrong, "score": f"{len(right)} of {len(candidates)}",
            "text": "; ".join(parts) + "."}


def warm_worker() -> None:
    """Run in every pooled worker as it starts: import the training stack, simulate the default
    playground log (cached per process) and take a few optimiser steps, so that a first visit
    does not pay for imports, simulation or torch's first-call set-up."""
    from ultr_core.algorithms import fit
    from ultr_core.studies.experiment import simulated
    s = PlaygroundSettings()
    ds, _, log = simulated(s.log_spec().to_string())
    fit(log, ds, replace(s.train_configs()[2], steps=3, eval_every=3))


@dataclass(frozen=True)
class LogView:
    """What the playground shows about its log: the CTR table of the shown positions, the click signal per position
    (``truth``), the :func:`verdict`, the mean true observation per position and what that curve is."""
    ctr: pd.DataFrame
    truth: object
    verdict: object
    observation: object
    observation_label: str


def log_view(log, simulator) -> LogView:
    """The :class:`LogView` of ``log``, computed once per log (the page caches it)."""
    n_pos = int(log.frame.loc[log.frame["shown"], "position"].max())
    ctr = simulator.true_ctr(log, log.ctr_by_position())
    from ultr_core.simulation.clickmodel import signal_curve
    truth = signal_curve(log)                 # the click signal per position: θ_p, or θ_p(ε⁺ − ε⁻) under trust bias
    curve, label = simulator.examination_shown(log, n_pos)
    return LogView(ctr[ctr["position"] <= n_pos], truth, verdict(log), curve, label)


def curve_note(labels, short: bool = False) -> str:
    """What each drawn observation curve is (the algorithm table's ``curve``), for the caption under the chart; with
    ``short`` (a projector tile) only the curves that are not per-position estimates.

    >>> curve_note(["DLA", "truth"])
    'Each curve ÷ its position 1. DLA: its propensity tower ô_p, estimated jointly with the ranker.'
    >>> curve_note(["DLA", "LBD"], short=True)
    "LBD's curve is not a per-position estimate: its observation head sees the document."
    """
    from ultr_core.algorithms.specs import ALGORITHM_SPECS, LBD_CURVE
    by_label = {s.label: s for s in ALGORITHM_SPECS}
    drawn = [by_label[x] for x in labels if x in by_label and by_label[x].curve]
    if short:
        odd = [s.label for s in drawn if s.curve == LBD_CURVE]
        return (f"{', '.join(odd)}'s curve is not a per-position estimate: its observation head sees the document."
                if odd else "")
    return "Each curve ÷ its position 1. " + " ".join(f"{s.label}: {s.curve}." for s in drawn) if drawn else ""


def truth_note(users: str, short: bool = False) -> str:
    """What the drawn "truth" curve is when the log's users are not PBM users (empty for PBM, where it is o_p);
    with ``short`` (a projector tile) in one line.

    >>> truth_note("pbm")
    ''
    >>> truth_note("dcm").startswith("truth: the average probability that DCM")
    True
    >>> truth_note("dcm", short=True)
    "truth: DCM users' mean examination per position."
    """
    from ultr_core.clickmodels.registry import MODEL_BY_KEY
    if MODEL_BY_KEY[users].position_only:
        return ""
    label = MODEL_BY_KEY[users].label
    own = getattr(MODEL_BY_KEY[users].cls, "TRUTH_NOTE", None)    # users whose examination is by position
    if own:
        return own[1] if short else own[0]
    if short:
        return f"truth: {label} users' mean examination per position."
    return (f"truth: the average probability that {label} users examine each position of this "
            "log — it depends on the clicks above, so no per-position curve is the whole story.")


def algorithm_names() -> dict:
    """Display name → key of the playground's methods (for widgets)."""
    return {ALGORITHMS[m]: m for m in METHODS}
