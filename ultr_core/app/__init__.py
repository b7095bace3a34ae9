"""What only the app needs, kept out of the science packages and free of Streamlit:

* :mod:`.figures` and :mod:`.graph_figures` — pure plotly figure factories (data in, figure out),
  :mod:`.tables` — result frames as the pages show them;
* :mod:`.jobpool` (+ :mod:`.jobworker`) — the server-wide pool of training processes (queue,
  shared identical runs, per-session cap, stop when nobody watches);
* :mod:`.playground` — the Playground page's settings, presets and their claims;
* :mod:`.lrucache` — a byte-bounded LRU for shared caches; :mod:`.text` — escaping user strings.

Submodules are imported where used (plotly and multiprocessing are not loaded by
``import ultr_core.app``).

>>> from ultr_core.app.text import escape_html
>>> escape_html("<b>q&a</b>")
'&lt;b&gt;q&amp;a&lt;/b&gt;'
"""
__all__ = ["figures", "graph_figures", "tables", "jobpool", "jobhandles", "jobworker", "playground", "lrucache", "text"]
