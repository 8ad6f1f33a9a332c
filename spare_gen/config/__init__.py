"""Config: TOML recipes validated against one declared schema before any work starts."""

from spare_gen.config.loader import ConfigError, load_config
from spare_gen.config.schema import Config

__all__ = ["Config", "ConfigError", "load_config"]
