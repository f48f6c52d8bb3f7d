"""How a learning manager's step ends early: ``NotReady`` (retried) or ``StageFailed`` (reported)."""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = ["NotReady", "StageFailed"]


class NotReady(Exception):
    """Something a step needs is not there yet (the message says what); the step is retried."""


class StageFailed(Exception):
    """The stage cannot proceed; reported as ``<Stage>/Failed`` with ``message`` (and ``input`` when known) and, when
    a subclass sets one, ``reason`` (the GM's Event reason)."""

    reason: ClassVar[str] = ""

    def __init__(self, message: str, input_section: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.input = input_section
