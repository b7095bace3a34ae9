"""Start ULTR Explorer warm: ``python scripts/serve.py [streamlit options]``.

The same server as ``streamlit run app.py`` (same options), but before it accepts the first
connection it starts the job pool (worker processes that import torch and simulate the default
log), queues the default Playground run and builds the default log and figure — so that the first
visitor does not wait for imports and training (see pages/_warm.py: warm_server).  Behind them it queues the six
story presets' runs (≈ 2.5 min of both cores on a 2-core machine, lowest priority: any visitor's run goes first), so
a class opening a story reads its verdict in seconds; ``ULTR_WARM_STORIES=0`` leaves them to the first visitor.
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from pages._warm import warm_server
    warm_server()          # ≈ 1 s here; the pool's workers go on importing torch and training in their own processes
    from streamlit.web import cli
    sys.argv = ["streamlit", "run", str(ROOT / "app.py"), *sys.argv[1:]]
    return cli.main()


if __name__ == "__main__":
    sys.exit(main())
