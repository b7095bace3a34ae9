"""What a first visit would otherwise wait for, done once per server process: the job pool started, the default
Playground run queued, and — on a classroom server — every story preset's runs queued behind it
(``ULTR_WARM_STORIES=0`` turns that off; ``ULTR_WARM_RUN=0`` trains nothing at all)."""
import os
import threading

from pages._common import job_pool, memo

_warm_lock = threading.Lock()
_warmed: list = []


def warm_server() -> None:
    """What a first visit would otherwise wait for, done once per process: start the job pool
    (its workers import torch and simulate the default log), queue the default Playground run
    (shared with every visitor who opens the default URL), and build the default log, its view and
    one figure here (plotly's import).  Called by ``scripts/serve.py`` before the server accepts
    connections, and by the first page run otherwise."""
    with _warm_lock:
        if _warmed:
            return
        _warmed.append(True)
    from ultr_core.app.figures import ctr_by_position_figure
    from ultr_core.app.playground import PlaygroundSettings, log_view
    settings = PlaygroundSettings()
    pool = job_pool()                                      # the workers start importing torch now
    if os.environ.get("ULTR_WARM_RUN", "1") != "0":       # 0: start the pool and build the log, train nothing
        pool.submit_many(settings.jobs())
    spec = settings.log_spec()
    ds, sim, log = memo(("logspec", spec.to_string()), spec.simulate)
    view = memo(("pg-view", spec.to_string()), lambda log=log, sim=sim: log_view(log, sim))
    ctr_by_position_figure(view.ctr, view.observation).to_json()
    if os.environ.get("ULTR_WARM_STORIES", "1") != "0" and os.environ.get("ULTR_WARM_RUN", "1") != "0":
        threading.Thread(target=warm_stories, args=(pool,), daemon=True, name="ultr-warm-stories").start()


def warm_stories(pool) -> None:
    """Queue every story preset's runs (seeds 0–4, the page's own settings: the same keys, so a visitor joins them)
    behind the default run, and check the stories about a log itself: on a classroom server the verdicts are ready
    when the class opens them.  Queued under no session: never reaped, and any visitor's job goes first
    (:meth:`~ultr_core.app.jobpool.JobPool._start_order`)."""
    from ultr_core.app.playground import PRESET_SEEDS, PRESETS, check_claims, log_runs, log_view, story_settings
    for preset in PRESETS:
        pool.submit_many(story_settings(preset).jobs())
    for preset in PRESETS:                            # each story's log and its view, as the page builds them
        spec = story_settings(preset).log_spec()
        ds, sim, log = memo(("logspec", spec.to_string()), spec.simulate)
        memo(("pg-view", spec.to_string()), lambda log=log, sim=sim: log_view(log, sim))
        if preset.log_claims:
            memo(("pg-log-claims", preset.name, PRESET_SEEDS),
                 lambda p=preset: check_claims(log_runs(p, range(PRESET_SEEDS)), p.log_claims))


def warmed() -> bool:
    return bool(_warmed)
