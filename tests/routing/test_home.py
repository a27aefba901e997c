"""Where the user's routing files live."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from crewbook.routing.home import (
    crewbook_home,
    custom_presets_folder,
    display_home_path,
    global_profile_path,
)


def test_crewbook_home_follows_the_environment(home: Path) -> None:
    assert crewbook_home() == home
    assert global_profile_path() == home / "profile.yaml"
    assert custom_presets_folder() == home / "presets"
    assert display_home_path(home / "profile.yaml") == "$CREWBOOK_HOME/profile.yaml"


def test_default_home_is_the_platform_config_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("CREWBOOK_HOME")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("APPDATA", str(tmp_path / "appdata"))
    if sys.platform == "win32":
        assert crewbook_home() == tmp_path / "appdata" / "crewbook"
    elif sys.platform == "darwin":
        assert crewbook_home() == Path.home() / "Library" / "Application Support" / "crewbook"
    else:
        assert crewbook_home() == tmp_path / "xdg" / "crewbook"
        monkeypatch.delenv("XDG_CONFIG_HOME")
        assert crewbook_home() == Path.home() / ".config" / "crewbook"
        assert display_home_path(crewbook_home() / "profile.yaml") == (
            "~/.config/crewbook/profile.yaml"
        )
