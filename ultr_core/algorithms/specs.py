"""The one table of learning algorithms: every place that names a method — the CLI's ``--algorithm`` choices
(:data:`~ultr_core.algorithms.config.ALGORITHMS`), the learner the training loop builds
(:data:`~ultr_core.algorithms.registry.LEARNERS`; a selection method's own fitter), the citation and equation the
pages show, each method's colour on every chart (:data:`~ultr_core.app.figures.METHOD_COLORS`), the methods that
need a top-k cut (:data:`~ultr_core.studies.experiment.SELECTION_METHODS`), the Playground's methods
(``playground``) and references (``family == "reference"``), the Train page's hyper-parameter widgets (``params``,
drawn by :mod:`ultr_core.algorithms.hyper`) and the CLD study's per-method settings (``protocols``) — derives from
:data:`ALGORITHM_SPECS`.

Adding an algorithm is one :class:`AlgorithmSpec` (:mod:`~ultr_core.algorithms.record`) here, or in an extension
module (:mod:`ultr_core.extensions`), and its learner class; ``tests/algorithms/test_algorithm_specs.py`` fails when a
record is incomplete, a learner cannot be found or two methods share a colour.  Imports without torch.

>>> SPECS_BY_KEY["dla"].label, SPECS_BY_KEY["dla"].colour, SPECS_BY_KEY["cld"].needs_topk
('DLA', '#1f77b4', True)
"""
from __future__ import annotations

from ultr_core.algorithms.record import FAMILIES, LOSSES, AlgorithmSpec, formula_lines  # noqa: F401  (re-exported)
from ultr_core.extensions import extra

__all__ = ["AlgorithmSpec", "ALGORITHM_SPECS", "SPECS_BY_KEY", "formula_lines", "FAMILIES", "LOSSES"]

#: the CLD study's two protocols (:mod:`ultr_core.studies.cld_protocols`): the official code's optimiser and
#: rankers, and the paper text's; each method's record holds its TrainConfig changes under each
_OFFICIAL_OPT = dict(optimizer="adam", lr=1e-3, weight_decay=1e-2, init="xavier_normal")
_OFFICIAL_DNN = dict(model="dnn", hidden=(256, 128, 64), dropout=0.5, **_OFFICIAL_OPT)
PAPER_DNN = dict(model="dnn", hidden=(256, 128, 64), dropout=0.5, init="xavier", weight_decay=1e-3, lr=1e-3)
PAPER_LINEAR = dict(model="linear", init="xavier", weight_decay=1e-3, lr=5e-3)


def _cld(official: dict, paper_text: dict) -> dict:
    return {"official": official, "paper_text": paper_text}


#: what the observation curve of LBD and its ablations is (their observation head sees the document)
LBD_CURVE = ("the mean of its observation head h_p(x) over the documents shown at each position (a running average "
             "over batches); the head sees the document, is left out of a share t of the logits (Bernoulli) and kept "
             "smooth in x by the penalty λ — nothing fits it to this per-position average: read LBD by its ranking, "
             "not by this curve")

