"""ultr_core — unbiased learning to rank: data, click simulation, metrics, algorithms and
identifiability, with no UI dependency (the Streamlit app in ``pages/`` sits on top)."""
from .clicklog import ClickLog
from .dataset import LTRDataset, RankingData
from .errors import ConfigError, DataFormatError
from .simulation import ClickModelConfig, ClickSimulator

__version__ = "0.1.0"
__all__ = ["ClickLog", "LTRDataset", "RankingData", "ConfigError", "DataFormatError",
           "ClickModelConfig", "ClickSimulator"]
