"""ultr_core — unbiased learning to rank: data, click simulation, metrics, algorithms and
identifiability, with no UI dependency (the Streamlit app in ``pages/`` sits on top)."""
from ultr_core.data.dataset import LTRDataset, RankingData
from ultr_core.errors import ConfigError, DataFormatError
from ultr_core.logs.clicklog import ClickLog
from ultr_core.simulation.clickmodel import ClickModelConfig
from ultr_core.simulation.simulator import ClickSimulator

__version__ = "0.1.0"
__all__ = ["ClickLog", "LTRDataset", "RankingData", "ConfigError", "DataFormatError",
           "ClickModelConfig", "ClickSimulator"]
