"""The Compare page's presets: paper settings as base changes, methods and the swept parameter.

Kept apart from :mod:`ultr_core.studies.experiment` on purpose: the result cache keys on the source of the
numeric modules, so editing a preset must not invalidate finished experiment cells.
"""
from __future__ import annotations

__all__ = ["PRESET_SWEEPS"]

_CLD_BASE = {"dataset": "synthetic:500:24", "click.topk": 5, "click.convention": "reciprocal",
             "click.relevance": "binary"}

#: paper settings for the Compare page: base changes, methods and the swept parameter
PRESET_SWEEPS = {
    "PBM η = 1: Oracle / DLA / IPS / Naive (synthetic default)": dict(
        base={}, methods=["naive", "ips", "dla", "oracle"], sweep=None, values=[]),
    "LBD Fig. 3a/3b: coupling level η_c (λ, t from Table 3)": dict(
        base={}, methods=["naive", "dla", "vectorization", "lbd", "lbd_lips", "lbd_ber"], sweep="click.coupling",
        values=[0.0, 0.2, 0.4, 0.6]),
    "LBD Fig. 3c: HTE with intervention data (coupling level η_c)": dict(
        base={}, methods=["naive", "hte", "hte_oracle", "lbd_hte_oracle", "lbd"], sweep="click.coupling",
        values=[0.0, 0.2, 0.4, 0.6]),
    # CLD presets follow the paper's simulation (§6): binarised relevance, 24 candidates per query (Yahoo!-like)
    "CLD Table 2: top-5, η = 1 (reciprocal), 10 % noise, binarised relevance": dict(
        base={**_CLD_BASE, "click.eta": 1.0, "click.noise": 0.1},
        methods=["naive", "ips", "heckman", "rankagg", "cld", "cld_pair", "oracle"], sweep=None, values=[]),
    "CLD γ ablation: does the selection coupling matter? (γ = 0 vs the paper's range)": dict(
        base={**_CLD_BASE, "click.eta": 1.0, "click.noise": 0.1}, methods=["cld"], sweep="train.cld_gamma",
        values=[0.0, 0.05, 0.15, 0.3]),
    "CLD Fig. 4: cut-off k": dict(
        base={k: v for k, v in _CLD_BASE.items() if k != "click.topk"} | {"click.eta": 1.0},
        methods=["naive", "ips", "heckman", "cld"], sweep="click.topk", values=[2, 3, 5, 10, 15]),
    "CLD Fig. 4 (right): position-bias severity η (top-5)": dict(
        base=_CLD_BASE, methods=["naive", "ips", "heckman", "cld"],
        sweep="click.eta", values=[0.0, 0.5, 1.0, 1.5, 2.0]),
    "CLD Fig. 5: click sessions (top-5, η = 1)": dict(
        base={**_CLD_BASE, "click.eta": 1.0}, methods=["naive", "ips", "heckman", "cld"],
        sweep="n_sessions", values=[2_000, 5_000, 20_000, 50_000]),
    "CLD Fig. 6: click noise ε (top-5, η = 1)": dict(
        base={**_CLD_BASE, "click.eta": 1.0},
        methods=["naive", "ips", "heckman", "cld"], sweep="click.noise", values=[0.0, 0.1, 0.2, 0.3, 0.5]),
    "CLD Fig. 7: misspecified propensity (true η = 1, k = 3)": dict(
        base={**_CLD_BASE, "click.topk": 3}, methods=["ips", "rankagg", "cld"], sweep="train.ips_eta,train.cld_rho_eta",
        values=[0.0, 0.5, 1.0, 1.5, 2.0]),
}
