"""Provider presets (SPEC D7): the built-in families and the user's custom ones.

Built-in presets ship in `crewbook/routing/presets/<family>.yaml`. Custom presets are
any `<family>.yaml` (or `.yml`) in `$CREWBOOK_HOME/presets/`, in the same format; the
file name is the family. A custom preset named like a built-in one overrides it, and
the listing says so. A broken custom preset does not stop the listing: it is reported
as warning `preset_unusable`, and asking for it raises its problems.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..errors import InvalidInputError, PresetNotFoundError, Problem, RoutingError, did_you_mean
from ..models import KEBAB_CASE
from .axes import EFFORTS, TIERS, Effort, Tier
from .checks import check_settings
from .files import load_model
from .home import builtin_presets_folder, custom_presets_folder, display_home_path
from .model import PresetCell, PresetFile

if TYPE_CHECKING:
    import pandas as pd

    from .graph import RoutingMatrix

PresetSource = Literal["built-in", "custom"]
#: Vendor names accepted for a family when no preset has that name.
FAMILY_ALIASES: dict[str, str] = {
    "anthropic": "claude",
    "openai": "codex",
    "google": "gemini",
    "mistralai": "mistral",
}


@dataclass(frozen=True, eq=False)
class Preset:
    """One family's tier × effort matrix, from a built-in or custom file."""

    family: str
    source: PresetSource
    path: Path
    display_path: str
    file: PresetFile
    overrides_builtin: bool = False

    def cell(self, tier: Tier, effort: Effort) -> PresetCell:
        """The capability at `tier` × `effort`."""
        return self.file.matrix.cell(tier, effort)

    @property
    def models(self) -> list[str]:
        """The distinct models, deep to light."""
        return list(dict.fromkeys(self.cell(t, e).model for t in TIERS for e in EFFORTS))

    def frame(self) -> pd.DataFrame:
        """One row per cell: tier, effort (categories), model, setting, native, native_text,
        note."""
        from .frames import cells_frame

        return cells_frame(
            {(t, e): self.cell(t, e) for t in TIERS for e in EFFORTS}, family=self.family
        )

    def matrix(self) -> RoutingMatrix:
        """Tier × effort → `model · native effort`, coloured by model."""
        from .graph import capability_matrix

        return capability_matrix(
            {(t, e): self.cell(t, e) for t in TIERS for e in EFFORTS},
            title=f"Preset {self.family} ({self.source})",
        )

    def to_dict(self) -> dict[str, Any]:
        """The preset as JSON: family, source, path, setting, matrix of cells."""
        return {
            "family": self.family,
            "source": self.source,
            "path": self.display_path,
            "overrides_builtin": self.overrides_builtin,
            "description": self.file.description,
            "setting": self.file.setting,
            "setting_note": self.file.setting_note,
            "matrix": {t: {e: self.cell(t, e).to_dict() for e in EFFORTS} for t in TIERS},
        }

    def __str__(self) -> str:
        head = f"Preset {self.family} ({self.source}, {self.display_path})"
        return f"{head}\n{self.file.setting_note}\n\n{self.matrix().to_markdown()}"

    def __repr__(self) -> str:
        extra = ", overrides the built-in" if self.overrides_builtin else ""
        return f"<Preset {self.family!r} ({self.source}{extra}): {', '.join(self.models)}>"

    def _repr_html_(self) -> str:
        over = " — <i>overrides the built-in preset</i>" if self.overrides_builtin else ""
        return (
            f"<div class='crewbook-preset'><p><b>Preset {html.escape(self.family)}</b> "
            f"({self.source}, <code>{html.escape(self.display_path)}</code>){over}<br>"
            f"{html.escape(self.file.description)}<br><small>{html.escape(self.file.setting)}: "
            f"{html.escape(self.file.setting_note)}</small></p>{self.matrix()._repr_html_()}</div>"
        )


def load_preset(
    path: Path | str,
    *,
    source: PresetSource = "custom",
    display_path: str | None = None,
    overrides_builtin: bool = False,
) -> Preset:
    """Read one preset file strictly; its family is the file name."""
    path = Path(path)
    shown = display_path or str(path)
    family = path.stem
    if not KEBAB_CASE.match(family):
        raise RoutingError(
            f"preset {shown} is invalid",
            [
                Problem(
                    "invalid_id",
                    f"the file name {family!r} is the family name and must be kebab-case, "
                    "such as 'my-claude'",
                    path=shown,
                )
            ],
        )
    file = load_model(path, PresetFile, shown, "preset", check_settings)
    return Preset(family, source, path, shown, file, overrides_builtin)


@cache
def _builtin_presets() -> tuple[Preset, ...]:
    folder = builtin_presets_folder()
    return tuple(
        load_preset(p, source="built-in", display_path=f"<built-in>/presets/{p.name}")
        for p in sorted(folder.glob("*.yaml"))
    )


def builtin_families() -> list[str]:
    """Names of the built-in families."""
    return [p.family for p in _builtin_presets()]


@dataclass(frozen=True)
class PresetWarning:
    """A custom preset that could not be listed as is."""

    code: str
    family: str
    message: str
    error: InvalidInputError | None = None

    def to_dict(self) -> dict[str, str]:
        """`{"code", "family", "message"}`."""
        return {"code": self.code, "family": self.family, "message": self.message}

    def __str__(self) -> str:
        return f"warning [{self.code}] {self.family}: {self.message}"


