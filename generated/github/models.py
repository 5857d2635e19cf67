"""Typed argument models of the generated tools (datamodel-code-generator). Do not edit."""

from __future__ import annotations

from typing import Any
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, RootModel, conint, constr
from enum import Enum


class ToolArgumentsIndex(RootModel[Any]):
    root: Any


class GetIssueArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    issue_number: int
    owner: str
    repo: str


class GetIssueThreadArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    number: int
    owner: str
    repo: str


class GetPullRequestArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    owner: str
    pull_number: int
    repo: str


class GetRepositoryArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    owner: str
    repo: str


class ListIssueCommentsArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    cursor: str | None = None
    issue_number: int
    owner: str
    page_size: conint(ge=1, le=50) | None = None
    repo: str
    since: AwareDatetime | None = None


class Direction(Enum):
    asc = "asc"
    desc = "desc"


class Sort(Enum):
    created = "created"
    updated = "updated"
    comments = "comments"


class State(Enum):
    open = "open"
    closed = "closed"
    all = "all"


class ListIssuesArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    assignee: str | None = None
    creator: str | None = None
    cursor: str | None = None
    direction: Direction | None = None
    labels: str | None = None
    owner: str
    page_size: conint(ge=1, le=50) | None = None
    repo: str
    since: AwareDatetime | None = None
    sort: Sort | None = None
    state: State | None = None


class Sort1(Enum):
    created = "created"
    updated = "updated"
    popularity = "popularity"
    long_running = "long-running"


class ListPullRequestsArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    base: str | None = None
    cursor: str | None = None
    direction: Direction | None = None
    head: str | None = None
    owner: str
    page_size: conint(ge=1, le=50) | None = None
    repo: str
    sort: Sort1 | None = None
    state: State | None = None


class PreviewCommentOnIssueArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    body: str
    issue_number: int
    owner: str
    repo: str


class PreviewCreateIssueArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    assignees: list[constr(min_length=1)] | None = None
    body: str | None = None
    labels: list[constr(min_length=1)] | None = None
    owner: str
    repo: str
    title: constr(min_length=1)


class PreviewCreatePullRequestArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    base: str
    body: str | None = None
    draft: bool | None = None
    head: str
    owner: str
    repo: str
    title: constr(min_length=1) | None = None


class LockReason(Enum):
    off_topic = "off-topic"
    too_heated = "too heated"
    resolved = "resolved"
    spam = "spam"


class PreviewLockIssueArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    issue_number: int
    lock_reason: LockReason | None = None
    owner: str
    repo: str


class MergeMethod(Enum):
    merge = "merge"
    squash = "squash"
    rebase = "rebase"


class PreviewMergePullRequestArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    commit_message: str | None = None
    commit_title: str | None = None
    merge_method: MergeMethod | None = None
    owner: str
    pull_number: int
    repo: str
    sha: str | None = None


class PreviewRemoveIssueLabelArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    issue_number: int
    name: str
    owner: str
    repo: str


class State2(Enum):
    open = "open"
    closed = "closed"


class StateReason(Enum):
    completed = "completed"
    not_planned = "not_planned"
    duplicate = "duplicate"
    reopened = "reopened"
    NoneType_None = None


class PreviewUpdateIssueArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    assignees: list[constr(min_length=1)] | None = None
    body: str | None = None
    issue_number: int
    labels: list[constr(min_length=1)] | None = None
    owner: str
    repo: str
    state: State2 | None = None
    state_reason: StateReason | None = None
    title: constr(min_length=1) | None = None


class Label(RootModel[constr(min_length=1)]):
    root: constr(min_length=1)


class RecordAddIssueLabelsArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    action_id: constr(min_length=1, max_length=255)
    issue_number: int
    labels: list[Label] | None = Field(None, min_length=1)
    owner: str
    repo: str


class RecordCommentOnIssueArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    action_id: constr(min_length=1, max_length=255)
    preview_id: constr(min_length=1, max_length=200)


class Order(Enum):
    desc = "desc"
    asc = "asc"


class Sort2(Enum):
    comments = "comments"
    reactions = "reactions"
    reactions__1 = "reactions-+1"
    reactions__1_1 = "reactions--1"
    reactions_smile = "reactions-smile"
    reactions_thinking_face = "reactions-thinking_face"
    reactions_heart = "reactions-heart"
    reactions_tada = "reactions-tada"
    interactions = "interactions"
    created = "created"
    updated = "updated"


class SearchIssuesArgs(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    cursor: str | None = None
    order: Order | None = None
    page_size: conint(ge=1, le=50) | None = None
    q: str
    sort: Sort2 | None = None


PreviewDeleteRepositoryArgs = GetRepositoryArgs
RecordCreateIssueArgs = RecordCommentOnIssueArgs
RecordCreatePullRequestArgs = RecordCommentOnIssueArgs
RecordDeleteRepositoryArgs = RecordCommentOnIssueArgs
RecordLockIssueArgs = RecordCommentOnIssueArgs
RecordMergePullRequestArgs = RecordCommentOnIssueArgs
RecordRemoveIssueLabelArgs = RecordCommentOnIssueArgs
RecordUpdateIssueArgs = RecordCommentOnIssueArgs
