"""Shareable links: a page's state round-trips through its URL; links store registry keys, and the labels older
links carried are still read (issue #45)."""
from apphelp import page


def test_compare_state_round_trips_through_the_url():
    at = page("compare.py").run()
    at.sidebar.multiselect(key="m_custom").set_value(["Naive", "LBD"]).run()
    at.sidebar.slider(key="n_custom").set_value(4).run()
    at.sidebar.select_slider(key="cmp_training_steps").set_value(200).run()
    link = {k: at.query_params[k] for k in at.query_params}
    assert link["methods"] in ("naive,lbd", ["naive,lbd"])                 # links store keys, not labels
    cold = page("compare.py")
    for k, v in link.items():
        cold.query_params[k] = v[0] if isinstance(v, list) else v
    cold.run()
    assert not cold.exception
    assert cold.sidebar.multiselect(key="m_custom").value == ["Naive", "LBD"]
    assert (
        cold.sidebar.slider(key="n_custom").value == 4
        and cold.sidebar.select_slider(key="cmp_training_steps").value == 200
    )
    bad = page("compare.py")
    bad.query_params["methods"] = "Naive,<b>Evil</b>"
    bad.query_params["seeds"] = "99"
    bad.run()
    assert (
        not bad.exception
        and bad.sidebar.multiselect(key="m_custom").value == ["Naive"]
        and bad.sidebar.slider(key="n_custom").value == 10
    )
    notes = " ".join(i.value for i in bad.info)
    assert "is not one of the choices; left out" in notes and "above 10" in notes
    old = page("compare.py")                                                 # a link from before keys: labels
    old.query_params["methods"] = "Naive,LBD"
    old.run()
    assert not old.exception and old.sidebar.multiselect(key="m_custom").value == ["Naive", "LBD"]


def test_a_link_is_bounded_by_the_documents_it_builds_not_only_its_rows():
    """Issue #61, item 8: ``log=synthetic:100000:50/sessions=1`` built 5 M documents (76 s, 2.75 GB) for a 50-row
    log; the data set is clamped to the app's limit of candidates and the note says so."""
    from ultr_core.simulation.logspec import APP_MAX_DOCUMENTS, LogSpec
    spec, ds, _, log, note = LogSpec.parse("synthetic:100000:50/sessions=1").simulate_within(1_000_000)
    assert spec.dataset == f"synthetic:{APP_MAX_DOCUMENTS // 50}:50" and len(ds.train.labels) <= APP_MAX_DOCUMENTS
    assert "5,000,000 candidate documents" in note and "clamped to synthetic:5000:50" in note
    same = LogSpec.parse("synthetic:300/sessions=10").simulate_within(1_000_000)
    assert same[0].dataset == "synthetic:300" and same[-1] is None


def test_an_unknown_algorithm_in_a_train_link_is_announced():
    """Issue #61, item 12: ``/train?algorithms=bogus`` was dropped without a notice."""
    at = page("train.py")
    at.query_params["algorithms"] = "bogus,dla"
    at.run()
    assert not at.exception
    assert at.sidebar.multiselect(key="train_algorithms").value == ["DLA"]
    notes = [i.value for i in at.info if "Link setting corrected" in i.value]
    assert any("algorithms='bogus' is not one of the choices; left out" in n for n in notes), notes
    # the Train page's methods are a list setting of its table, as the Compare page's are: only bogus names → the
    # default, said; an older link's label read as its key; one named twice kept once
    for raw, chosen, said in (("bogus", ["DLA"], "none is one of the choices; using dla"),
                              ("Naive,IPS", ["Naive", "IPS"], None), ("ips,ips", ["IPS"], "named twice")):
        at = page("train.py")
        at.query_params["algorithms"] = raw
        at.run()
        assert not at.exception and at.sidebar.multiselect(key="train_algorithms").value == chosen, raw
        assert (said in _corrections(at)) if said else not _corrections(at), (raw, _corrections(at))
        assert at.query_params["algorithms"] == ",".join(  # the link the page writes back names them by key
            {"DLA": "dla", "Naive": "naive", "IPS": "ips"}[c] for c in chosen)


def _corrections(at) -> str:
    """The page's "Link setting corrected" notices, joined."""
    return " ".join(i.value for i in at.info if "Link setting corrected" in i.value)


