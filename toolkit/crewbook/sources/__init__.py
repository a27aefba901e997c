"""Read YAML and TOML files while keeping where every key is.

A `SourceDoc` holds the plain data and a map from key path (``("artifacts", 2,
"requires")``) to its line and column, so a model error can name `file:line:col`.
JSON files read whole go through `read_json`. Reading never lets a library traceback
through: a missing, huge, non-UTF-8, empty, malformed, too deep or non-mapping file,
a YAML alias bomb or bad tag, a number of thousands of digits, is one
`InvalidInputError` (of the class the caller asks for) with a coded `Problem`.
Every file type has one size limit (docs/hardening.md lists them).
"""

from __future__ import annotations

from .document import (
    MAX_DEPTH,
    MAX_TEXT_BYTES,
    MAX_YAML_BYTES,
    KeyPath,
    MiB,
    Position,
    SourceDoc,
    format_key_path,
    format_size,
    nesting_depth,
    read_text,
)
from .json_reader import parse_json, read_json
from .toml_reader import MAX_TOML_BYTES, parse_toml, read_toml
from .yaml_reader import MAX_ALIAS_EXPANSION, iter_key_paths, parse_yaml, read_yaml

__all__ = [
    "MAX_ALIAS_EXPANSION",
    "MAX_DEPTH",
    "MAX_TEXT_BYTES",
    "MAX_TOML_BYTES",
    "MAX_YAML_BYTES",
    "KeyPath",
    "MiB",
    "Position",
    "SourceDoc",
    "format_key_path",
    "format_size",
    "iter_key_paths",
    "nesting_depth",
    "parse_json",
    "parse_toml",
    "parse_yaml",
    "read_json",
    "read_text",
    "read_toml",
    "read_yaml",
]
