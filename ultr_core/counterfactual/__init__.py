"""Counterfactual (off-policy) evaluation of a candidate ranking on a logged click log (issue #47, item 4): the
candidate (:mod:`.candidate`), the estimators' table (:mod:`.estimators`) and the one call that values a candidate
with bootstrap intervals, support and the identifiability of what it needs (:mod:`.evaluate`)."""
