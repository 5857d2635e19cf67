"""Typed argument models of the generated tools (datamodel-code-generator). Do not edit."""

from __future__ import annotations

from typing import Any
from pydantic import BaseModel, ConfigDict, RootModel, conint, constr
from enum import Enum


class ToolArgumentsIndex(RootModel[Any]):
    root: Any


class CreatedObject(BaseModel):
    gt: int | None = None
    gte: int | None = None
    lt: int | None = None
    lte: int | None = None


class GetBalanceArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )


class GetChargeArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    charge: constr(max_length=5000)


class GetCustomerArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    customer: constr(max_length=5000)


class ListChargesArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    cursor: str | None = None
    customer: constr(max_length=5000) | None = None
    page_size: conint(ge=1, le=50) | None = None
    payment_intent: constr(max_length=5000) | None = None


class ListCustomersArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    created: CreatedObject | int | None = None
    cursor: str | None = None
    email: constr(max_length=512) | None = None
    page_size: conint(ge=1, le=50) | None = None


class Status(Enum):
    draft = "draft"
    open = "open"
    paid = "paid"
    uncollectible = "uncollectible"
    void = "void"


class ListInvoicesArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    cursor: str | None = None
    customer: constr(max_length=5000) | None = None
    page_size: conint(ge=1, le=50) | None = None
    status: Status | None = None


class ListPaymentIntentsArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    cursor: str | None = None
    customer: constr(max_length=5000) | None = None
    page_size: conint(ge=1, le=50) | None = None


class CancellationReason(Enum):
    abandoned = "abandoned"
    duplicate = "duplicate"
    fraudulent = "fraudulent"
    requested_by_customer = "requested_by_customer"


class PreviewCancelPaymentIntentArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    cancellation_reason: CancellationReason | None = None
    intent: constr(max_length=5000)


class Metadata(Enum):
    field_ = ""


class Reason(Enum):
    duplicate = "duplicate"
    fraudulent = "fraudulent"
    requested_by_customer = "requested_by_customer"


class PreviewRefundChargeArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    amount: int | None = None
    charge: constr(max_length=5000) | None = None
    metadata: dict[str, str] | Metadata | None = None
    payment_intent: constr(max_length=5000) | None = None
    reason: Reason | None = None


class PreviewUpdateCustomerArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    customer: constr(max_length=5000)
    description: constr(max_length=5000) | None = None
    email: constr(max_length=512) | None = None
    metadata: dict[str, str] | Metadata | None = None
    name: constr(max_length=256) | None = None


class RecordCancelPaymentIntentArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    idempotency_key: constr(min_length=1, max_length=255)
    preview_id: constr(min_length=1, max_length=200)


class RecordCreateCustomerArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    description: constr(max_length=5000) | None = None
    email: constr(max_length=512) | None = None
    idempotency_key: constr(min_length=1, max_length=255)
    metadata: dict[str, str] | Metadata | None = None
    name: constr(max_length=256) | None = None


GetCustomerOpenInvoicesArgs = GetCustomerArgs
PreviewDeleteCustomerArgs = GetCustomerArgs
RecordDeleteCustomerArgs = RecordCancelPaymentIntentArgs
RecordRefundChargeArgs = RecordCancelPaymentIntentArgs
RecordUpdateCustomerArgs = RecordCancelPaymentIntentArgs
