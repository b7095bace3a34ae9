"""The table of click models: one :class:`ClickModelSpec` per model, from which the CLI's choices, the JSON and
the docs derive (adding a model is one record here and its class in :mod:`~ultr_core.clickmodels.models`)."""
from __future__ import annotations

from ultr_core.clickmodels import cascade_ml, models as m
from ultr_core.clickmodels.spec import ClickModelSpec
from ultr_core.clickmodels.trust import Trust
from ultr_core.clickmodels.ubm import UBM
from ultr_core.extensions import extra

__all__ = ["ClickModelSpec", "CLICK_MODELS", "MODEL_BY_KEY", "USER_MODELS", "DEFAULT_USER_MODEL"]


CLICK_MODELS = (
    ClickModelSpec("gctr", "GCTR", m.GCTR, "mle", "Chuklin, Markov & de Rijke 2015, §3.1 (random click model)",
                   "one click probability", "the global CTR (the same for every document)", colour="#9e9e9e"),
    ClickModelSpec("rctr", "RCTR", m.RCTR, "mle", "Chuklin, Markov & de Rijke 2015, §3.1", "CTR per rank",
                   "none (0, as PyClick)", colour="#616161"),
    ClickModelSpec("dctr", "DCTR", m.DCTR, "mle", "Chuklin, Markov & de Rijke 2015, §3.1", "CTR per (query, doc)",
                   "the document's CTR", colour="#8c564b"),
    ClickModelSpec("pbm", "PBM", m.PBM, "em", "Craswell et al., WSDM 2008; Chuklin et al. 2015 §3.4",
                   "attractiveness per (query, doc), examination per rank", "attractiveness", colour="#1f77b4",
                   behaviour="examine position p with o_p (η, convention), click what attracts"),
    ClickModelSpec("ubm", "UBM", UBM, "em", "Dupret & Piwowarski, SIGIR 2008",
                   "attractiveness per (query, doc), examination per (rank, rank of the last click)",
                   "attractiveness", colour="#17becf",
                   behaviour="examine p with o_d, d = distance from the last click above p"),
    ClickModelSpec("cm", "CM", m.CM, "mle", "Craswell et al., WSDM 2008 (cascade model)",
                   "attractiveness per (query, doc)", "attractiveness", colour="#d62728",
                   behaviour="scan down, stop at the first click"),
    ClickModelSpec("dcm", "DCM", m.DCM, "mle", "Guo, Liu & Wang, WSDM 2009",
                   "attractiveness per (query, doc), continuation after a click per rank", "attractiveness",
                   colour="#ff7f0e",
                   behaviour="scan down; after a click at rank r go on with λ_r = γ·(1/r)^η (the CM-IPS code's DCM)",
                   prior="learned"),
    ClickModelSpec("dcm_ml", "DCM-ML", cascade_ml.DCMML, "gradient", "Guo, Liu & Wang, WSDM 2009; fitted by maximum "
                   "likelihood (as CLAX fits it)", "attractiveness per (query, doc), continuation after a click per "
                   "rank", "attractiveness", colour="#ffbb78", prior="learned"),
    ClickModelSpec("sdbn", "SDBN", m.SDBN, "mle", "Chapelle & Zhang, WWW 2009 (simplified DBN)",
                   "attractiveness and satisfaction per (query, doc)", "attractiveness × satisfaction",
                   colour="#2ca02c", behaviour="scan down; a click satisfies with σ = α and ends the session"),
    ClickModelSpec("dbn", "DBN", cascade_ml.DBN, "gradient", "Chapelle & Zhang, WWW 2009",
                   "attractiveness and satisfaction per (query, doc), one continuation γ",
                   "attractiveness × satisfaction",
                   colour="#9467bd",
                   behaviour="go on with γ after each document; a click satisfies with σ = α and ends it"),
    ClickModelSpec("ccm", "CCM", cascade_ml.CCM, "gradient",
                   "Guo, Liu, Kannan, Minka, Taylor, Wang & Faloutsos, WWW 2009",
                   "attractiveness per (query, doc), continuation τ₁ (no click), τ₂, τ₃ (after a click)",
                   "attractiveness²", colour="#e377c2",
                   behaviour="go on with τ₁ = γ without a click, τ₂(1 − α) + τ₃α after one (τ₂ = γ, τ₃ = γ/2)"),
    ClickModelSpec("trust", "Trust", Trust, "gradient",
                   "Agarwal, Wang, Li, Bendersky & Najork, WWW 2019; Vardasbi, Oosterhuis & de Rijke, CIKM 2020",
                   "attractiveness per (query, doc), signal s_p = θ(ε⁺ − ε⁻) and noise b_p = θε⁻ per rank",
                   "attractiveness (up to an affine map)", colour="#bcbd22",
                   behaviour="examine p with o_p; click a relevant result with ε⁺_p = 0.98 − (p − 1)/100, another "
                             "with ε⁻_p = γ/p (trust bias; γ = 0.65: Vardasbi et al.'s trust_1)",
                   ig_condition="a connected graph, and every factor shows two documents of different relevance "
                                "(docs/identifiability_trust_bias.md)"),
)
CLICK_MODELS += extra("CLICK_MODELS")           # records of extension modules (ultr_core.extensions)
MODEL_BY_KEY = {s.key: s for s in CLICK_MODELS}
#: the models simulated users can follow (PBM first: the papers' setting and every simulation's default)
USER_MODELS = tuple(s.key for s in CLICK_MODELS if s.cls.USER_MODEL)
#: the user model of every simulation unless one is chosen
DEFAULT_USER_MODEL = USER_MODELS[0]
