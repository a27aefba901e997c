"""Fixtures the command tests share with the concept tests they drive end to end."""

from draw.conftest import fresh_options, no_dot
from routing.conftest import project, routing_cli

__all__ = ["fresh_options", "no_dot", "project", "routing_cli"]