@dataclass(frozen=True, eq=False)
class PresetListing:
    """The usable presets (custom first, then built-in) and the warnings."""

    presets: tuple[Preset, ...]
    warnings: tuple[PresetWarning, ...]
    folder: str

    def __iter__(self) -> Iterator[Preset]:
        return iter(self.presets)

    def __len__(self) -> int:
        return len(self.presets)

    def __contains__(self, family: object) -> bool:
        return any(p.family == family for p in self.presets)

    @property
    def families(self) -> list[str]:
        """Names of the usable families."""
        return [p.family for p in self.presets]

    def __getitem__(self, family: str) -> Preset:
        for warning in self.warnings:
            if warning.family == family and warning.error is not None:
                raise warning.error
        for preset in self.presets:
            if preset.family == family:
                return preset
        alias = FAMILY_ALIASES.get(family)
        if alias is not None and alias in self:
            return self[alias]
        raise PresetNotFoundError(
            f"no preset for family {family!r}"
            + (did_you_mean(family, self.families) or f"; families: {', '.join(self.families)}")
            + f" (custom presets go in {self.folder}/<family>.yaml)"
        )

    def to_dict(self) -> dict[str, Any]:
        """The shape of `crewbook routing presets --json`."""
        return {
            "presets": [
                {
                    "family": p.family,
                    "source": p.source,
                    "path": p.display_path,
                    "overrides_builtin": p.overrides_builtin,
                    "setting": p.file.setting,
                    "description": p.file.description,
                    "models": p.models,
                }
                for p in self.presets
            ],
            "warnings": [w.to_dict() for w in self.warnings],
            "custom_folder": self.folder,
        }

    def frame(self) -> pd.DataFrame:
        """One row per preset: family, source, overrides_builtin, setting, models, path."""
        import pandas as pd

        cols = ["family", "source", "overrides_builtin", "setting", "models", "path"]
        rows = [
            {
                "family": p.family,
                "source": p.source,
                "overrides_builtin": p.overrides_builtin,
                "setting": p.file.setting,
                "models": ", ".join(p.models),
                "path": p.display_path,
            }
            for p in self.presets
        ]
        return pd.DataFrame(rows, columns=cols).astype(
            {
                "family": "string",
                "source": pd.CategoricalDtype(["custom", "built-in"]),
                "overrides_builtin": bool,
                "setting": pd.CategoricalDtype(["reasoning_effort", "thinking_budget", "none"]),
                "models": "string",
                "path": "string",
            }
        )

    def __str__(self) -> str:
        width = max((len(p.family) for p in self.presets), default=0)
        lines = ["Provider presets:"]
        for p in self.presets:
            over = "  (overrides the built-in)" if p.overrides_builtin else ""
            lines.append(
                f"  {p.family:<{width}}  {p.source:<8}  {p.file.setting:<16}  "
                f"{', '.join(p.models)}{over}"
            )
        lines.append(f"Custom presets: {self.folder}/<family>.yaml")
        lines += [str(w) for w in self.warnings]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"<PresetListing {len(self.presets)} presets ({', '.join(self.families)}), "
            f"{len(self.warnings)} warnings>"
        )

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td><b>{html.escape(p.family)}</b></td><td>{p.source}"
            f"{' <i>(overrides the built-in)</i>' if p.overrides_builtin else ''}</td>"
            f"<td><code>{p.file.setting}</code></td>"
            f"<td>{html.escape(', '.join(p.models))}</td></tr>"
            for p in self.presets
        )
        warns = "".join(f"<li>{html.escape(str(w))}</li>" for w in self.warnings)
        return (
            "<div class='crewbook-presets'><table><thead><tr><th>family</th><th>source</th>"
            f"<th>native setting</th><th>models</th></tr></thead><tbody>{rows}</tbody></table>"
            f"<p><small>Custom presets: <code>{html.escape(self.folder)}/&lt;family&gt;.yaml"
            "</code></small></p>" + (f"<ul>{warns}</ul>" if warns else "") + "</div>"
        )


def provider_presets_list() -> PresetListing:
    """Every preset: custom ones (from `$CREWBOOK_HOME/presets/`) first, then built-in.

    A custom preset named like a built-in one replaces it (`overrides_builtin`). Read-only.
    """
    builtin = {p.family: p for p in _builtin_presets()}
    folder = custom_presets_folder()
    shown_folder = display_home_path(folder)
    custom: list[Preset] = []
    warnings: list[PresetWarning] = []
    files = (
        sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
        if folder.is_dir()
        else []
    )
    seen: set[str] = set()
    for path in files:
        if path.name.startswith("."):
            continue
        shown = display_home_path(path)
        family = path.stem
        if family in seen:
            warnings.append(
                PresetWarning(
                    "preset_duplicate",
                    family,
                    f"{shown} repeats family {family!r} (.yaml and .yml); it is ignored",
                )
            )
            continue
        seen.add(family)
        try:
            preset = load_preset(path, display_path=shown, overrides_builtin=family in builtin)
        except RoutingError as exc:
            first = exc.problems[0] if exc.problems else None
            warnings.append(
                PresetWarning(
                    "preset_unusable",
                    family,
                    f"{shown} is invalid ({len(exc.codes)} problems, first: {first})"
                    + (
                        "; the built-in preset is NOT used in its place"
                        if family in builtin
                        else ""
                    ),
                    exc,
                )
            )
            continue
        if preset.file.family and preset.file.family != family:
            warnings.append(
                PresetWarning(
                    "preset_name_mismatch",
                    family,
                    f"{shown} says family {preset.file.family!r}; the file name "
                    f"{family!r} is the family",
                )
            )
        custom.append(preset)
    custom_names = {p.family for p in custom} | {w.family for w in warnings if w.error}
    presets = custom + [p for name, p in builtin.items() if name not in custom_names]
    return PresetListing(tuple(presets), tuple(warnings), shown_folder)


def get_preset(family: str) -> Preset:
    """The preset of `family` (custom before built-in; vendor aliases such as `anthropic`
    accepted); raises `PresetNotFoundError` with the nearest name, or the file's problems."""
    return provider_presets_list()[family]
