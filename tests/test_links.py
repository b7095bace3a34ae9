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