ALGORITHM_SPECS = (
    AlgorithmSpec("naive", "Naive", "#7f7f7f", "reference", "listwise", "learners:Naive",
                  cite="Click Data baseline (no debiasing)",
                  latex=r"\mathcal{L} = -\sum_i c_i \log \operatorname{softmax}(f(x))_i", params=(),
                  protocols=_cld(dict(ips_form="pairwise", **_OFFICIAL_DNN), dict(**PAPER_DNN))),
    AlgorithmSpec("oracle", "Oracle", "#2ca02c", "reference", "listwise", "learners:Oracle",
                  cite="Labeled Data: the same loss on true labels (upper bound)",
                   latex=r"\mathcal{L} = -\sum_i (2^{y_i}-1) \log \operatorname{softmax}(f(x))_i", params=(),
                  protocols=_cld(dict(**_OFFICIAL_DNN), dict(**PAPER_DNN))),
    AlgorithmSpec("ips", "IPS", "#ff7f0e", "position", "listwise", "learners:IPS",
                  cite="Joachims, Swaminathan & Schnabel, WSDM 2017 (inverse propensity scoring)",
                latex=r"\mathcal{L} = -\sum_i \frac{o_1}{o_{p_i}}\, c_i \log \operatorname{softmax}(f(x))_i",
                params=("ips_eta", "max_weight"),
                  curve="the propensities it divides by: the log's true o_p, or the curve of the η′ it assumes",
                  protocols=_cld(dict(ips_form="pairwise", max_weight=None, propensity="estimated", **_OFFICIAL_DNN),
                                 dict(**PAPER_DNN)),
                  playground=True),
    AlgorithmSpec("cm_ips", "CM-IPS", "#b15928", "position", "listwise", "learners:CMIPS",
                  cite="Vardasbi, de Rijke & Markov, SIGIR 2020 (cascade model-based propensities, CM-IPS): "
                       "ρ_k from the clicks above k, λ fitted by DCM on the training log",
                  latex=formula_lines(r"\rho_k = \prod_{i<k} \big(1 - c_i (1 - \lambda_i)\big)",
                                      r"\mathcal{L} = -\sum_k \frac{c_k}{\rho_k} \log \operatorname{softmax}(f(x))_k"),
                  params=("max_weight",),
                  curve="its mean propensity ρ per position over the training sessions (ρ itself differs per session)",
                  playground=True),
    AlgorithmSpec("dla", "DLA", "#1f77b4", "position", "listwise", "learners:DLA",
                  cite="Ai et al., SIGIR 2018, Dual Learning Algorithm (eq. 5–8)",
                latex=formula_lines(r"\mathcal{L}_f = -\sum_i \frac{\hat o_1}{\hat o_i} c_i \log "
                                    r"\operatorname{softmax}(f)_i",
                                    r"\mathcal{L}_g = -\sum_i \frac{\hat r_1}{\hat r_i} c_i \log "
                                    r"\operatorname{softmax}(g)_i"),
                params=("max_weight",),
                  curve="its propensity tower ô_p, estimated jointly with the ranker",
                  playground=True),
    AlgorithmSpec("regression_em", "RegressionEM", "#9467bd", "position", "pointwise", "learners:RegressionEM",
                  cite="Wang et al., WSDM 2018, Regression-EM",
                  latex=formula_lines(r"P(R{=}1\mid C{=}0) = \frac{(1-o)r}{1-or}",
                                      r"P(E{=}1\mid C{=}0) = \frac{o(1-r)}{1-or}"),
                          params=("em_step",),
                  curve="its observation parameters ô_p from the EM step",
                  playground=True),
    AlgorithmSpec("two_tower", "TwoTower", "#8c564b", "position", "pointwise", "learners:TwoTower",
                  cite="Guo et al. 2019 (two-tower additive model)",
                  latex=r"\hat c = \sigma(f(x))\,\sigma(g(p)),\quad \mathcal{L} = \mathrm{BCE}(\hat c, c)",
                  curve="its position tower σ(g(p))"),
    AlgorithmSpec("pair_debias", "PairDebias", "#e377c2", "position", "pairwise", "learners:PairDebias",
                  cite="Hu et al., WWW 2019, Unbiased LambdaMART (pairwise debiasing)",
                        latex=r"\mathcal{L} = \sum_{c_i=1,c_j=0} \frac{\log(1+e^{-(s_i-s_j)})}{t^+_{p_i}\,t^-_{p_j}}",
                        params=("max_weight",),
                  curve="its estimated position propensities t⁺_p",
                  playground=True),
    AlgorithmSpec("vectorization", "Vectorization", "#6a3d9a", "individual", "listwise", "individual:Vectorization",
                  cite="Chen, Liu, Liu & Sun, KDD 2022, Vectorization (\"Scalar is Not Enough\")",
                          latex=formula_lines(r"\hat c_p(x) \propto \exp\langle r(x), o_p\rangle",
                                              r"\text{score}(x) = \langle r(x), b(q)\rangle,\ b(q) = \frac{\sum_i "
                                              r"\mu(x_i)/\sigma^2(x_i)}{\sum_i 1/\sigma^2(x_i)}"),
                          params=("vec_dim", "vec_freeze"),
                  curve="none: observation is a vector per position, with no scalar curve",
                  playground=True),
    AlgorithmSpec("lbd", "LBD", "#d62728", "individual", "listwise", "individual:LBD",
                  cite="Chen, Liu, Liu & Sun, NeurIPS 2022, LBD §5 eq. 2",
                latex=formula_lines(r"\text{logit}\,\hat c_p = s(x) + \gamma\, h_p(x),\ \gamma\sim\mathrm{Bern}(1-t)",
                                    r"\mathcal{L} = -\sum_i c_i \log\operatorname{softmax}(\text{logit}\,\hat c)_i + "
                                    r"\lambda \big\lVert\nabla_X \overline{\mathrm{dropout}_{0.1}(H)}\big\rVert_2^2"),
                params=("lbd_lambda", "lbd_t", "lbd_penalty"),
                  curve=LBD_CURVE,
                  playground=True),
    AlgorithmSpec("lbd_lips", "LBD_Lips", "#ff9896", "individual", "listwise", "individual:LBDLips",
                  cite="LBD ablation: Lipschitz decoupling only (t = 0)", latex=r"t = 0", params=("lbd_lambda",),
                  curve=LBD_CURVE),
    AlgorithmSpec("lbd_ber", "LBD_Ber", "#f7b6d2", "individual", "listwise", "individual:LBDBer",
                  cite="LBD ablation: Bernoulli decoupling only (λ = 0)", latex=r"\lambda = 0", params=("lbd_t",),
                  curve=LBD_CURVE),
    AlgorithmSpec("unlimited", "Unlimited", "#bcbd22", "individual", "listwise", "individual:Unlimited",
                  cite="LBD ablation: no decoupling (λ = t = 0)", latex=r"\lambda = t = 0", params=(), curve=LBD_CURVE),
    AlgorithmSpec("hte", "HTE", "#e6550d", "individual", "listwise", "individual:HTE",
                  cite="HTE (LBD §6.3 / Fig. 3c, after Tian et al.): T-learner τ̂_k(x) = m_k(x)/m_1(x) on an "
                       "intervention log",
                latex=r"\mathcal{L} = -\sum_i \frac{c_i}{\hat\tau_{p_i}(x_i)} \log \operatorname{softmax}(f(x))_i",
                params=("max_weight",)),
    AlgorithmSpec("hte_oracle", "HTE-oracle", "#fdae6b", "individual", "listwise", "individual:HTEOracle",
                  cite="HTE-oracle (LBD §6.3): the true τ_k(x) = o_k(x)/o_1(x)",
                       latex=r"\tau_k(x) = o_k(x)/o_1(x)", params=("max_weight",)),
    AlgorithmSpec("lbd_hte_oracle", "LBD-HTE-oracle", "#843c39", "individual", "listwise", "individual:LBDHTEOracle",
                  cite="LBD-HTE-oracle (LBD §6.3): LBD on clicks corrected with the true τ",
                           latex=r"\text{LBD loss with click weights } 1/\tau_{p_i}(x_i)", params=("lbd_lambda",
                           "lbd_t"), curve=LBD_CURVE),
    AlgorithmSpec("bayes_ips", "Bayes-IPS", "#fdbf6f", "beyond", "listwise", "trust_and_policy:BayesIPS",
                  cite="Agarwal, Wang, Li, Bendersky & Najork, WWW 2019, Bayes-IPS, in the trust-bias EM code's "
                       "form (AliVard/trust-bias-CIKM2020 TrustParams.py)",
                  latex=r"\mathcal{L} = -\sum_k \frac{c_k}{\theta_k(\epsilon^+_k+\epsilon^-_k)} \log "
                        r"\operatorname{softmax}(f(x))_k", params=("max_weight", "propensity"),
                  curve="θ_k(ε⁺_k + ε⁻_k) = α_k + 2β_k, the click probability it divides by (true, or fitted on swaps)",
                  playground=True),
    AlgorithmSpec("affine_ips", "Affine-IPS", "#1b9e77", "beyond", "listwise", "trust_and_policy:AffineIPS",
                  cite="Vardasbi, Oosterhuis & de Rijke, CIKM 2020, affine correction",
                  latex=formula_lines(r"\hat R_k = \frac{c_k - \beta_k}{\alpha_k},\ \alpha_k = \theta_k(\epsilon^+_k - "
                                      r"\epsilon^-_k),\ \beta_k = \theta_k\epsilon^-_k",
                                      r"\mathcal{L} = -\sum_k \hat R_k \log \operatorname{softmax}(f(x))_k"),
                  params=("max_weight", "propensity"),
                  curve="α_k = θ_k(ε⁺_k − ε⁻_k), the signal it divides by (true, or fitted on swaps)",
                  playground=True),
    AlgorithmSpec("policy_aware", "Policy-aware IPS", "#7570b3", "beyond", "listwise",
                  "trust_and_policy:PolicyAwareIPS",
                  cite="Oosterhuis & de Rijke, SIGIR 2020, policy-aware IPS for top-k and stochastic "
                       "logging",
                  latex=formula_lines(r"\rho(d) = \sum_k \pi(k \mid d)\,\theta_k",
                                      r"\mathcal{L} = -\sum_d \frac{c_d}{\rho(d)} \log \operatorname{softmax}(f(x))_d"),
                  params=("max_weight", "propensity"),
                  curve="θ_k, averaged per document over the logging policy's rankings into ρ(d)",
                  playground=True),
    AlgorithmSpec("dr", "DR", "#e7298a", "beyond", "listwise", "trust_and_policy:DoublyRobust",
                  cite="Oosterhuis, TOIS 2023, doubly robust estimation (HarrieO/2022-doubly-robust-LTR "
                       "utils/estimators.py)",
                  latex=formula_lines(r"\hat R(d) = \hat r(d) + \frac{c_d - \alpha_k \hat r(d) - \beta_k}"
                                      r"{\max(\bar\alpha_d, 10/\sqrt N)}",
                                      r"\mathcal{L} = -\sum_d \hat R(d) \log \operatorname{softmax}(f(x))_d"),
                  params=("propensity",),
                  curve="α_k = θ_k(ε⁺_k − ε⁻_k); per document its expectation ᾱ_d over the logging policy",
                  playground=True),
    AlgorithmSpec("cld", "CLD", "#17becf", "selection", "pointwise", "topk_selection:fit_cld",
                  cite="CLD (Causal Likelihood Decomposition), eq. 10 and Algorithm 1 as the official code fits them "
                     "(hyz20/CLD TobitLoss): one row per (session, candidate), w = 1/ρ_p, logistic link σ, ρ = 0.5; "
                     "eq. 10 as printed (per-candidate ĉ/ρ, probit Φ) is `cld_form=\"paper_text\"`",
                latex=formula_lines(r"\min\ \tfrac1n\sum_{s=1}\Big[(wc-x^\top\beta)^2"
                                    r"-\log\sigma\Big(\tfrac{x^\top\omega+\rho(wc - x^\top\beta)}"
                                    r"{\sqrt{1-\rho^2}}\Big)\Big]",
                                    r"- \tfrac1n\sum_{s=0}\log\sigma(-x^\top\omega)"),
                params=("cld_gamma", "cld_form", "cld_rho_eta", "propensity"),
                  protocols=_cld(dict(cld_form="official", cld_gamma=0.5, propensity="estimated", model="linear",
                                      **_OFFICIAL_OPT), dict(cld_form="paper_text", cld_gamma=0.15, **PAPER_LINEAR)),
                  playground=True),
    AlgorithmSpec("cld_pair", "CLD_pair", "#0b7285", "selection", "pairwise", "topk_selection:fit_cld_pair",
                  cite="CLD_pair, eq. 13 and Algorithm 2 as the official code trains them (hyz20/CLD BPRLoss_sel3): "
                          "pairs per session ordered by w·c with Δ = w_ic_i − w_jc_j, mixed (selected, unselected) "
                          "pairs in both orders with Δ = 0, drawn 1:1; the printed reading is `pair_orientation`",
                     latex=formula_lines(r"\min\ \overline{s_is_j\Delta\,\ell(d)} + "
                                         r"\sum_{k\in\{i,j\}}\overline{s_k\,\ell(f_\omega(x_k)+d) + "
                                         r"(1-s_k)\,\ell(-f_\omega(x_k))}",
                                         r"d = f_\beta(x_i)-f_\beta(x_j),\ \ell(z) = \log(1+e^{-z})"),
                     params=("pair_orientation", "pair_both_clicked", "cld_rho_eta", "propensity"),
                  protocols=_cld(dict(pair_orientation="official", propensity="estimated", **_OFFICIAL_DNN),
                                 dict(pair_orientation="random", **PAPER_DNN))),
    AlgorithmSpec("heckman", "Heckman", "#c49c94", "selection", "pointwise", "topk_selection:fit_heckman",
                  cite="Ovaisi et al., WWW 2020, Heckman_rank: probit selection, then a probit of clicks with the "
                         "inverse Mills ratio; ranked by the outcome part xᵀβ",
                    latex=formula_lines(r"P(s{=}1\mid x) = \Phi(x^\top\omega)",
                                        r"P(c{=}1\mid x) = \Phi\big(x^\top\beta + \beta_\lambda "
                                        r"\tfrac{\phi(x^\top\omega)}{\Phi(x^\top\omega)}\big),\quad \text{score} = "
                                        r"x^\top\beta"),
                    params=("heckman",),
                  protocols=_cld(dict(heckman="official", model="linear", **_OFFICIAL_OPT),
                                 dict(heckman="ovaisi", **PAPER_LINEAR))),
    AlgorithmSpec("rankagg", "RankAgg", "#dbdb8d", "selection", "pointwise", "topk_selection:fit_rankagg",
                  cite="Ovaisi et al., WWW 2020, RankAgg (Borda aggregation of IPS and Heckman)",
                  latex=r"\text{score}(x) = \mathrm{rank}_{\mathrm{IPS}}(x) + \mathrm{rank}_{\mathrm{Heckman}}(x)",
                  protocols=_cld(dict(heckman="official", ips_form="pairwise", max_weight=None, propensity="estimated",
                                      **_OFFICIAL_DNN), dict(heckman="ovaisi", **PAPER_DNN)),
                  aggregates="ips"),

)
ALGORITHM_SPECS += extra("ALGORITHM_SPECS")     # records of extension modules (ultr_core.extensions)
SPECS_BY_KEY = {s.key: s for s in ALGORITHM_SPECS}
