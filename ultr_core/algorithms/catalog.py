"""What each algorithm is: citation, the equation it implements (LaTeX) and its
hyper-parameters — shown next to the controls in the app."""
from __future__ import annotations

__all__ = ["CATALOG", "formula_lines"]


def formula_lines(*parts: str) -> str:
    r"""Several formulas as one display, one per line (KaTeX ``gathered``), so that none is cut off
    in a narrow column (a 1024-px projector).

    >>> formula_lines("a = 1", "b = 2")
    '\\begin{gathered}a = 1 \\\\ b = 2\\end{gathered}'
    """
    return r"\begin{gathered}" + r" \\ ".join(parts) + r"\end{gathered}"

CATALOG = {
    "naive": dict(cite="Click Data baseline (no debiasing)",
                  latex=r"\mathcal{L} = -\sum_i c_i \log \operatorname{softmax}(f(x))_i", params=()),
    "oracle": dict(cite="Labeled Data: the same loss on true labels (upper bound)",
                   latex=r"\mathcal{L} = -\sum_i (2^{y_i}-1) \log \operatorname{softmax}(f(x))_i", params=()),
    "ips": dict(cite="Joachims, Swaminathan & Schnabel, WSDM 2017 (inverse propensity scoring)",
                latex=r"\mathcal{L} = -\sum_i \frac{o_1}{o_{p_i}}\, c_i \log \operatorname{softmax}(f(x))_i",
                params=("ips_eta", "max_weight")),
    "dla": dict(cite="Ai et al., SIGIR 2018, Dual Learning Algorithm (eq. 5–8)",
                latex=formula_lines(r"\mathcal{L}_f = -\sum_i \frac{\hat o_1}{\hat o_i} c_i \log \operatorname{softmax}(f)_i",
                                    r"\mathcal{L}_g = -\sum_i \frac{\hat r_1}{\hat r_i} c_i \log \operatorname{softmax}(g)_i"),
                params=("max_weight",)),
    "regression_em": dict(cite="Wang et al., WSDM 2018, Regression-EM",
                          latex=formula_lines(r"P(R{=}1\mid C{=}0) = \frac{(1-o)r}{1-or}", r"P(E{=}1\mid C{=}0) = \frac{o(1-r)}{1-or}"),
                          params=("em_step",)),
    "two_tower": dict(cite="Guo et al. 2019 (two-tower additive model)",
                      latex=r"\hat c = \sigma(f(x))\,\sigma(g(p)),\quad \mathcal{L} = \mathrm{BCE}(\hat c, c)", params=()),
    "pair_debias": dict(cite="Hu et al., WWW 2019, Unbiased LambdaMART (pairwise debiasing)",
                        latex=r"\mathcal{L} = \sum_{c_i=1,c_j=0} \frac{\log(1+e^{-(s_i-s_j)})}{t^+_{p_i}\,t^-_{p_j}}",
                        params=("max_weight",)),
    "vectorization": dict(cite="Chen, Liu, Liu & Sun, KDD 2022, Vectorization (\"Scalar is Not Enough\")",
                          latex=formula_lines(r"\hat c_p(x) \propto \exp\langle r(x), o_p\rangle",
                                              r"\text{score}(x) = \langle r(x), b(q)\rangle,\ b(q) = \frac{\sum_i \mu(x_i)/\sigma^2(x_i)}{\sum_i 1/\sigma^2(x_i)}"),
                          params=("vec_dim", "vec_freeze")),
    "lbd": dict(cite="Chen, Liu, Liu & Sun, NeurIPS 2022, LBD §5 eq. 2",
                latex=formula_lines(r"\text{logit}\,\hat c_p = s(x) + \gamma\, h_p(x),\ \gamma\sim\mathrm{Bern}(1-t)",
                                    r"\mathcal{L} = -\sum_i c_i \log\operatorname{softmax}(\text{logit}\,\hat c)_i + "
                                    r"\lambda \big\lVert\nabla_X \overline{\mathrm{dropout}_{0.1}(H)}\big\rVert_2^2"),
                params=("lbd_lambda", "lbd_t", "lbd_penalty")),
    "lbd_lips": dict(cite="LBD ablation: Lipschitz decoupling only (t = 0)", latex=r"t = 0", params=("lbd_lambda",)),
    "lbd_ber": dict(cite="LBD ablation: Bernoulli decoupling only (λ = 0)", latex=r"\lambda = 0", params=("lbd_t",)),
    "hte": dict(cite="HTE (LBD §6.3 / Fig. 3c, after Tian et al.): T-learner τ̂_k(x) = m_k(x)/m_1(x) on an intervention log",
                latex=r"\mathcal{L} = -\sum_i \frac{c_i}{\hat\tau_{p_i}(x_i)} \log \operatorname{softmax}(f(x))_i", params=("max_weight",)),
    "hte_oracle": dict(cite="HTE-oracle (LBD §6.3): the true τ_k(x) = o_k(x)/o_1(x)",
                       latex=r"\tau_k(x) = o_k(x)/o_1(x)", params=("max_weight",)),
    "lbd_hte_oracle": dict(cite="LBD-HTE-oracle (LBD §6.3): LBD on clicks corrected with the true τ",
                           latex=r"\text{LBD loss with click weights } 1/\tau_{p_i}(x_i)", params=("lbd_lambda", "lbd_t")),
    "unlimited": dict(cite="LBD ablation: no decoupling (λ = t = 0)", latex=r"\lambda = t = 0", params=()),
    "cld": dict(cite="CLD (Causal Likelihood Decomposition), eq. 10 and Algorithm 1 as the official code fits them "
                     "(hyz20/CLD TobitLoss): one row per (session, candidate), w = 1/ρ_p, logistic link σ, ρ = 0.5; "
                     "eq. 10 as printed (per-candidate ĉ/ρ, probit Φ) is `cld_form=\"paper_text\"`",
                latex=formula_lines(r"\min\ \tfrac1n\sum_{s=1}\Big[(wc-x^\top\beta)^2-\log\sigma\Big(\tfrac{x^\top\omega+"
                                    r"\rho(wc - x^\top\beta)}{\sqrt{1-\rho^2}}\Big)\Big]", r"- \tfrac1n\sum_{s=0}\log\sigma(-x^\top\omega)"),
                params=("cld_gamma", "cld_form", "cld_rho_eta", "propensity")),
    "cld_pair": dict(cite="CLD_pair, eq. 13 and Algorithm 2 as the official code trains them (hyz20/CLD BPRLoss_sel3): "
                          "pairs per session ordered by w·c with Δ = w_ic_i − w_jc_j, mixed (selected, unselected) "
                          "pairs in both orders with Δ = 0, drawn 1:1; the printed reading is `pair_orientation`",
                     latex=formula_lines(r"\min\ \overline{s_is_j\Delta\,\ell(d)} + \sum_{k\in\{i,j\}}\overline{s_k\,\ell(f_\omega(x_k)+d) + "
                                         r"(1-s_k)\,\ell(-f_\omega(x_k))}", r"d = f_\beta(x_i)-f_\beta(x_j),\ \ell(z) = \log(1+e^{-z})"),
                     params=("pair_orientation", "pair_both_clicked", "cld_rho_eta", "propensity")),
    "heckman": dict(cite="Ovaisi et al., WWW 2020, Heckman_rank: probit selection, then a probit of clicks with the "
                         "inverse Mills ratio; ranked by the outcome part xᵀβ",
                    latex=formula_lines(r"P(s{=}1\mid x) = \Phi(x^\top\omega)",
                                        r"P(c{=}1\mid x) = \Phi\big(x^\top\beta + \beta_\lambda \tfrac{\phi(x^\top\omega)}{\Phi(x^\top\omega)}\big),\quad \text{score} = x^\top\beta"),
                    params=("heckman",)),
    "rankagg": dict(cite="Ovaisi et al., WWW 2020, RankAgg (Borda aggregation of IPS and Heckman)",
                    latex=r"\text{score}(x) = \mathrm{rank}_{\mathrm{IPS}}(x) + \mathrm{rank}_{\mathrm{Heckman}}(x)", params=()),
}
