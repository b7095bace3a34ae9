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
    assert "unknown names" in notes and "above 10" in notes
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
    assert any("algorithms='bogus'" in n and "using DLA" in n for n in notes), notes


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
