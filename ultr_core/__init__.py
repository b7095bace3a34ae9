"""ultr_core — unbiased learning to rank: data, click simulation, metrics, algorithms and
identifiability, with no UI dependency (the Streamlit app in ``pages/`` sits on top)."""
from ultr_core._lazy import lazy

__version__ = "0.1.0"
__all__ = ["ClickLog", "LTRDataset", "RankingData", "ConfigError", "DataFormatError",
           "ClickModelConfig", "ClickSimulator"]

# imported on first use (ultr_core._lazy): the CLI starts without pandas, scipy or torch
__getattr__, __dir__ = lazy(__name__, {
    "LTRDataset": "ultr_core.data.dataset",
    "RankingData": "ultr_core.data.dataset",
    "ConfigError": "ultr_core.errors",
    "DataFormatError": "ultr_core.errors",
    "ClickLog": "ultr_core.logs.clicklog",
    "ClickModelConfig": "ultr_core.simulation.clickmodel",
    "ClickSimulator": "ultr_core.simulation.simulator",
})
