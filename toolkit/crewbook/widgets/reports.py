"""Deprecated name of `crewbook.widgets.proposals` (the form specs moved to each family's
``form.py``, `Draft` to `crewbook.core.form`); kept so existing imports work."""

from __future__ import annotations

from ..core.examples import example_of
from ..core.form import (
           FIELD_KINDS,
           Draft,
           FormSpec,
           GenericForm,
           field_kind,
           read_value,
           show_value,
)
from .proposals import Policy, Scripted, adapter_for, happy_path, propose, register_adapter

#: The old names of the form spec protocol and the generic form.
Adapter = FormSpec
GenericAdapter = GenericForm

__all__ = ["FIELD_KINDS", "Adapter", "Draft", "GenericAdapter", "Policy", "Scripted",
           "adapter_for", "example_of", "field_kind", "happy_path", "propose", "read_value",
           "register_adapter", "show_value"]
