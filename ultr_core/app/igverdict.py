"""The Playground's identifiability box: the verdict of a simulated log's graph in one sentence, its short forms and
what the graph says nothing about (a top-k cut's unshown candidates, cascade users' examination)."""
from __future__ import annotations

import numpy as np

__all__ = ["verdict", "unshown_candidates", "certainty", "certainty_rows", "WEAK_RULE"]


def verdict(log) -> dict:
    """The identifiability verdict of a log over its bias factors (position, plus context when the
    log has contexts) with (query, document) pairs as documents: the number of IG components and
    one sentence that says what it means (Identifiability Matters, Thm. 1); ``hint`` says what to
    change when a fixed ranking is the cause (else None); ``reason`` is the short why of a disconnected graph (the
    projector's one line); ``cut`` counts the candidates a top-k cut never showed (else None) — the graph says
    nothing about them; ``users`` says, under cascade users, that the verdict is about PBM users (else None);
    ``brief`` is the projector's one line for a connected graph, the users' caveat kept.

    >>> from ultr_core.simulation.logspec import LogSpec
    >>> _, _, log = LogSpec.parse("synthetic:50/shuffle=0.5/blocks=2/sessions=2000").simulate()
    >>> v = verdict(log); (v["components"], v["identifiable"])
    (2, False)
    """
    from ultr_core.clickmodels.registry import DEFAULT_USER_MODEL, MODEL_BY_KEY
    from ultr_core.identifiability import IdentifiabilityGraph
    g = IdentifiabilityGraph.from_log(log)
    k, n = g.n_components, g.n_factors
    factors = " × ".join(g.bias_columns)
    users = log.meta.get("click_model", {}).get("user_model", DEFAULT_USER_MODEL)
    theorem = MODEL_BY_KEY[users].position_only          # Theorem 1 is about examination by the bias factors alone
    pbm = "" if theorem else " for PBM users"
    short = ("identifiable: relevance is recoverable up to one scale" if k == 1 and theorem else
             f"identifiable for PBM users only: {MODEL_BY_KEY[users].label} users {MODEL_BY_KEY[users].cls.IG_MEANING}"
             if k == 1 else "not identifiable: relevance is comparable only within a component")
    if k == 1:
        text = (f"Identifiable{pbm}: the {n} bias factors ({factors}) form one connected graph, so relevance "
                "can be recovered up to one scale.")
    else:
        text = (f"Not identifiable from clicks alone: the {n} bias factors ({factors}) fall into {k} "
                f"components (largest holds {g.sizes[0] / n:.0%}); relevance is comparable only within a component.")
    users_note = None
    if not theorem:
        users_note = (f"The graph's verdict is about PBM users (examination by position alone); "
                      f"{MODEL_BY_KEY[users].label} users {MODEL_BY_KEY[users].cls.IG_MEANING}, which the graph does "
                      "not model.")
        text += " " + users_note
    hint = None
    cut = unshown_candidates(log)
    cut_note = f"{cut[0]:,} of {cut[1]:,} candidates never shown (top-k cut)" if cut else None
    if cut_note:
        text += f" {cut_note}: no click says anything about them."
    if k > 1 and log.meta.get("click_model", {}).get("shuffle", 0) == 0:
        hint = "A fixed ranking shows each document at one position: raise exploration (shuffled sessions)."
        text += " " + hint
    reason = None if k == 1 else ("fixed ranking — raise exploration" if hint else "no document links the components")
    brief = ("identifiable" if theorem else
             f"identifiable for PBM users only — {MODEL_BY_KEY[users].label} users: {MODEL_BY_KEY[users].cls.IG_SHORT}")
    return {"components": k, "identifiable": k == 1, "factors": factors, "nodes": n, "text": text,
            "short": short, "brief": brief, "hint": hint, "cut": cut_note, "reason": reason, "users": users_note,
            **certainty(g)}


