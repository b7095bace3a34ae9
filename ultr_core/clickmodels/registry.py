"""The table of click models: one :class:`ClickModelSpec` per model, from which the CLI's choices, the JSON and
the docs derive (adding a model is one record here and its class in :mod:`~ultr_core.clickmodels.models`)."""
from __future__ import annotations

from dataclasses import dataclass

from ultr_core.clickmodels import dbn
from ultr_core.clickmodels import models as m

__all__ = ["ClickModelSpec", "CLICK_MODELS", "MODEL_BY_KEY"]


@dataclass(frozen=True)
class ClickModelSpec:
    """One click model: key (CLI name), label, its class, the inference (``mle``: counting, ``em``: 50 EM
    iterations), citation, the parameters it fits, what its relevance estimate is, and its colour in every chart."""

    key: str
    label: str
    cls: type
    inference: str
    cite: str
    params: str
    relevance: str
    colour: str = ""


CLICK_MODELS = (
    ClickModelSpec("gctr", "GCTR", m.GCTR, "mle", "Chuklin, Markov & de Rijke 2015, §3.1 (random click model)",
                   "one click probability", "the global CTR (the same for every document)", colour="#9e9e9e"),
    ClickModelSpec("rctr", "RCTR", m.RCTR, "mle", "Chuklin, Markov & de Rijke 2015, §3.1", "CTR per rank",
                   "none (0, as PyClick)", colour="#616161"),
    ClickModelSpec("dctr", "DCTR", m.DCTR, "mle", "Chuklin, Markov & de Rijke 2015, §3.1", "CTR per (query, doc)",
                   "the document's CTR", colour="#8c564b"),
    ClickModelSpec("pbm", "PBM", m.PBM, "em", "Craswell et al., WSDM 2008; Chuklin et al. 2015 §3.4",
                   "attractiveness per (query, doc), examination per rank", "attractiveness", colour="#1f77b4"),
    ClickModelSpec("ubm", "UBM", m.UBM, "em", "Dupret & Piwowarski, SIGIR 2008",
                   "attractiveness per (query, doc), examination per (rank, rank of the last click)",
                   "attractiveness", colour="#17becf"),
    ClickModelSpec("cm", "CM", m.CM, "mle", "Craswell et al., WSDM 2008 (cascade model)",
                   "attractiveness per (query, doc)", "attractiveness", colour="#d62728"),
    ClickModelSpec("dcm", "DCM", m.DCM, "mle", "Guo, Liu & Wang, WSDM 2009",
                   "attractiveness per (query, doc), continuation after a click per rank", "attractiveness",
                   colour="#ff7f0e"),
    ClickModelSpec("sdbn", "SDBN", m.SDBN, "mle", "Chapelle & Zhang, WWW 2009 (simplified DBN)",
                   "attractiveness and satisfaction per (query, doc)", "attractiveness × satisfaction",
                   colour="#2ca02c"),
    ClickModelSpec("dbn", "DBN", dbn.DBN, "em", "Chapelle & Zhang, WWW 2009",
                   "attractiveness and satisfaction per (query, doc), one continuation γ", "attractiveness × satisfaction",
                   colour="#9467bd"),
    ClickModelSpec("ccm", "CCM", dbn.CCM, "em", "Guo, Liu, Kannan, Minka, Taylor, Wang & Faloutsos, WWW 2009",
                   "attractiveness per (query, doc), continuation τ₁ (no click), τ₂, τ₃ (after a click)",
                   "attractiveness²", colour="#e377c2"),
)
MODEL_BY_KEY = {s.key: s for s in CLICK_MODELS}
