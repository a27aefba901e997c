"""Where the user's routing files live: `$CREWBOOK_HOME`, else the platform config folder.

* `CREWBOOK_HOME` set: that folder (tests and notebooks point it at a temp folder);
* Windows: `%APPDATA%\\crewbook`; macOS: `~/Library/Application Support/crewbook`;
* elsewhere: `$XDG_CONFIG_HOME/crewbook`, default `~/.config/crewbook`.

It holds `profile.yaml` (the global profile) and `presets/*.yaml` (custom presets).
"""

from __future__ import annotations

import os
import sys
from importlib import resources
from pathlib import Path

ENV_VAR = "CREWBOOK_HOME"


def crewbook_home() -> Path:
    """The user's crewbook folder (it may not exist yet)."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "crewbook"


def global_profile_path() -> Path:
    """The global profile: `<home>/profile.yaml`."""
    return crewbook_home() / "profile.yaml"


def custom_presets_folder() -> Path:
    """The custom presets folder: `<home>/presets/`."""
    return crewbook_home() / "presets"


def display_home_path(path: Path) -> str:
    """`path` shown stably: `$CREWBOOK_HOME/…` when the variable is set, `~/…` under home."""
    home = crewbook_home()
    try:
        rel = path.resolve().relative_to(home.resolve())
    except ValueError:
        rel = None
    if rel is not None and os.environ.get(ENV_VAR):
        return f"${ENV_VAR}/{rel.as_posix()}" if rel.parts else f"${ENV_VAR}"
    try:
        return f"~/{path.resolve().relative_to(Path.home().resolve()).as_posix()}"
    except (ValueError, RuntimeError):
        return str(path)


def builtin_presets_folder() -> Path:
    """Where the built-in presets are shipped (``crewbook/routing/presets/``)."""
    return Path(str(resources.files("crewbook.routing").joinpath("presets")))