def certainty(g) -> dict:
    """How sure (issue #46): per factor the standard error of log(o_k / o_ref) and its level, and one sentence
    naming the weakly identified factors — the graph may be connected and still unsure."""
    from ultr_core.identifiability.precision import graph_uncertainty
    from ultr_core.identifiability.uncertainty import WEAK_SPAN, identification
    from ultr_core.logs.coding import tuple_labels
    u = graph_uncertainty(g)
    levels = identification(u.log_se)
    labels = tuple_labels(g.factors)
    weak = [labels[i] for i in np.flatnonzero(levels == "weak")]
    if not weak:
        sure = f"every factor's 90 % interval (÷ its reference) within ×{WEAK_SPAN:g}"
    else:
        shown = ", ".join(weak[:4]) + (f" and {len(weak) - 4} more" if len(weak) > 4 else "")
        sure = f"yet unsure about {shown}: 90 % intervals wider than ×{WEAK_SPAN:g}"
    from ultr_core.identifiability.resistance import weakest_links
    link = next((x for x in weakest_links(u, labels, top=1)), None)
    if weak and link:
        sure += f"; weakest link {link.link} ({link.share:.0%} of the variance)"
    return {"certainty": sure, "weak": weak, "labels": labels,
            "log_se": [float(x) if np.isfinite(x) else None for x in u.log_se], "levels": levels.tolist()}


def certainty_rows(log, seed: int) -> list[dict]:
    """A seed's rows for the claims of a story about the log itself: per factor its standard error of log(o_k /
    o_ref) (method = the factor's label, metric ``log_se``), and the ×2 rule as a reference row."""
    from ultr_core.identifiability import IdentifiabilityGraph
    from ultr_core.identifiability.uncertainty import WEAK_SPAN, Z90
    c = certainty(IdentifiabilityGraph.from_log(log))
    rows = [{"seed": seed, "method": lab, "log_se": se} for lab, se in zip(c["labels"], c["log_se"])]
    return rows + [{"seed": seed, "method": WEAK_RULE, "log_se": float(np.log(WEAK_SPAN) / (2 * Z90))}]


#: the reference row of a certainty claim: the standard error at which a 90 % interval spans ×2
WEAK_RULE = "×2 rule"


def log_claim_sentence(claim, verdict: str) -> str:
    """A story's claim about the ×2 rule as the sentence it checks (issue #60: not "position=10 − ×2 rule > 0").

    >>> from ultr_core.evaluation.claims import Claim
    >>> log_claim_sentence(Claim("position=10", WEAK_RULE, "log_se"), "reproduced")
    "position=10's 90 % interval of o_k/o_1 spans more than ×2: reproduced"
    >>> log_claim_sentence(Claim(WEAK_RULE, "position=2", "log_se"), "not resolved")
    "position=2's spans less than ×2: not resolved"
    """
    if claim.worse == WEAK_RULE:
        return f"{claim.better}'s 90 % interval of o_k/o_1 spans more than ×2: {verdict}"
    if claim.better == WEAK_RULE:
        return f"{claim.worse}'s spans less than ×2: {verdict}"
    return f"{claim.text}: {verdict}"


def log_span_figure(log):
    """The chart a story about a log's certainty draws: every factor's 90 % interval span with the ×2 rule."""
    from ultr_core.app.certainty_figures import factor_span_figure
    from ultr_core.identifiability import IdentifiabilityGraph
    from ultr_core.identifiability.precision import factor_levels, graph_uncertainty
    g = IdentifiabilityGraph.from_log(log)
    labels, se, levels = factor_levels(g, graph_uncertainty(g))
    return factor_span_figure(labels, se, levels.tolist())


def unshown_candidates(log) -> tuple[int, int] | None:
    """(never shown, all) candidate (query, document) pairs of a log with a top-k cut; None when every one was shown.

    >>> from ultr_core.simulation.logspec import LogSpec
    >>> unshown_candidates(LogSpec.parse("synthetic:50/topk=3/shuffle=0/sessions=500").simulate()[2])
    (210, 300)

    (the log covers the 30 training queries; a fixed ranking shows 3 of their 10 candidates)
    """
    f = log.frame
    seen = f.groupby(["query_id", "doc_id"], sort=False)["shown"].any()
    never = int((~seen).sum())
    return (never, len(seen)) if never else None
