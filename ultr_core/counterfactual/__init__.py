"""Counterfactual (off-policy) evaluation: what a candidate ranking would be worth on a logged click log, by DM, IPS,
SNIPS, DR and the affine estimators, each with its bootstrap interval or its refusal.

The candidate (:mod:`.candidate`), the estimators' table (:mod:`.estimators`) and the one call that values a
candidate with bootstrap intervals, support and the identifiability of what it needs (:mod:`.evaluate`)."""
