"""The teaching playground: settings, presets and verdict (core) and its page (AppTest)."""
import json
from pathlib import Path

import pytest
from apphelp import no_crash
from streamlit.testing.v1 import AppTest

from ultr_core.app.playground import METHODS, PRESETS, PlaygroundSettings, verdict
from ultr_core.errors import ConfigError
from ultr_core.simulation.logspec import LogSpec

ROOT = Path(__file__).resolve().parents[2]


def test_settings_make_one_log_spec_and_references_first():
    s = PlaygroundSettings(eta=2.0, topk=5, coupling=0.3, contexts=5, shuffle=0.2, blocks=2,
                           methods=("lbd", "dla", "lbd"))
    spec = LogSpec.parse(s.log_spec().to_string())
    assert (spec.click.eta, spec.click.topk, spec.click.coupling, spec.click.n_contexts) == (2.0, 5, 0.3, 5)
    assert (spec.click.shuffle, spec.click.shuffle_blocks, spec.n_sessions) == (0.2, 2, 10_000)
    cfgs = s.train_configs()
    assert [c.display_name for c in cfgs] == ["Naive", "Oracle", "LBD", "DLA"]      # duplicates dropped
    assert {(c.steps, c.lr, c.seed) for c in cfgs} == {(300, 0.01, 0)}
    assert all(c.lbd_lambda is None for c in cfgs)                                  # Table 3 for the log's η_c


@pytest.mark.parametrize("kw, field", [(dict(steps=10), "steps"), (dict(sessions=10**7), "sessions"),
                                       (dict(methods=("oracle",)), "methods"), (dict(eta=99), "eta"),
                                       (dict(blocks=0), "shuffle_blocks"), (dict(dataset="/etc"), "dataset"),
                                       (dict(methods=("cld",)), "methods")])
def test_settings_validation_names_the_field(kw, field):
    with pytest.raises(ConfigError) as e:
        PlaygroundSettings(**kw)
    assert e.value.field == field


def test_every_preset_is_valid_and_short():
    assert len(PRESETS) == 6
    for p in PRESETS:
        s = PlaygroundSettings(**p.changes)
        assert set(s.methods) <= set(METHODS)
        assert len(p.story) <= 220 and p.cite          # fits two lines above the charts, with its source


def test_verdict_counts_components_and_explains_fixed_rankings():
    _, _, fixed = LogSpec.parse("synthetic:60/sessions=1000").simulate()
    v = verdict(fixed)
    assert (v["components"], v["identifiable"]) == (10, False)       # a fixed ranker: one document, one position
    assert "fixed ranking" in v["text"]
    _, _, explored = LogSpec.parse("synthetic:60/shuffle=0.2/sessions=1000").simulate()
    assert verdict(explored)["identifiable"]
    _, _, ctx = LogSpec.parse("synthetic:60/shuffle=0.2/contexts=3/sessions=3000").simulate()
    assert verdict(ctx)["factors"] == "context × position"


# ------------------------------------------------------------------ the page
def page() -> AppTest:
    return AppTest.from_file(str(ROOT / "pages" / "playground.py"), default_timeout=60)


def _finish(at):
    job = at.session_state["pg_job"]
    assert job.join(90), "the playground run did not finish"
    return at.run()


def test_playground_starts_by_itself_and_shows_all_four_tiles():
    at = page().run()
    assert no_crash(at) and not at.error
    job = at.session_state["pg_job"]
    # no button: submitted on its own (queued when an earlier test's jobs still hold the workers)
    assert job is not None and job.status in ("queued", "running", "done")
    at = _finish(at)
    assert no_crash(at) and not at.error
    assert list(job.result) == ["Naive", "Oracle", "DLA", "LBD"]
    assert job.result["Oracle"]["metrics"]["ndcg@3"] > job.result["Naive"]["metrics"]["ndcg@3"]
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    titles = [c["layout"]["title"]["text"] for c in charts]
    assert titles[0] == "Click-through rate by position" and "validation nDCG@3" in titles[1]
    assert titles[2].startswith("Observation curve")
    assert all(c["layout"]["height"] <= 260 for c in charts)          # tiles that fit one screen
    refs = {d["name"] for d in charts[1]["data"] if d["line"]["dash"] == "dash"}
    assert refs == {"Naive (reference)", "Oracle (reference)"}
    assert "truth" in {d["name"] for d in charts[2]["data"]}
    assert at.success and "IG: 1 component" in at.success[0].value
    assert len(at.dataframe) == 1
    assert at.query_params["eta"] in ("1.0", ["1.0"]) and at.query_params["methods"] in ("dla,lbd", ["dla,lbd"])  # keys