def test_the_train_pages_settings_table_reads_corrects_and_writes_its_link():
    """Issue #59: the Train page's settings derive from one table (``ultr_core.app.pagestate.TRAIN_SETTINGS``): every
    value a link gets wrong is corrected to the table's domain and announced, the widgets start there, and the URL
    the page writes back carries every key of the table with the corrected values."""
    from ultr_core.app.pagestate import TRAIN_SETTINGS
    at = page("train.py")
    for k, v in dict(steps="9000", lr="0.5", model="cnn", seed="-3", refs="0", clicks="online").items():
        at.query_params[k] = v
    at.run()
    assert not at.exception
    side = at.sidebar
    assert side.slider(key="train_step_count").value == 5000
    assert side.select_slider(key="train_learning_rate").value == 0.01
    assert side.radio(key="train_ranking_model").value == "dnn" and side.number_input(key="train_seed").value == 0
    assert side.checkbox(key="train_naive_and_oracle_as_reference").value is False
    assert side.radio(key="train_clicks").value == "online"
    notes = _corrections(at)
    for said in ("steps=9000 is above 5000", "lr='0.5' is not one of the choices", "model='cnn' is not one of",
                 "seed=-3 is below 0"):
        assert said in notes, notes
    written = dict(at.query_params.items())
    assert {s.url for s in TRAIN_SETTINGS} <= set(written)
    assert {k: written[k] for k in ("steps", "lr", "model", "seed", "refs", "clicks")} == \
        {"steps": "5000", "lr": "0.01", "model": "dnn", "seed": "0", "refs": "0", "clicks": "online"}


def test_the_compare_pages_settings_table_reads_corrects_and_writes_its_link():
    """The Compare page's settings derive from ``COMPARE_SETTINGS`` as the Train page's from its table: wrong values
    corrected to the table's domain and announced, the widgets start there, the URL written back from the table."""
    from ultr_core.app.pagestate import COMPARE_SETTINGS
    at = page("compare.py")
    for k, v in dict(preset="custom", sweep="nope", seeds="40", sessions="123", steps="400", guess="0").items():
        at.query_params[k] = v
    at.run()
    assert not at.exception
    side = at.sidebar
    assert side.slider(key="n_custom").value == 10 and side.selectbox(key="s_custom").value == "none"
    assert side.select_slider(key="cmp_sessions").value == 20_000 and side.toggle(key="cmp_guess_on").value is False
    notes = _corrections(at)
    for said in ("sweep='nope' is not one of the choices", "seeds=40 is above 10", "sessions='123' is not one of"):
        assert said in notes, notes
    written = dict(at.query_params.items())
    assert {s.url for s in COMPARE_SETTINGS} - {"values"} <= set(written)          # values: only with a sweep
    assert {k: written[k] for k in ("sweep", "seeds", "sessions", "steps", "guess")} == \
        {"sweep": "none", "seeds": "10", "sessions": "20000", "steps": "400", "guess": "0"}


def test_the_heatmaps_pages_settings_table_reads_corrects_and_writes_its_link():
    """The Heat-maps page's settings derive from ``HEATMAP_SETTINGS``: wrong values corrected and announced, the
    widgets start there, the URL written back from the table (the grid's own defaults for seeds and steps)."""
    from ultr_core.app.pagestate import HEATMAP_SETTINGS
    at = page("heatmaps.py")
    for k, v in dict(grid="quick", seeds="9", sessions="7", steps="200", model="cnn", levels="0.6,0.9,abc,0.1").items():
        at.query_params[k] = v
    at.run()
    assert not at.exception
    side = at.sidebar
    assert side.multiselect(key="lv_False").value == [0.1, 0.6]                  # the offered ones, in the grid's order
    assert side.slider(key="sd_False").value == 5 and side.select_slider(key="st_False").value == 200
    assert side.select_slider(key="heat_sessions").value == 20_000 and side.radio(key="heat_ranking_model").value \
        == "dnn"
    notes = _corrections(at)
    for said in ("seeds=9 is above 5", "sessions='7' is not one of", "model='cnn' is not one of",
                 "levels='0.9', 'abc' are not one of the choices; left out"):
        assert said in notes, notes
    written = dict(at.query_params.items())
    assert {s.url for s in HEATMAP_SETTINGS} <= set(written)
    assert {k: written[k] for k in ("grid", "seeds", "sessions", "steps", "model", "levels")} == \
        {"grid": "quick", "seeds": "5", "sessions": "20000", "steps": "200", "model": "dnn", "levels": "0.1,0.6"}


