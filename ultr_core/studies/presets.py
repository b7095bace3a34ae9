"""The Compare page's presets: paper settings as base changes, methods and the swept parameter,
and the **claims** each paper makes about that setting (:class:`~ultr_core.evaluation.claims.Claim`),
which the page checks on the run's seeds ("reproduced", "not resolved", "opposite") — from SPEC §6
and the papers' text, at the sweep value where the paper makes them.

Kept apart from :mod:`ultr_core.studies.experiment` on purpose: the result cache keys on the source of the
numeric modules, so editing a preset must not invalidate finished experiment cells.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ultr_core.evaluation.claims import Claim

__all__ = ["PRESET_SWEEPS", "NAME_SWEEPS", "comparison_grid", "ComparePreset", "CUSTOM"]

#: swept parameters whose values are names, not numbers
NAME_SWEEPS = ("click.user_model",)

#: the CLD presets run the official code's protocol (``studies/cld_protocols.py``) with the page's ranker:
#: official binarisation, estimated propensities, pairwise Naive / IPS without clipping, the official
#: Heckman_rank, CLD on per-session rows with the logistic link and ρ = 0.5, CLD_pair on per-session pairs
_CLD_BASE = {"dataset": "synthetic:500:24", "click.topk": 5, "click.convention": "reciprocal",
             "click.relevance": "binary_official", "train.propensity": "estimated", "train.ips_form": "pairwise",
             "train.max_weight": None, "train.heckman": "official", "train.cld_form": "official",
             "train.cld_gamma": 0.5, "train.pair_orientation": "official"}


@dataclass(frozen=True, kw_only=True)
class ComparePreset:
    """A paper setting for the Compare page: ``base`` changes to the default experiment (dotted keys), the
    ``methods`` (internal names), the swept parameter (None: one setting) and its ``values``, the paper's
    ``claims`` there, and the number of ``seeds`` it needs (None: the page's or the command's default)."""

    base: dict
    methods: tuple
    sweep: str | None = None
    values: tuple = ()
    claims: tuple = ()
    seeds: int | None = None

    def __post_init__(self):
        for name in ("methods", "values", "claims"):           # lists in the table, tuples in the record
            object.__setattr__(self, name, tuple(getattr(self, name)))

    def with_(self, **changes) -> "ComparePreset":
        """A copy with ``changes`` (the record is frozen)."""
        return dataclasses.replace(self, **changes)


#: the page's own setting when no preset is chosen
CUSTOM = ComparePreset(base={}, methods=("naive", "dla", "ips"))

#: paper settings for the Compare page: base changes, methods, the swept parameter and the paper's claims (and
#: ``seeds``, the page's default number of seeds for the preset, where it is not 3)
PRESET_SWEEPS = {
    "PBM η = 1: Oracle / DLA / IPS / Naive (synthetic default)": ComparePreset(
        base={}, methods=["naive", "ips", "dla", "oracle"], sweep=None, values=[],
        claims=[Claim("DLA", "Naive", "ndcg@10", source="DLA (Ai et al., SIGIR 2018): debiased clicks beat raw clicks"),
                Claim("IPS", "Naive", "ndcg@10", source="IPS (Joachims et al., WSDM 2017) under a known PBM"),
                Claim("Oracle", "DLA", "ndcg@10", source="true labels are the upper bound")]),
    "Users who don't follow PBM: DCM and DBN clicks, CM-IPS (Vardasbi et al., SIGIR 2020)": ComparePreset(
        base={}, methods=["naive", "ips", "dla", "lbd", "cm_ips", "oracle"], sweep="click.user_model",
        values=["pbm", "dcm", "dbn"], seeds=5,
        claims=[Claim("CM-IPS", "IPS", "ndcg@10", at=(("click.user_model", "dcm"),),
                      source="Vardasbi et al. 2020: under cascade (DCM) clicks CM-IPS beats PBM-based IPS"),
                Claim("Oracle", "IPS", "ndcg@10", at=(("click.user_model", "dcm"),),
                      source="Vardasbi et al. 2020: … where PBM-based IPS keeps a gap to full information"),
                Claim("IPS", "CM-IPS", "ndcg@10", at=(("click.user_model", "pbm"),),
                      source="Vardasbi et al. 2020: the opposite when clicks follow PBM"),
                *[Claim(m, "Naive", "ndcg@10", at=(("click.user_model", "dcm"),),
                        source=f"our question: does PBM-based {m} still beat raw clicks when users follow DCM?")
                  for m in ("IPS", "DLA", "LBD")],
                Claim("CM-IPS", "IPS", "ndcg@10", at=(("click.user_model", "dbn"),),
                      source="our question: do DCM-form propensities (λ fitted by DCM) help under DBN clicks?"),
                Claim("Oracle", "CM-IPS", "ndcg@10", at=(("click.user_model", "dbn"),),
                      source="our question: … or is there still a gap to full information under DBN?")]),
    "Trust bias breaks IPS; Affine-IPS and DR hold (Vardasbi et al., CIKM 2020; ε⁻_p = 0.9/p)": ComparePreset(
        base={"click.continuation": 0.9}, methods=["naive", "ips", "bayes_ips", "affine_ips", "dr", "oracle"],
        sweep="click.user_model", values=["pbm", "trust"], seeds=5,
        claims=[Claim("Affine-IPS", "IPS", "ndcg@10", at=(("click.user_model", "trust"),),
                      source="Vardasbi et al. 2020 (Table 2): under trust bias the affine correction beats IPS"),
                Claim("DR", "IPS", "ndcg@10", at=(("click.user_model", "trust"),),
                      source="Oosterhuis 2023: the doubly robust estimator (affine form) beats IPS under trust bias"),
                Claim("Affine-IPS", "Bayes-IPS", "ndcg@10", at=(("click.user_model", "trust"),),
                      source="Vardasbi et al. 2020 (§4, Table 2): Bayes-IPS stays biased; Affine-IPS beats it"),
                Claim("Oracle", "IPS", "ndcg@10", at=(("click.user_model", "trust"),),
                      source="our question: does IPS keep a gap to full information under trust bias?")]),
    "Deterministic top-k breaks policy-aware IPS, exploration rescues it (Oosterhuis & de Rijke, SIGIR 2020)":
    ComparePreset(
        base={"click.topk": 3}, methods=["naive", "ips", "policy_aware", "dr", "oracle"], sweep="click.shuffle",
        values=[0.0, 0.3], seeds=5,
        claims=[Claim("IPS", "Policy-aware IPS", "ndcg@10", at=(("click.shuffle", 0.0),),
                      source="CLD §2: policy-aware IPS needs a stochastic logging policy — under a deterministic "
                             "top-k the documents it never shows have no propensity"),
                Claim("Policy-aware IPS", "Policy-aware IPS", "ndcg@10", at=(("click.shuffle", 0.3),),
                      worse_at=(("click.shuffle", 0.0),),
                      source="Oosterhuis & de Rijke 2020: exploration (30 % of sessions shuffled) rescues it"),
                Claim("Policy-aware IPS", "IPS", "ndcg@10", at=(("click.shuffle", 0.3),),
                      source="Oosterhuis & de Rijke 2020 (Fig. 2): under stochastic top-k logging policy-aware IPS "
                             "beats IPS")]),
    "LBD Fig. 3a/3b: coupling level η_c (λ, t from Table 3)": ComparePreset(
        base={}, methods=["naive", "dla", "vectorization", "lbd", "lbd_lips", "lbd_ber"], sweep="click.coupling",
        values=[0.0, 0.2, 0.4, 0.6],
        claims=[Claim("Naive", "DLA", "ndcg@10", at=(("click.coupling", 0.6),),
                      source="LBD Fig. 3a: group-level DLA falls below raw clicks at high coupling"),
                Claim("LBD", "Naive", "ndcg@10", at=(("click.coupling", 0.6),),
                      source="LBD Fig. 3a: LBD stays above raw clicks"),
                Claim("LBD", "LBD_Lips", "ndcg@10", at=(("click.coupling", 0.6),),
                      source="LBD Fig. 3b: LBD ≥ LBD_Lips"),
                Claim("LBD", "LBD_Ber", "ndcg@10", at=(("click.coupling", 0.6),),
                      source="LBD Fig. 3b: LBD ≥ LBD_Ber")]),
    "LBD Fig. 3a on the Yahoo! sample: η_c = 0.6, top-10 (needs the yahoo_sample data root)": ComparePreset(
        base={"dataset": "yahoo_sample", "click.topk": 10, "click.coupling": 0.6},
        methods=["naive", "dla", "lbd"], sweep=None, values=[],
        claims=[Claim("Naive", "DLA", "ndcg@10", source="LBD Fig. 3a: group-level DLA falls below raw clicks at high "
                                                        "coupling (real features: the Yahoo! sample)"),
                Claim("LBD", "DLA", "ndcg@10", source="LBD Fig. 3a: LBD keeps relevance and observation apart "
                                                      "and stays above DLA")]),
    "LBD Fig. 3c: HTE with intervention data (coupling level η_c)": ComparePreset(
        base={}, methods=["naive", "hte", "hte_oracle", "lbd_hte_oracle", "lbd"], sweep="click.coupling",
        values=[0.0, 0.2, 0.4, 0.6],
        claims=[Claim("LBD", "HTE", "ndcg@10", at=(("click.coupling", 0.0),),
                      source="LBD §6.3: LBD beats HTE at a low coupling level"),
                Claim("LBD", "HTE-oracle", "ndcg@10", at=(("click.coupling", 0.0),),
                      source="LBD §6.3: … and HTE-oracle"),
                Claim("HTE", "LBD", "ndcg@10", at=(("click.coupling", 0.6),),
                      source="LBD §6.3: at a high coupling level HTE beats LBD"),
                Claim("LBD-HTE-oracle", "HTE", "ndcg@10", at=(("click.coupling", 0.6),),
                      source="LBD §6.3: LBD on oracle-corrected clicks always beats HTE")]),
    # CLD presets follow the official code's protocol (_CLD_BASE), 24 candidates per query (Yahoo!-like)
    "CLD Table 2: top-5, η = 1 (reciprocal), 10 % noise, binarised relevance (official protocol)": ComparePreset(
        base={**_CLD_BASE, "click.eta": 1.0, "click.noise": 0.1},
        methods=["naive", "ips", "heckman", "rankagg", "cld", "cld_pair", "oracle"], sweep=None, values=[],
        claims=[Claim("CLD", c, "ndcg@3", source=f"CLD Table 2: CLD beats {c} under top-k selection bias")
                for c in ("IPS", "Heckman", "RankAgg")]
               + [Claim("CLD_pair", c, "ndcg@3",
                        source=f"CLD Table 2: CLD_pair beats {c} too") for c in ("IPS", "Heckman")]),
    "CLD ρ ablation: does the selection coupling matter? (ρ = 0 vs the official 0.5 and the paper's range)":
    ComparePreset(
        base={**_CLD_BASE, "click.eta": 1.0, "click.noise": 0.1}, methods=["cld"], sweep="train.cld_gamma",
        values=[0.0, 0.1, 0.3, 0.5, 0.7], claims=[]),          # our ablation: the paper makes no claim about ρ = 0
    "CLD Fig. 4: cut-off k": ComparePreset(
        base={k: v for k, v in _CLD_BASE.items() if k != "click.topk"} | {"click.eta": 1.0},
        methods=["naive", "ips", "heckman", "cld"], sweep="click.topk", values=[2, 3, 5, 10, 15],
        claims=[Claim("CLD", c, "ndcg@3", at=(("click.topk", 2),), source=f"CLD Fig. 4: CLD leads {c} most at small k")
                for c in ("IPS", "Heckman")]),
    "CLD Fig. 4 (right): position-bias severity η (top-5)": ComparePreset(
        base=_CLD_BASE, methods=["naive", "ips", "heckman", "cld"],
        sweep="click.eta", values=[0.0, 0.5, 1.0, 1.5, 2.0],
        claims=[Claim("CLD", c, "ndcg@3", at=(("click.eta", 2.0),),
                      source=f"CLD Fig. 4 (right): CLD beats {c} under severe position bias")
                for c in ("IPS", "Heckman")]),
    "CLD Fig. 5: click sessions (top-5, η = 1)": ComparePreset(
        base={**_CLD_BASE, "click.eta": 1.0}, methods=["naive", "ips", "heckman", "cld"],
        sweep="n_sessions", values=[2_000, 5_000, 20_000, 50_000],
        claims=[Claim("CLD", "IPS", "ndcg@3", at=(("n_sessions", 2_000),),
                      source="CLD Fig. 5: CLD ahead with few sessions")]),
    "CLD Fig. 6: click noise ε (top-5, η = 1)": ComparePreset(
        base={**_CLD_BASE, "click.eta": 1.0},
        methods=["naive", "ips", "heckman", "cld"], sweep="click.noise", values=[0.0, 0.1, 0.2, 0.3, 0.5],
        claims=[Claim("CLD", "IPS", "ndcg@3", at=(("click.noise", 0.5),),
                      source="CLD Fig. 6: CLD is robust to click noise")]),
    "CLD Fig. 7: misspecified propensity (true η = 1, k = 3)": ComparePreset(
        base={**_CLD_BASE, "click.topk": 3}, methods=["ips", "rankagg", "cld"], sweep="train.ips_eta,train.cld_rho_eta",
        values=[0.0, 0.5, 1.0, 1.5, 2.0],
        claims=[Claim("CLD", "IPS", "ndcg@3", at=(("train.ips_eta", 2.0),),
                      source="CLD Fig. 7 (§6): IPS drops violently when the propensities are under-estimated "
                             "(assumed η′ = 2 > the true 1); CLD keeps a large margin")]),
}


def comparison_grid(base_changes: dict, algorithms, *, sweep: str | None = None, values=(), n_sessions: int = 20_000,
                    steps: int = 400, max_sessions: int | None = None):
    """The (base spec, grid) a comparison runs: ``base_changes`` (a preset's ``base``) on the default
    spec, ``steps`` training steps, one cell per algorithm (internal names) and, with ``sweep``, per
    value (whole numbers for ``click.topk`` and ``n_sessions``; at most ``max_sessions`` sessions, the app's
    bound).  The Compare page and
    ``experiments/compare_presets.py`` build their runs here.

    >>> base, grid = comparison_grid({"click.topk": 5}, ["naive", "cld"], sweep="click.eta", values=[0.5, 1], steps=100)
    >>> base.click.topk, base.train.steps, grid
    (5, 100, {'click.eta': [0.5, 1.0], 'train.algorithm': ['naive', 'cld']})
    """
    from ultr_core.errors import ConfigError
    from ultr_core.studies.experiment import ExperimentSpec
    base = ExperimentSpec(n_sessions=n_sessions)
    for k, v in base_changes.items():
        base = base.with_value(k, v)
    base = base.with_value("train.steps", steps)
    grid = {"train.algorithm": list(algorithms)}
    if sweep:
        vals = [str(v).strip() for v in values] if sweep in NAME_SWEEPS else [float(v) for v in values]
        if not vals:
            raise ConfigError("values", "give at least one value to sweep")
        if sweep in ("click.topk", "n_sessions"):
            vals = [int(v) for v in vals]
        if sweep == "n_sessions" and max_sessions is not None and max(vals) > max_sessions:
            raise ConfigError("values", f"{max(vals):,} sessions per run exceed the app's {max_sessions:,} (the "
                                        "command line takes more: experiments/compare_presets.py)")
        grid = {sweep: vals, **grid}
    return base, grid
