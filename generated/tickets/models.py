"""Typed argument models of the generated tools (datamodel-code-generator). Do not edit."""

from __future__ import annotations

from typing import Any
from pydantic import BaseModel, ConfigDict, RootModel, conint, constr
from enum import Enum


class ToolArgumentsIndex(RootModel[Any]):
    root: Any


class GetTicketArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    ticket_id: constr(pattern=r"^T-[0-9]+$", max_length=32)


class View(Enum):
    details = "details"
    history = "history"


class GetTicketViewArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    ticket_id: constr(pattern=r"^T-[0-9]+$", max_length=32) | None = None
    view: View


class Status(Enum):
    open = "open"
    pending = "pending"
    closed = "closed"


class ListTicketsArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    cursor: str | None = None
    page_size: conint(ge=1, le=50) | None = None
    status: Status | None = None


class PreviewEscalateTicketArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    reason: constr(min_length=1, max_length=2000)
    ticket_id: constr(pattern=r"^T-[0-9]+$", max_length=32)


class Visibility(Enum):
    internal = "internal"
    public = "public"


class PreviewTicketFollowupArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    note: constr(min_length=1, max_length=2000)
    ticket_id: constr(pattern=r"^T-[0-9]+$", max_length=32)
    visibility: Visibility


class RecordEscalateTicketArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    action_id: constr(min_length=1, max_length=190)
    preview_id: constr(min_length=1, max_length=200)


class RecordTicketDeleteArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    action_id: constr(min_length=1, max_length=255)
    preview_id: constr(min_length=1, max_length=200)


GetTicketHistoryArgs = GetTicketArgs
PreviewTicketDeleteArgs = GetTicketArgs
RecordTicketFollowupArgs = RecordTicketDeleteArgs
