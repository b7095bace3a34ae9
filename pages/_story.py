"""The Playground's verdicts: the log's identifiability box and a story about the log itself — its sentence checked
over seeds, read as sentences above the tiles, and the chart that shows it (this log's 90 % intervals of o_k/o_1
with the ×2 rule; issue #60)."""
import streamlit as st

from pages._common import memo
from ultr_core.app.igverdict import log_claim_sentence, log_span_figure
from ultr_core.app.playground import PRESET_SEEDS, check_claims, log_runs
from ultr_core.app.text import escape_markdown
from ultr_core.evaluation.claims import VERDICT_RULE_SHORT


def ig_box(ig: dict, present: bool) -> None:
    """The IG verdict: one line with its reason on a projector (the users' caveat kept), else the sentence."""
    head = f"**IG: {ig['components']} component{'s' if ig['components'] > 1 else ''}**"
    (st.success if ig["identifiable"] else st.warning)(
        f"{head} — {ig['brief'] if ig['identifiable'] else 'not identifiable: ' + ig['reason']}" if present
        else f"{head} over {ig['factors']} — " + _sentence(ig))
    if ig.get("weak"):                                        # connected is not the same as sure (issue #46)
        st.caption(f"How sure: {escape_markdown(ig['certainty'])}.")


def _sentence(ig: dict) -> str:
    """The IG box's sentence: the top-k cut first when there is one (the short form fits a 1024-px knob column)."""
    if ig.get("cut"):
        return f"{'identifiable' if ig['identifiable'] else 'not identifiable'}. {ig['cut']}" + (
            "; fixed ranking: raise exploration." if ig["hint"] else ".")
    return f"not identifiable. {ig['hint']}" if ig["hint"] else f"{ig['short']}."


def log_claims_line(preset) -> None:
    """A story about the log: its claims over the preset's seeds as one sentence, above the tiles."""
    res = memo(("pg-log-claims", preset.name, PRESET_SEEDS),
               lambda: check_claims(log_runs(preset, range(PRESET_SEEDS)), preset.log_claims))
    (st.success if (res["verdict"] == "reproduced").all() else st.warning)(
        f"**Verdict over {PRESET_SEEDS} seeds:** " + "; ".join(log_claim_sentence(c, f"**{r.verdict}**") for c, r in
                                                               zip(preset.log_claims, res.itertuples()))
        + f" ({VERDICT_RULE_SHORT}).")


def log_span_tile(log, spec: str, tile) -> None:
    """The chart the story's sentence is about, in the observation curve's place: this log's intervals."""
    st.plotly_chart(memo(("pg-story-span", spec), lambda: tile(log_span_figure(log))), key="pg_story_span")
