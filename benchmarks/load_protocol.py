"""The classroom without the browsers' CPU: visitors that speak Streamlit's websocket protocol
(what the page's JavaScript sends — a rerun with the page's URL, then the fragment reruns the
server asks for with ``auto_rerun``, dropped on ``stop_auto_rerun`` and on every full run, as the
frontend's ``handleAutoRerun`` / ``cleanupAutoReruns`` do in Streamlit 1.67) but render nothing.  It measures what the
*server* delivers:
when each visitor's session receives its first status (queue place or progress), its first chart
element and its result table.  ``benchmarks/load_playground.py`` measures the same scenarios in
real browsers; on this 2-core rig those browsers take most of the CPU (30 chromium pages parsing
Streamlit's and plotly's JavaScript), so the two together say what the server costs and what the
rig costs.  In a classroom every student's browser runs on the student's machine.

Scenarios (a freshly started ``scripts/serve.py`` each, as in load_playground.py):

* **crowd** — ``--crowd`` visitors (30) open the default Playground URL at the same moment;
* **mixed** — ``--mixed`` visitors (8) open it with 8 different settings at once (load_playground's
  ``MIXED``: each changes one knob).

``--browsers`` (default 1) of the visitors in each scenario are real headless chromium pages
(load_playground.py's visitor), started at the same moment as the others: what one student sees
*in a browser* while the rest of the class loads the server — the classroom, where every other
student's browser runs on its own machine.  Their times are reported on their own lines.

    python benchmarks/load_protocol.py [--crowd 30] [--mixed 8] [--browsers 1] [--only crowd,mixed]

Not a browser: it sends no widget states (every widget at its default, which is what these
scenarios use), and it measures delivery, not drawing.
"""
from __future__ import annotations

import asyncio
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))   # the browser helpers, tests/browser_flow.py
from browser_flow import serve_app, wait_idle  # noqa: E402
from load_playground import (
    ARGS,
    CHROMIUM,
    cli,
    cpu_seconds,
    mixed_query,
    mixed_settings,
    rss_mb,
    sequential_seconds,
    summary as _summary,
    visit as browser_visit,
)

ROOT = Path(__file__).resolve().parents[1]

DEBUG = bool(__import__("os").environ.get("LOAD_DEBUG"))
STATUS = ("Queued — position", "training — step")


def _texts(el) -> str:
    """The visible text of a status element (markdown / alert / progress)."""
    kind = el.WhichOneof("type")
    if kind == "markdown":
        return el.markdown.body
    if kind == "alert":
        return el.alert.body
    if kind == "progress":
        return el.progress.text
    return ""


