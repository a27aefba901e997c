"""Read YAML and TOML files while keeping where every key is.

A `SourceDoc` holds the plain data and a map from key path (``("artifacts", 2,
"requires")``) to its line and column, so a model error can name `file:line:col`.
Reading never lets a library traceback through: a missing, huge, non-UTF-8, empty,
malformed or non-mapping file, or a YAML alias bomb, is one `InvalidInputError`
(of the class the caller asks for) with a coded `Problem`.
"""

from __future__ import annotations

from .document import (
    MAX_YAML_BYTES,
    KeyPath,
    Position,
    SourceDoc,
    format_key_path,
    paused_gc,
    read_text,
)
from .toml_reader import MAX_TOML_BYTES, parse_toml, read_toml
from .yaml_reader import MAX_ALIAS_EXPANSION, iter_key_paths, parse_yaml, read_yaml

__all__ = [
    "MAX_ALIAS_EXPANSION",
    "MAX_TOML_BYTES",
    "MAX_YAML_BYTES",
    "KeyPath",
    "Position",
    "SourceDoc",
    "format_key_path",
    "iter_key_paths",
    "parse_toml",
    "parse_yaml",
    "paused_gc",
    "read_text",
    "read_toml",
    "read_yaml",
]
