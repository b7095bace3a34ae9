"""Typed, validated training configuration shared by every algorithm."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace

from ultr_core.algorithms.specs import ALGORITHM_SPECS
from ultr_core.constraints import Interval, Options, Rule, validate
from ultr_core.errors import ConfigError

__all__ = ["TrainConfig", "ALGORITHMS", "PRESETS", "LBD_TABLE3", "lbd_table3", "PAPER_SCALE"]

#: a hidden layer's size, and the weights between hidden layers (16.8 M: 64 MB of float32, far above the paper's
#: 512-256-128 = 164 K) — larger networks are refused before torch tries to allocate them (issue #50)
MAX_LAYER = 8192
MAX_WEIGHTS = 16_777_216
#: ``--set`` keys that have their own options (the CLI's ``--algorithm`` and ``--seed``)
NOT_SET = ("algorithm", "seed")
#: the ``train`` command's own options besides those: ``--set`` may not contradict them (issue #61, item 12)
TRAIN_FLAGS = NOT_SET + ("threads", "device", "clicks")

#: LBD Table 3 (Yahoo!, DNN): the (λ, t) the paper selected on validation per coupling level η
LBD_TABLE3 = {0.0: (100.0, 0.1), 0.1: (100.0, 0.1), 0.2: (100.0, 0.1), 0.3: (1.0, 0.1), 0.4: (1.0, 0.3),
              0.5: (1.0, 0.3), 0.6: (1.0, 0.4)}
#: LBD Table 3 has one Linear-ranker row on Yahoo! (η = 0.1); we use it at every η
LBD_TABLE3_LINEAR = (10000.0, 0.1)


def lbd_table3(coupling: float, model: str = "dnn") -> tuple[float, float]:
    """The paper's (λ, t) for a coupling level (nearest Table 3 row; levels above 0.6 use 0.6).

    >>> lbd_table3(0.0), lbd_table3(0.6), lbd_table3(0.44), lbd_table3(0.3, "linear")
    ((100.0, 0.1), (1.0, 0.4), (1.0, 0.3), (10000.0, 0.1))
    """
    if model == "linear":
        return LBD_TABLE3_LINEAR
    level = min(LBD_TABLE3, key=lambda lv: (abs(lv - float(coupling)), lv))
    return LBD_TABLE3[level]


#: every algorithm behind :func:`ultr_core.algorithms.fit`, with its display name
ALGORITHMS = {s.key: s.label for s in ALGORITHM_SPECS}      # key → label: a view of ultr_core.algorithms.specs


@dataclass(frozen=True)
class TrainConfig:
    """Hyper-parameters of one training run (fields are validated on construction).

    ``algorithm`` picks the learner; fields that do not apply to it are ignored.
    """

    algorithm: str = "dla"
    model: str = "dnn"                 #: "linear" or "dnn" (ELU MLP)
    hidden: tuple = (64, 32)           #: DNN hidden layer sizes
    layer_norm: bool = False           #: LayerNorm before every DNN layer (the official LBD ranker)
    dropout: float = 0.0               #: DNN: dropout probability after every hidden layer (CLD paper: 0.5)
    optimizer: str = "adam"            #: "adam", "adagrad" or "sgd"
    lr: float = 0.01
    weight_decay: float = 0.0          #: L2 regularisation weight, added to the gradient (CLD paper: 1e-3 … 1e-2)
    init: str = "default"              #: "default" (torch: Kaiming-uniform), "xavier" (Glorot-uniform, zero biases) or
    #                                     "xavier_normal" (Glorot-normal weights, torch's biases: the official CLD code)
    clip_norm: float | None = None     #: clip the global gradient norm to this (official ULTRA code: 5)
    batch_size: int = 256              #: sessions (lists) per step
    steps: int = 600
    eval_every: int = 50               #: validation and callback period (steps)
    clicks: str = "log"                #: "log": batches from the click log; "online": fresh clicks every step
    seed: int = 0
    keep_best: bool = True             #: restore the parameters with the best validation nDCG@10
    threads: int = 1                   #: torch threads during fit (restored afterwards)
    device: str = "cpu"                #: "cpu", "cuda" or "auto" (cuda when available); feature learners only
    max_weight: float | None = 10.0    #: clip of inverse-propensity-style weights (IPS, DLA, PairDebias; None: no clip)
    ips_eta: float | None = None       #: IPS: assumed position-bias severity (None: the log's propensities)
    ips_form: str = "listwise"         #: Naive / IPS loss: "listwise" softmax or "pairwise" (the official CLD code:
    #                                     BPR on each session's pairs ordered by c·w, weighted by the difference Δ)
    propensity: str = "true"           #: IPS / CLD propensities when no η′ is assumed: "true" (the log's click model)
    #                                     or "estimated" (result randomisation: 10⁶ sessions on shuffled lists, as
    #                                     hyz20/CLD)
    em_step: float = 0.05              #: Regression-EM: running-mean step of the M-step
    lbd_lambda: float | None = None    #: LBD gradient-penalty weight λ (None: the paper's Table 3 value for the
    #                                     log's η_c)
    lbd_t: float | None = None         #: LBD Bernoulli drop probability t (None: Table 3 for the log's η_c)
    lbd_penalty: str = "official"      #: LBD form: "official" (squared, all heads, raw logits) or "paper"
    lbd_dropout_keep: float = 0.1      #: LBD official penalty: keep probability of the dropout on H
    vec_dim: int = 2                   #: Vectorization: dimension d of the relevance/observation vectors
    vec_freeze: int = 100              #: Vectorization: steps before the observation vectors train (official: 500
    #                                     of 10,000)
    cld_gamma: float = 0.5             #: CLD: correlation of the Tobit model — ρ of the official TobitLoss (its default
    #                                     0.5), γ of eq. 10 (the paper tunes it in [0.05, 0.30])
    cld_rho_eta: float | None = None   #: CLD: assumed η of the propensity ρ (None: the log's click model)
    cld_form: str = "official"         #: CLD pointwise: "official" (github hyz20/CLD TobitLoss: per-(session,
    #                                     candidate) rows, logistic link) or "paper_text" (eq. 10 as printed:
    #                                     per-candidate ĉ/ρ, probit)
    pair_orientation: str = "official" #: CLD_pair pairs: "official" (hyz20/CLD: per session, Δ-weighted BPR, mixed
    #                                     pairs in both orders sampled 1:1) or, per query, mixed pairs in "random"
    #                                     order or "selected_first" (eq. 13 as printed, this project's earlier
    #                                     readings)
    pair_ratio: float = 1.0            #: CLD_pair official: Δ = 0 pairs drawn per Δ > 0 pair (official ``ratio``: 1)
    pair_both_clicked: bool = True     #: CLD_pair official: keep Δ > 0 pairs of two clicked documents (official: yes;
    #                                     False drops them — they are ordered by position alone, see docs/findings.md)
    heckman: str = "ovaisi"            #: Heckman_rank: "ovaisi" (probit stage 2, rank by xᵀβ), "official" (hyz20/CLD:
    #                                     logistic coefficients / 1.6, intercepts dropped, max_iter 40 — 100 in RankAgg)
    #                                     or "ls_mills" (our old variant)

    #: what every field accepts (:mod:`ultr_core.constraints`; a test checks every field is declared)
    CONSTRAINTS = {
        "algorithm": [Options(*ALGORITHMS)], "model": [Options("linear", "dnn")],
        "hidden": [Rule(lambda h: len(h) >= 1 and all(int(x) == x and 1 <= x <= MAX_LAYER for x in h)
                        and sum(a * b for a, b in zip(h, h[1:])) <= MAX_WEIGHTS,
                        f"a non-empty sequence of layer sizes from 1 to {MAX_LAYER:,} with at most {MAX_WEIGHTS:,} "
                        "weights between them")],
        "layer_norm": [Options(True, False)], "dropout": [Interval(float, 0, 1, closed="left")],
        "optimizer": [Options("adam", "adagrad", "sgd")], "lr": [Interval(float, 0, 10, closed="right")],
        "weight_decay": [Interval(float, 0, 10)], "init": [Options("default", "xavier", "xavier_normal")],
        "clip_norm": [None, Interval(float, 0, None, closed="neither")],
        "batch_size": [Interval(int, 1, 65_536)], "steps": [Interval(int, 1, 10_000_000)],
        "eval_every": [Interval(int, 1, None)], "clicks": [Options("log", "online")],
        "seed": [Interval(int, 0, 2**32 - 1)], "keep_best": [Options(True, False)],
        "threads": [Interval(int, 1, 64)], "device": [Options("cpu", "cuda", "auto")],
        "max_weight": [None, Interval(float, 1, None)], "ips_eta": [None, Interval(float, 0, 10)],
        "ips_form": [Options("listwise", "pairwise")], "propensity": [Options("true", "estimated")],
        "em_step": [Interval(float, 0, 1, closed="right")], "lbd_lambda": [None, Interval(float, 0, 1e6)],
        "lbd_t": [None, Interval(float, 0, 1, closed="left")], "lbd_penalty": [Options("official", "paper")],
        "lbd_dropout_keep": [Interval(float, 0, 1, closed="right")], "vec_dim": [Interval(int, 1, 64)],
        "vec_freeze": [Interval(int, 0, None)], "cld_gamma": [Interval(float, 0, 1, closed="left")],
        "cld_rho_eta": [None, Interval(float, 0, 10)], "cld_form": [Options("official", "paper_text")],
        "pair_orientation": [Options("official", "random", "selected_first")],
        "pair_ratio": [Interval(float, 0, 100, closed="right")], "pair_both_clicked": [Options(True, False)],
        "heckman": [Options("ovaisi", "official", "ls_mills")],
    }

    def __post_init__(self):
        validate(self)
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))

    @property
    def display_name(self) -> str:
        return ALGORITHMS[self.algorithm]

    def to_dict(self) -> dict:
        d = asdict(self)
        d["hidden"] = list(self.hidden)
        return d

    def with_(self, **changes) -> "TrainConfig":
        return replace(self, **changes)

    @classmethod
    def from_pairs(cls, pairs: list[str], base: "TrainConfig | None" = None, *,
                   dedicated=NOT_SET) -> "TrainConfig":
        """Apply ``key=value`` strings (CLI ``--set``), converting to each field's type; a key in ``dedicated``
        (a command's own option) is refused, naming that option."""
        base = base or cls()
        kinds = {f.name: f.type for f in fields(cls)}
        changes = {}
        for p in pairs:
            key, sep, raw = p.partition("=")
            if key in dedicated:
                raise ConfigError(f"--set {key}", f"not a --set key: use --{key}")
            if not sep or key not in kinds:
                raise ConfigError(key or p, "expected key=value with key one of "
                                            + ", ".join(k for k in kinds if k not in NOT_SET))
            cur = getattr(base, key)
            try:
                if key == "hidden":
                    val = tuple(int(x) for x in raw.split(",") if x)
                elif raw.lower() in ("none", "null") and "None" in str(kinds[key]):
                    val = None
                elif isinstance(cur, bool):
                    low = raw.strip().lower()
                    if low not in ("1", "true", "yes", "0", "false", "no"):
                        raise ConfigError(key, f"{raw[:20]!r} is not a boolean: use true/false, yes/no or 1/0")
                    val = low in ("1", "true", "yes")
                elif isinstance(cur, int):
                    val = int(raw)
                elif isinstance(cur, float) or "float" in str(kinds[key]):
                    val = float(raw)
                else:
                    val = raw
            except ConfigError:
                raise
            except ValueError:
                raise ConfigError(key, f"cannot convert {raw[:20]!r} to {type(cur).__name__}") from None
            changes[key] = val
        return replace(base, **changes)


#: the official LBD training scale (config/setting_yahoo_0.1_DNN.json, ultra/ranking_model/DNN_multi.py,
#: lbd.py): 512-256-128 ELU + LayerNorm, Adagrad 0.05, global-norm clip 5, 10,000 steps of 256 lists
#: with fresh clicks, DLA weights unclipped
PAPER_SCALE = dict(model="dnn", hidden=(512, 256, 128), layer_norm=True, optimizer="adagrad", lr=0.05,
                   clip_norm=5.0, steps=10_000, batch_size=256, clicks="online", max_weight=None, eval_every=200,
                   device="auto")

#: the papers' settings as presets (name -> TrainConfig changes)
PRESETS = {
    "LBD paper (DNN, λ and t from Table 3 for the log's η_c)": dict(algorithm="lbd", model="dnn", lbd_lambda=None,
                                                                    lbd_t=None),
    "LBD paper scale (512-256-128 + LayerNorm, Adagrad 0.05, clip 5, 10,000 online steps)": dict(
        algorithm="lbd", lbd_lambda=None, lbd_t=None, **PAPER_SCALE),
    "LBD paper (Linear, λ=10000, t=0.1)": dict(algorithm="lbd", model="linear", lbd_lambda=10000.0, lbd_t=0.1),
    # CLD §6: linear CLD and selection model; Xavier initialisation; L2 in [1e-3, 1e-2]; lr from
    # {2e-4, 5e-4, 1e-3, 2e-3, 5e-3}; γ tuned in [0.05, 0.30] (experiments/cld_study.py tunes it on validation)
    "CLD paper (pointwise, linear, Xavier, L2 1e-3, lr 5e-3, γ=0.15)": dict(
        algorithm="cld", model="linear", cld_gamma=0.15, init="xavier", weight_decay=1e-3, lr=5e-3),
    "CLD_pair paper (ELU 256-128-64, dropout 0.5, Xavier, L2 1e-3, lr 1e-3)": dict(
        algorithm="cld_pair", model="dnn", hidden=(256, 128, 64), dropout=0.5, init="xavier", weight_decay=1e-3,
        lr=1e-3, pair_orientation="random"),
}