async def visit(port: int, query: str, out: dict, timeout: float = 600.0, nudge_after: float | None = None) -> None:
    """One visitor: open the websocket, ask for the page, answer the server's auto-reruns, note
    when the first status, chart and table arrive; leave when the table is in.

    ``nudge_after``: after that many silent seconds send one plain rerun, as a visitor who sees a page
    stop changing presses R (counted in ``out["nudged"]``).  Without it a silent page is waited out
    to ``timeout`` and reported with its last messages (``out["trace"]``): under CPU load a full
    run that starts just as the client's fragment timers fire is sometimes cut off after its widgets
    and never finishes (docs/benchmarks.md)."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from tornado.websocket import websocket_connect

    t0 = time.time()
    trace: list[str] = []                            # the last lifecycle messages, reported on a timeout
    try:
        ws = await websocket_connect(f"ws://127.0.0.1:{port}/_stcore/stream", subprotocols=["streamlit"],
                                     max_message_size=200 * 2 ** 20)
        first = BackMsg()
        first.rerun_script.query_string = query
        first.rerun_script.page_script_hash = ""
        first.rerun_script.context_info.url = f"http://127.0.0.1:{port}/?{query}"
        await ws.write_message(first.SerializeToString(), binary=True)
        timers: dict[str, asyncio.Task] = {}           # fragment id → its re-run loop (as the page's setInterval)
        intervals: dict[str, float] = {}
        page_hash = ""

        async def poll(fragment_id: str, interval: float):
            while True:
                await asyncio.sleep(interval)
                m = BackMsg()
                m.rerun_script.query_string = query
                m.rerun_script.page_script_hash = page_hash
                m.rerun_script.fragment_id = fragment_id
                m.rerun_script.is_auto_rerun = True
                await ws.write_message(m.SerializeToString(), binary=True)

        while time.time() - t0 < timeout and "table_s" not in out:
            try:
                raw = await asyncio.wait_for(ws.read_message(), timeout=nudge_after or timeout)
            except asyncio.TimeoutError:
                if nudge_after is None:
                    raise
                out["nudged"] = out.get("nudged", 0) + 1
                trace.append(f"{time.time() - t0:.1f} nudge (plain rerun)")
                m = BackMsg()
                m.rerun_script.query_string = query
                m.rerun_script.page_script_hash = page_hash
                await ws.write_message(m.SerializeToString(), binary=True)
                continue
            if raw is None:
                out["error"] = "the server closed the connection"
                break
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            kind = msg.WhichOneof("type")
            if kind != "delta" or msg.delta.WhichOneof("type") == "new_element":
                trace.append(f"{time.time() - t0:.1f} {kind}"
                             + (f":{msg.delta.new_element.WhichOneof('type')}" if kind == "delta" else "")
                             + (f" frag={len(msg.metadata.run.fragment_ids)}" if kind == "new_session" else "")
                             + (f" {msg.script_finished}" if kind == "script_finished" else ""))
            if DEBUG:
                sub = msg.delta.WhichOneof("type") if kind == "delta" else ""
                sub += ":" + msg.delta.new_element.WhichOneof("type") if sub == "new_element" else ""
                print(f"{time.time() - t0:6.2f} {kind} {sub} "
                      f"{_texts(msg.delta.new_element)[:60] if sub.startswith('new_element') else ''}")
            if kind == "new_session":
                page_hash = msg.new_session.page_script_hash
                if not msg.metadata.run.fragment_ids:      # a full run: the page's JavaScript drops every timer
                    for task in timers.values():
                        task.cancel()
                    timers.clear()
                    intervals.clear()
            elif kind == "page_info_changed" or kind == "page_not_found":
                pass
            elif kind == "auto_rerun":
                fid, iv = msg.auto_rerun.fragment_id, msg.auto_rerun.interval
                if intervals.get(fid) != iv:                # the same interval again keeps the running timer
                    if fid in timers:
                        timers[fid].cancel()
                    timers[fid], intervals[fid] = asyncio.ensure_future(poll(fid, iv)), iv
            elif kind == "stop_auto_rerun":
                for fid in msg.stop_auto_rerun.fragment_ids:
                    if fid in timers:
                        timers.pop(fid).cancel()
                        intervals.pop(fid, None)
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                el = msg.delta.new_element
                t = time.time() - t0
                if "status_s" not in out and any(s in _texts(el) for s in STATUS):
                    out["status_s"] = t
                if el.WhichOneof("type") == "plotly_chart" and "chart_s" not in out:
                    out["chart_s"] = t
                    out.setdefault("status_s", t)
                shared = re.search(r"shared by (\d+) visitors", _texts(el))
                if shared:                                              # the page says how many share the run
                    out["shared_max"] = max(out.get("shared_max", 0), int(shared.group(1)))
                if "point_s" not in out and re.search(r"training — step [1-9]", _texts(el)):
                    out["point_s"] = t                                  # the first training point is in
                if el.WhichOneof("type") in ("dataframe", "arrow_data_frame") and "table_s" not in out:
                    out["table_s"] = t
                    out.setdefault("status_s", t)
                    out.setdefault("point_s", t)
                if el.WhichOneof("type") == "exception":
                    out["error"] = "an exception is shown"
            elif kind == "ref_hash" and "chart_s" not in out:
                out.setdefault("cached_s", time.time() - t0)        # a message the session already has
        for task in timers.values():
            task.cancel()
        ws.close()
    except Exception as e:          # noqa: BLE001 — report, do not stop the other visitors
        out["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
        out["trace"] = trace[-40:]


async def crowd(port: int, queries: list[str], timeout: float = 600.0, nudge_after: float | None = None,
                browsers: int = 0) -> list[dict]:
    """All ``queries`` visit at once; the first ``browsers`` of them in headless chromium (each in its
    own context, ``out["browser"] = True``), the rest as protocol clients."""
    outs = [{"browser": True} if i < browsers else {} for i in range(len(queries))]
    if not browsers:
        await asyncio.gather(*(visit(port, q, o, timeout, nudge_after) for q, o in zip(queries, outs)))
        return outs
    from playwright.async_api import async_playwright
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        url = f"http://127.0.0.1:{port}/"
        await asyncio.gather(*(browser_visit(browser, url + (f"?{q}" if q else ""), o,
                                             timeout=timeout) if o.get("browser")
                               else visit(port, q, o, timeout, nudge_after) for q, o in zip(queries, outs)))
        await browser.close()
    return outs


def run(pid: int, port: int, queries: list[str], browsers: int = 0) -> list[dict]:
    before, t0 = cpu_seconds(pid), time.time()
    outs = asyncio.run(crowd(port, queries, browsers=browsers))
    wall = time.time() - t0
    print(f"  CPU over {wall:.0f} s: server and workers {cpu_seconds(pid) - before:.0f} s of the {2 * wall:.0f} s "
          "two cores offer" + (f" ({browsers} chromium page(s) take part of the rest)" if browsers else ""))
    return outs


def summary(name: str, outs: list[dict]) -> None:
    """All visitors together (a browser's chart is the chart drawn, a client's the chart delivered),
    then the chromium visitors on their own."""
    _summary(name, outs, keys=("status_s", "chart_s", "point_s", "table_s"))
    seen = [o for o in outs if o.get("browser")]
    if seen:
        _summary("  of which in chromium", seen, keys=("status_s", "chart_s", "table_s"))


def main():
    import tempfile
    a, only = cli(__doc__, "crowd,mixed", browsers=1)
    t0 = time.time()
    with tempfile.TemporaryDirectory() as cache, serve_app(cache_dir=cache) as url:   # nothing cached from before
        port = int(url.rsplit(":", 1)[1])
        print(f"server healthy after {time.time() - t0:.1f} s; RSS {rss_mb(url.pid):.0f} MB")
        if "crowd" in only:
            summary(f"crowd ({a.crowd} visitors open the default URL at once, a fresh server)",
                    run(url.pid, port, [""] * a.crowd, a.browsers))
            print(f"  idle again {wait_idle(url.pid, 60):.1f} s after they left; RSS {rss_mb(url.pid):.0f} MB")
        if "mixed" in only:
            outs = run(url.pid, port, [mixed_query(kw) for kw in mixed_settings(a.mixed)], a.browsers)
            wall = max(o.get("table_s", float("inf")) for o in outs)
            summary(f"mixed ({a.mixed} visitors, {a.mixed} different settings)", outs)
            print(f"  all tables after {wall:.1f} s; idle again {wait_idle(url.pid, 60):.1f} s after they left; "
                  f"RSS {rss_mb(url.pid):.0f} MB")
            seq = sequential_seconds(mixed_settings(a.mixed, seed_offset=100))      # fresh seeds: nothing cached
            print(f"  the same work one after another: {seq:.1f} s → ratio {wall / seq:.2f} (target ≤ 1.5)")


if __name__ == "__main__":
    main()