def test_moving_a_knob_restarts_training_on_the_new_log():
    at = page().run()
    first = at.session_state["pg_job"]
    at.slider(key="pg_eta").set_value(2.0).run()
    second = at.session_state["pg_job"]
    assert second is not first
    assert first.join(30) and first.status in ("stopped", "done")
    at = _finish(at)
    assert all("eta=2.0" in j._args[0] for j in second.jobs)  # the worker simulates this spec
    at.run()                                                        # a rerun without a change does not restart
    assert at.session_state["pg_job"] is second


@pytest.mark.slow
def test_preset_sets_its_knobs_and_tells_its_story():
    at = page().run()
    at.number_input(key="pg_seed").set_value(7).run()
    at.selectbox(key="pg_preset").select("two components: features bridge them").run()
    assert no_crash(at)
    assert at.slider(key="pg_shuffle").value == 0.3 and at.select_slider(key="pg_blocks").value == 2
    assert at.number_input(key="pg_seed").value == 0 and at.select_slider(key="pg_seeds").value == 5
    assert any("Thm. 1" in c.value for c in at.caption)
    job = at.session_state["pg_job"]
    assert [j._args[0][-6:] for j in job.jobs] == [f"seed={s}" for s in range(5) for _ in range(3)]
    at = _finish(at)
    assert at.warning and "IG: 2 components" in at.warning[0].value
    # the tile is read with its uncertainty: mean [90 % interval] over the preset's five seeds, and the claim's verdict
    table = at.dataframe[0].value
    assert list(table["method"]) == ["Naive", "Oracle", "DLA"]
    assert all(t.count("[") == 1 for t in table["90 % interval"])
    assert any("over 5 of 5 seeds" in c.value for c in at.caption)
    verdict = next(c.value for c in at.caption if "Oracle beats DLA:" in c.value and "over 5 of 5" in c.value)
    # docs/results/playground_presets.md, seeds 0–4: each of the story's three claims — the table's two and the chart's
    # one — read as a sentence with its labelled difference (issue #60)
    for claim in ("DLA beats Naive: **reproduced** (DLA − Naive = +", "Oracle beats DLA: **reproduced** (Oracle − DLA",
                  "DLA's observation curve fits the truth better than a flat curve: **reproduced** (DLA − flat curve"):
        assert claim in verdict, verdict
    assert not any("not a per-position estimate" in c.value for c in at.caption)    # DLA's curve is one


def test_several_seeds_give_an_interval_per_method():
    at = page()
    at.query_params.update({"seeds": "3", "steps": "100", "methods": "DLA"})
    at.run()
    job = at.session_state["pg_job"]
    assert len(job.jobs) == 9
    at = _finish(at)
    assert no_crash(at) and not at.error
    runs = [j.result for j in job.jobs]
    dla = [r["DLA"]["metrics"]["ndcg@3"] for r in runs if "DLA" in r]
    assert len(dla) == 3 and len(set(dla)) == 3                      # three seeds, three different runs
    from ultr_core.evaluation.stats import mean_ci
    m, lo, hi = mean_ci(dla)
    row = at.dataframe[0].value.set_index("method").loc["DLA"]
    assert (row["nDCG@3"], row["90 % interval"]) == (f"{m:.3f}", f"[{max(lo, 0):.3f}, {min(hi, 1):.3f}]")
    assert any("over 3 of 3 seeds" in c.value for c in at.caption)
    assert not any("**reproduced**" in c.value for c in at.caption)   # no preset: no claim to check