def test_the_identifiability_and_simulate_pages_read_their_settings_tables():
    """The Identifiability and Simulate pages' settings derive from their tables (``IDENTIFIABILITY_SETTINGS``,
    ``SIMULATE_SETTINGS``): wrong values corrected and announced, widgets started there, the corrected URL."""
    at = page("identifiability.py")
    asked = dict(source="builtin", k="9", sessions="5", seed="-1", teach="3", bias="position,nope,position")
    for k, v in asked.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception
    side = at.sidebar
    assert side.multiselect(key="ig_bias_factor_columns").value == ["position"]     # each column of the log, once
    assert side.slider(key="ig_components_k").value == 5 and side.select_slider(key="ig_sessions").value == 100_000
    assert side.number_input(key="ig_seed").value == 0
    notes = _corrections(at)
    for said in ("k=9 is above 5", "sessions='5' is not one of", "seed=-1 is below 0", "teach=3 is above 1",
                 "bias='nope' is not one of the choices; left out"):
        assert said in notes, notes
    assert {k: at.query_params[k] for k in ("k", "sessions", "seed", "teach")} == \
        {"k": "5", "sessions": "100000", "seed": "0", "teach": "1"}
    sim = page("simulate.py")
    sim.query_params.update({"dataset": "nope", "queries": "10"})
    sim.run()
    assert not sim.exception and sim.sidebar.selectbox(key="sim_dataset").value == "synthetic"
    assert sim.sidebar.number_input(key="sim_queries").value == 50
    notes = _corrections(sim)
    assert "dataset='nope' is not one of the choices" in notes and "queries=10 is below 50" in notes, notes
    assert sim.query_params["dataset"] == "synthetic" and sim.query_params["queries"] == "50"


def test_a_setting_refuses_a_default_outside_its_own_domain():
    import pytest

    from ultr_core.app.pagestate import Setting
    with pytest.raises(ValueError, match="outside its own domain"):
        Setting("steps", 10, int, lo=50, hi=5000)
    with pytest.raises(Exception, match="URL key"):
        Setting("two words", "a")
    from ultr_core.app.pagestate import COMPARE_SETTINGS, SWEEPS
    from ultr_core.studies.presets import PRESET_SWEEPS
    compare = {s.url: s for s in COMPARE_SETTINGS}
    for p in PRESET_SWEEPS.values():                # every preset's own defaults lie in the Compare table's domain
        compare["seeds"].with_default(p.seeds or 3)
        compare["sweep"].with_default({v: k for k, v in SWEEPS.items()}.get(p.sweep, "none"))


def test_every_corrected_playground_link_value_is_announced_and_stays_through_reruns():
    """Issue #60, item 5: ``/?eta=99&seeds=7&topk=-3&user_model=foo&methods=xyz,dla`` was corrected without a notice
    in the browser — the notices were shown once and the page's live rerun a second later removed them — and
    ``methods=xyz`` was dropped silently."""
    at = page("playground.py", 120)
    for k, v in dict(eta="99", seeds="7", topk="-3", user_model="foo", methods="xyz,dla").items():
        at.query_params[k] = v
    at.run()
    for _ in range(2):                                   # the first run, and a rerun as the live page does
        notes = [i.value for i in at.info if i.value.startswith("Link setting corrected")]
        for word in ("eta=99.0", "seeds='7'", "topk='-3'", "model='foo'", "methods='xyz'"):
            assert any(word in n for n in notes), (word, notes)
        at.run()
    assert not at.exception


def test_a_list_setting_reads_each_item_alone():
    """A comma-separated setting (``Setting(many=True)``: the Compare page's methods, the Heat-maps page's levels)
    reads each item as a single setting reads its value: older spellings through ``aliases``, an invalid item left
    out and named, an item outside the range clamped, one named twice kept once, an empty list kept empty, nothing
    valid → the default."""
    from ultr_core.app.pagestate import COMPARE_SETTINGS, Setting
    methods = {s.url: s for s in COMPARE_SETTINGS}["methods"]
    assert methods.parse("DLA,ips") == (("dla", "ips"), None)                     # labels of older links; keys
    assert methods.parse("DLA,ips,dla") == (("dla", "ips"), "methods: 'dla' is named twice; kept once")
    assert methods.parse("") == ((), None) and methods.parse(None) == (("naive", "dla", "ips"), None)
    assert methods.parse("xyz, ,dla")[0] == ("dla",) and "methods='xyz' is not one" in methods.parse("xyz,dla")[1]
    value, said = methods.parse("xyz,abc")
    assert value == ("naive", "dla", "ips") and "none is one of the choices; using naive,dla,ips" in said
    seeds = Setting("seeds", (1, 2), int, lo=1, hi=5, many=True)
    assert seeds.parse("3,9,x") == ((3, 5), "seeds='x' is not valid here; left out; seeds=9 is above 5; "
                                             "using 5")
    assert seeds.to_url((1, 5)) == "1,5" and seeds.parse(seeds.to_url((2, 4))) == ((2, 4), None)
