"""Algorithm name → learner class, for the training loop and the tests.
"""
from __future__ import annotations

from ultr_core.algorithms.individual import (
    HTE,
    LBD,
    HTEOracle,
    LBDHTEOracle,
    Vectorization,
    _lbd_variant,
)
from ultr_core.algorithms.learners import (
    DLA,
    IPS,
    Naive,
    Oracle,
    PairDebias,
    RegressionEM,
    TwoTower,
)

__all__ = ["LEARNERS"]

LEARNERS = {
    "naive": Naive, "oracle": Oracle, "ips": IPS, "dla": DLA, "regression_em": RegressionEM,
    "two_tower": TwoTower, "pair_debias": PairDebias, "lbd": LBD, "vectorization": Vectorization,
    "hte": HTE, "hte_oracle": HTEOracle, "lbd_hte_oracle": LBDHTEOracle,
    "lbd_lips": _lbd_variant(None, 0.0, "LBD_Lips: LBD with t = 0 (gradient penalty only)."),
    "lbd_ber": _lbd_variant(0.0, None, "LBD_Ber: LBD with λ = 0 (Bernoulli decoupling only)."),
    "unlimited": _lbd_variant(0.0, 0.0, "Unlimited: LBD with λ = 0 and t = 0."),
}