def test_link_restores_preset_and_explicit_knobs_and_clamps_bad_values():
    at = page()
    at.query_params.update({"preset": "position bias breaks Naive", "noise": "0.2", "steps": "100",
                            "seed": "-4", "methods": "DLA,Nonsense"})
    at.run()
    assert no_crash(at) and not at.error
    assert at.slider(key="pg_eta").value == 2.0                     # from the preset
    assert at.slider(key="pg_noise").value == 0.2                   # the link's own value wins
    assert at.select_slider(key="pg_steps").value == 100
    assert at.number_input(key="pg_seed").value == 0                # clamped, with a notice
    assert any("seed=-4 is below 0" in i.value for i in at.info)
    assert at.multiselect(key="pg_methods").value == ["DLA"]     # a label: what older links stored
    at.session_state["pg_job"].stop()


def test_links_store_method_keys_and_old_label_links_still_open():
    """A renamed label must not break a link: links store keys (``methods=dla,ips``); ``DLA,IPS`` still reads."""
    for raw in ("dla,ips", "DLA,IPS", "dla,IPS"):
        at = page()
        at.query_params.update({"methods": raw, "steps": "100"})
        at.run()
        assert no_crash(at) and not at.error
        assert at.multiselect(key="pg_methods").value == ["DLA", "IPS"], raw
        assert at.query_params["methods"] in ("dla,ips", ["dla,ips"]), raw
        at.session_state["pg_job"].stop()


def test_cld_without_a_cut_gets_one_and_a_cut_removed_drops_cld():
    """CLD needs a top-k cut: choosing it sets one (the knob moved last wins), removing the cut drops CLD — each
    said in one line, the knobs and tiles kept (issue #49; the page used to show only an error)."""
    at = page().run()
    at.multiselect(key="pg_methods").set_value(["CLD"]).run()
    assert no_crash(at) and not at.error
    assert at.select_slider(key="pg_topk").value == 3 and at.slider(key="pg_eta").value == 1.0
    assert any("the shown top-k was set to 3" in c.value for c in at.caption)
    assert at.session_state["pg_running_settings"].methods == ("cld",)
    at.select_slider(key="pg_topk").set_value("all").run()
    assert no_crash(at) and not at.error and at.multiselect(key="pg_methods").value == []
    assert any("CLD was left out" in c.value for c in at.caption)
    at.session_state["pg_job"].stop()


def test_presentation_mode_hides_the_sidebar():
    at = page()
    at.query_params["present"] = "1"
    at.run()
    css = " ".join(m.value for m in at.markdown)
    assert 'section[data-testid="stSidebar"]' in css and "font-size: 18px" in css
    assert at.toggle(key="pg_present").value and at.slider(key="pg_eta").value == 1.0     # the knobs, in a popover
    assert not at.sidebar.select_slider                                                    # nothing in the sidebar
    at.session_state["pg_job"].stop()


def test_every_playground_setting_is_one_knob_and_links_round_trip():
    """The one table of knobs (ultr_core.app.knobs): every PlaygroundSettings field has exactly one knob, and each
    preset's settings go widget → URL → widget → settings unchanged (what a shared link carries)."""
    from dataclasses import fields

    from ultr_core.app.knobs import KNOBS
    from ultr_core.app.playground import PRESETS, PlaygroundSettings
    # every field but ``extra`` (the values of the knobs an extension adds) has exactly one knob
    assert sorted(f.name for f in fields(PlaygroundSettings) if f.name != "extra") == sorted(k.field for k in KNOBS)
    assert len({k.query for k in KNOBS}) == len(KNOBS)
    for preset in PRESETS:
        s = preset.settings(seeds=5)
        state = {k.key: k.to_widget(getattr(s, k.field)) for k in KNOBS}
        back = {k.key: (k.parse(k.to_url(v)) if k.lo is None else k.cast(k.to_url(v)))
                for k, v in zip(KNOBS, state.values())}
        assert back == state, preset.name
        assert PlaygroundSettings(**{k.field: k.to_setting(back[k.key]) for k in KNOBS}) == s, preset.name


def test_the_ig_box_names_the_top_k_cut_when_it_hides_candidates():
    at = page().run()
    at.selectbox(key="pg_preset").select("top-k cut hides relevance").run()
    assert no_crash(at)
    box = next(w.value for w in at.warning if "IG:" in w.value)
    assert "candidates never shown (top-k cut)" in box and box.index("top-k cut") > box.index("components")


def test_no_knob_or_link_wipes_the_tiles():
    """Cascade users with PBM's coupling and contexts, from a link and from a knob, in both modes; CLD without a
    top-k: the tiles stay and one plain line says what was changed (issue #49: the page showed only "Please check
    the input — user_model: …")."""
    from apphelp import no_crash, page
    cases = [({"users": "cm", "coupling": "0.5", "contexts": "20"}, "were turned off"),
             ({"methods": "CLD"}, "the shown top-k was set to 3"),
             ({"preset": "coupling breaks DLA, LBD holds", "present": "1"}, None)]     # the knobs below act on it
    for query, words in cases:
        at = page("playground.py", timeout=120)
        for k, v in query.items():
            at.query_params[k] = v
        at.run()
        notes = " ".join(c.value for c in at.caption if c.value.startswith("⚠"))
        assert no_crash(at) and not at.error and len(at.get("plotly_chart")) >= 2, query
        assert (words in notes) if words else not notes, (query, notes)
    at.selectbox(key="pg_user_model").set_value("dbn").run()                 # a knob inside the presentation popover
    assert no_crash(at) and not at.error and at.session_state["pg_coupling"] == 0.0
    assert any("DBN users have their own examination" in c.value for c in at.caption)
    at.slider(key="pg_coupling").set_value(0.5).run()                   # the knob moved last wins
    assert no_crash(at) and at.session_state["pg_user_model"] == "pbm" and at.session_state["pg_coupling"] == 0.5
    assert any("users now click as PBM" in c.value for c in at.caption)


def test_connected_yet_unsure_shows_how_sure_beside_the_verdict():
    """The story of issue #46 on the page: the IG box says identifiable, then names the weakly identified
    positions, and the story's claims about the log read "reproduced" over its five seeds."""
    at = page().run()
    at.selectbox(key="pg_preset").select("connected, yet unsure").run(timeout=120)
    assert no_crash(at)
    assert any("IG: 1 component" in s.value and "identifiable" in s.value for s in at.success)
    said = " ".join(c.value for c in at.caption)
    assert "How sure: yet unsure about" in said and "position=10" in said
    story = " ".join(m.value for m in at.success)                    # issue #60: the verdict reads as sentences
    assert "position=10's 90 % interval of o_k/o_1 spans more than ×2: **reproduced**" in story
    assert "position=2's spans less than ×2: **reproduced**" in story
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]   # and a chart shows them, with the rule
    span = [c for c in charts if "span" in json.dumps(c["layout"].get("yaxis", {}).get("title", ""))]
    assert span and any(sh.get("y0") == 2 for sh in span[0]["layout"].get("shapes", [])), "no ×2 line"


def test_the_server_warms_exactly_the_runs_a_story_starts():
    """scripts/serve.py queues every story's runs at start (pages/_warm.py): they must be the very runs the page
    submits when a visitor picks the story (same keys), or the warm-up would train for nobody (issue #60, item 8)."""
    from ultr_core.app.playground import story_settings
    at = page().run()
    for preset in PRESETS:
        at.selectbox(key="pg_preset").select(preset.name).run(timeout=120)
        page_keys = [j.key for j in at.session_state["pg_job"].jobs]
        assert page_keys == [k for k, *_ in story_settings(preset).jobs()], preset.name
