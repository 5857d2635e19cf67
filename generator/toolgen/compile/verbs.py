"""What an operation says it does: its effect read from the verbs of its name, not its HTTP method.

Input: an `Operation` (or plain text: an operationId, a summary, an `Action` value). Output: an
`EffectGuess`: the effect to draft (`read`, `write`, `destructive`), whether the guess is doubtful
(a human must decide), and the evidence (which word of which source said so).

Many APIs change things with GET: the AWS Query APIs name the action in the path or a query
parameter (``GET /#Action=DeleteDBInstance``, ``?Action=TerminateInstances``), RPC-style APIs put
the verb in the last path segment (``GET /droplets/{id}/reboot``). So the method is only the prior:

- the sources, most authoritative first, are the `Action` (a ``#Action=X`` / ``?Action=X`` path
  fragment, or a single-valued ``Action`` query parameter), the `x-` hints that say an effect
  (`VALUE_HINTS`: ``x-kubernetes-action``, ``x-ms-docs-operation-type``, ``x-openai-isConsequential``,
  ``x-linode-grant``) or name the operation (`NAME_HINTS`), the operationId, the last literal path
  segment (a sub-resource such as ``/exec``, ``/invalidate``, ``/resend...``: `SUBRESOURCE_VERBS`),
  the summary (else the description's first sentence) and, beside a summary, for GET/HEAD/OPTIONS,
  the description's first sentence read strictly (`description_verb`);
- a source's verb is the first word (an operationId's leading ``GET_``/``POST_`` method prefix
  dropped), else the first word of its last segment (``VirtualMachines_Delete``,
  ``compute.instances.delete``), else its last word; a summary's is the first verb among its first
  three words. Words are split at camelCase, ``_``, ``-``, ``.``, ``/``, ``=`` and spaces, and
  ``Deletes``/``Copies`` are reduced to ``delete``/``copy``;
- a destructive verb (delete, remove, terminate, destroy, purge, ...) means `destructive`; a change
  verb (create, update, put, set, add, send, start, stop, reboot, modify, attach, cancel, ...)
  means `write`; a read verb (get, list, describe, search, query, head, count, ...) means `read`.

`guess_effect` drafts: DELETE is destructive; PUT/PATCH a write (destructive when a name says so);
GET/HEAD/OPTIONS a read unless some source names a change, then the strongest change named, doubtful
(the draft's ``# decide`` mark) when the most authoritative source with a verb says less, any
source says it only reads, or only the description names the change; POST a write, a read only when its
operationId and its summary both name a read verb of `POST_READ_VERBS` (search, query, list, ...),
no source names a change and the operationId does not lead with a change verb, even one that is also
a noun (``PutResolverQueryLogConfigPolicy``) (doubtful: a human confirms); destructive when a source names a destruction
(doubtful unless the most authoritative source with a verb does). `changes_named` is what lint checks a
declared `read` against. The word sets are `toolgen.compile.verb_words`'s. Pure: no IO.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .operations import Operation
from .verb_words import (
    DESTRUCTIVE_VERBS,
    NOUN_LIKE,
    POST_READ_VERBS,
    READ_VERBS,
    SUBRESOURCE_VERBS,
    WRITE_VERBS,
    Effect,
)

_STRENGTH = {"read": 0, "write": 1, "destructive": 2}

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_SPLIT = re.compile(r"[._/\-=:\s]+")
_TAG = re.compile(r"<[^>]*>")
_ACTION = re.compile(r"[#?&]Action=([A-Za-z0-9_.-]+)")
_METHOD_PREFIX = re.compile(r"^(GET|PUT|POST|DELETE|PATCH|HEAD|OPTIONS)[_\- ]+(?=\S)")


@dataclass(frozen=True)
class Evidence:
    """One source's verb: `source` is ``Action``, ``operationId``, ``path`` or ``summary``."""

    source: str
    text: str
    verb: str
    effect: Effect

    def says(self) -> str:
        """``operationId `DeleteThing` says `delete```, for notes and lint messages."""
        shown = self.text if len(self.text) <= 60 else self.text[:59] + "…"
        return f"its {self.source} `{shown}` says `{self.verb}`"


@dataclass(frozen=True)
class EffectGuess:
    """The effect to draft; `doubtful` when a human must decide (`why` says what disagrees)."""

    effect: Effect
    doubtful: bool
    why: str
    evidence: tuple[Evidence, ...] = ()


def words(text: str) -> list[str]:
    """Lower-case words of an identifier or a sentence: ``DeleteDBInstance`` -> delete, db, instance;
    ``pets_list-all`` -> pets, list, all; HTML tags dropped."""
    out: list[str] = []
    for part in _SPLIT.split(_TAG.sub(" ", text)):
        out += [w.lower() for w in _CAMEL.findall(part)]
    return out


def verb_effect(
    word: str, *, nouns: bool = True, inflected_nouns: bool = False, inflected: bool = True
) -> tuple[str, Effect] | None:
    """(the verb, its effect) for a word, inflections reduced (deletes, copies); None when the word is
    no known verb. A verb that is also a common noun (`NOUN_LIKE`) counts only uninflected
    (``tag``, not ``tags``: ``issues/list`` names issues) unless `inflected_nouns`, and not at all
    when `nouns` is false. `inflected=False` takes the word only as written (``reboot``, not
    ``triggers``)."""
    w = word.lower()
    if w in NOUN_LIKE and not nouns:
        return None
    candidates = [w]
    if not inflected:
        candidates = candidates[:1]
    if inflected and w.endswith("ies") and len(w) > 4:
        candidates.append(w[:-3] + "y")
    if inflected and w.endswith("es") and len(w) > 3:
        candidates.append(w[:-2])
    if inflected and w.endswith("s") and len(w) > 2:
        candidates.append(w[:-1])
    for i, c in enumerate(candidates):
        if i and c in NOUN_LIKE and not inflected_nouns:
            continue
        if c in DESTRUCTIVE_VERBS:
            return c, "destructive"
        if c in WRITE_VERBS:
            return c, "write"
        if c in READ_VERBS:
            return c, "read"
    return None


def name_verb(text: str) -> tuple[str, Effect] | None:
    """The verb of an identifier (operationId, Action): the first word of its last ``.``/``/``
    segment (``compute.instances.delete``, ``issues/list-for-repo``), else its first word, else the
    first word of each later ``_`` segment in turn (``VirtualMachines_Delete``,
    ``droplets_list_associatedResources``; a noun-like verb there is the resource:
    ``admin_inviteRequests_list``), else its last word as written (``userDelete``; a plural or a
    noun there names the resource: ``functionTriggers``). A leading ``GET_``-style method prefix is
    dropped."""
    text = _METHOD_PREFIX.sub("", text.strip())
    ws = words(text)
    if not ws:
        return None
    dotted = [w for w in (words(p) for p in re.split(r"[./]+", text)) if w]
    snaked = [w for w in (words(p) for p in text.split("_")) if w]
    noun: tuple[str, Effect] | None = None  # a noun-like verb first: kept unless a plain verb follows
    for word in ([dotted[-1][0]] if len(dotted) > 1 else []) + [ws[0]]:
        found = verb_effect(word)
        if found is not None and found[0] not in NOUN_LIKE:
            return found
        noun = noun or found
    for segment in snaked[1:]:
        found = verb_effect(segment[0], nouns=False)
        if found is not None:
            return found
    if noun is not None:  # ``issueListIssues``, ``TagAliases_QueryItem``: the plain verb, else the noun's
        plain = next((f for f in (verb_effect(w, nouns=False, inflected=False) for w in ws[1:]) if f), None)
        return plain or noun
    return verb_effect(ws[-1], nouns=False, inflected=False)


_DETERMINERS = frozenset(
    {
        "a",
        "an",
        "the",
        "one",
        "all",
        "your",
        "this",
        "that",
        "these",
        "multiple",
        "specified",
        "existing",
        "new",
        "given",
        "some",
        "any",
        "each",
        "every",
        "its",
        "their",
        "our",
        "my",
    }
)


def sentence_verb(text: str, within: int = 3) -> tuple[str, Effect] | None:
    """The verb of a summary (HTML tags dropped): its first word (``Deletes``, ``Returns``); a verb
    that is also a noun (`NOUN_LIKE`) only when a determiner follows (``Tags a resource``, not
    ``Block transactions``). Then, among the first `within` words, a verb as written and not
    noun-like (``Bulk delete``; not ``Stake pool updates``)."""
    ws = words(text)
    if not ws:
        return None
    if ws[:2] == ["invoke", "function"]:  # OData: a function has no side effects (an action does)
        return "invoke", "read"
    determined = len(ws) > 1 and ws[1] in _DETERMINERS
    noun_like = (
        verb_effect(ws[0], inflected_nouns=True) is not None and verb_effect(ws[0], nouns=False) is None
    )
    if not noun_like or determined:
        found = verb_effect(ws[0], inflected_nouns=determined)
        if found is not None:
            return found
    for word in ws[1:within]:
        found = verb_effect(word, nouns=False, inflected=False)
        if found is not None:
            return found
    return None


_LEAD = re.compile(r"^\s*([A-Za-z]+)\s+([A-Za-z]+)")
#: first words of a description that are no act of the call: what it lets someone do ("Enables an app
#: to find ..."), or a preposition ("Unlike the other calls, ...")
_NOT_ACTS = frozenset({"enable", "allow", "let", "help", "permit", "unlike"})


def description_verb(text: str) -> tuple[str, Effect] | None:
    """The act a description's first sentence says the call performs, read strictly (a description
    says more than what the call does): its first word, a change verb (``Sends``, ``Runs``,
    ``Invalidate``) followed by a determiner (``Runs the load test``; not ``Generate Default Config``,
    ``Write-only property``, ``Start and end dates``), and not a word that says what someone may do
    (`_NOT_ACTS`). Reads and markup count for nothing."""
    lead = _LEAD.match(_TAG.sub(" ", text))
    if lead is None or lead.group(2).lower() not in _DETERMINERS:
        return None
    found = verb_effect(lead.group(1), inflected_nouns=True)
    if found is None or found[1] == "read" or found[0] in _NOT_ACTS:
        return None
    return found


def action_of(op: Operation) -> str | None:
    """The AWS-Query-style action: a ``#Action=X`` or ``?Action=X`` in the path, else the single enum
    value (or default) of an ``Action`` query parameter."""
    found = _ACTION.search(op.path)
    if found:
        return found.group(1)
    for param in list(op.node.get("parameters") or []) + list(op.path_item.get("parameters") or []):
        if not (isinstance(param, dict) and param.get("name") == "Action" and param.get("in") == "query"):
            continue
        schema = param.get("schema") if isinstance(param.get("schema"), dict) else param
        enum = schema.get("enum") if isinstance(schema, dict) else None
        if isinstance(enum, list) and len(enum) == 1 and isinstance(enum[0], str):
            return enum[0]
        if isinstance(schema, dict) and isinstance(schema.get("default"), str):
            return str(schema["default"])
    return None


def summary_of(node: dict[str, Any]) -> str:
    """The operation's summary, else its description's first sentence (HTML tags dropped)."""
    summary = node.get("summary")
    if isinstance(summary, str) and summary.strip():
        return " ".join(_TAG.sub(" ", summary).split())
    description = node.get("description")
    if isinstance(description, str):
        text = " ".join(_TAG.sub(" ", description).split())
        return re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return ""


def _last_literal_segment(path: str) -> str:
    parts = [p for p in path.split("#", 1)[0].split("?", 1)[0].split("/") if p and not p.startswith("{")]
    return parts[-1] if parts else ""


#: `x-` extensions that name the operation (an SDK method, a CLI action, an AWS operation): read as
#: an operationId is
NAME_HINTS = ("x-aws-operation-name", "x-operationName", "x-methodName", "x-ds-method")
#: `x-` extensions whose value says the effect: Kubernetes' verb (``connect`` opens a stream into a
#: pod: exec, attach, port-forward, proxy), Microsoft Graph's OData kind (an action changes, a
#: function does not), OpenAI's plugin flag, Linode's grant
VALUE_HINTS: dict[str, dict[str, Effect]] = {
    "x-kubernetes-action": {
        "get": "read",
        "list": "read",
        "watch": "read",
        "watchlist": "read",
        "create": "write",
        "put": "write",
        "patch": "write",
        "update": "write",
        "connect": "write",
        "delete": "destructive",
        "deletecollection": "destructive",
    },
    "x-ms-docs-operation-type": {"function": "read", "action": "write"},
    "x-openai-isconsequential": {"false": "read", "true": "write"},
    "x-linode-grant": {"read_only": "read", "read_write": "write"},
}


def hint_evidence(node: dict[str, Any]) -> list[Evidence]:
    """The `x-` hints of an operation object that say its effect (`VALUE_HINTS`, `NAME_HINTS`)."""
    out: list[Evidence] = []
    for key, value in node.items():
        if (
            not (isinstance(key, str) and key.startswith("x-"))
            or isinstance(value, (dict, list))
            or value is None
        ):
            continue
        text = str(value).lower() if not isinstance(value, bool) else ("true" if value else "false")
        table = VALUE_HINTS.get(key.lower())
        if table is not None and text in table:
            out.append(Evidence(key, str(value), text, table[text]))
        elif key in NAME_HINTS:
            found = name_verb(str(value))
            if found is not None:
                out.append(Evidence(key, str(value), found[0], found[1]))
    return out


def evidence(op: Operation) -> list[Evidence]:
    """Each source's verb, most authoritative first (Action, `x-` hints, operationId, path, summary,
    the description's first sentence when there is a summary); sources without a known verb are
    left out."""
    out: list[Evidence] = []
    action = action_of(op)
    sources: list[tuple[str, str, Any]] = []
    if action:
        sources.append(("Action", action, name_verb))
    if op.operation_id:
        sources.append(("operationId", op.operation_id, name_verb))
    segment = _last_literal_segment(op.path)
    if segment:
        sources.append(("path", segment, _path_verb))
    summary = summary_of(op.node)
    if summary:
        sources.append(("summary", summary, sentence_verb))
    described = _first_sentence(op.node.get("description"))
    if described and described != summary and op.method in ("GET", "HEAD", "OPTIONS"):
        sources.append(("description", described, description_verb))
    for source, text, find in sources:
        found = find(text)
        if found is not None:
            out.append(Evidence(source, text, found[0], found[1]))
    return out[:1] + hint_evidence(op.node) + out[1:] if action else hint_evidence(op.node) + out


def _first_sentence(text: Any) -> str:
    if not isinstance(text, str):
        return ""
    flat = " ".join(_TAG.sub(" ", text).split())
    return re.split(r"(?<=[.!?])\s", flat, maxsplit=1)[0]


_FORMATS = frozenset({"json", "xml", "csv", "txt", "html", "yaml", "pdf"})
#: verbs that, leading a compound path segment ending in a plural, act on those things
#: (``regenerateApiKeys``, ``resendInvites``); another compound ending in a plural is a resource
_ACTS_ON_THINGS = frozenset(
    {
        "regenerate",
        "resend",
        "revoke",
        "invalidate",
        "reissue",
        "redeliver",
        "retrigger",
        "rotate",
        "reset",
        "purge",
        "wipe",
    }
)
#: the last word of a compound path segment that names what is known about an action, not the action
_ABOUT_NOUNS = frozenset(
    {
        "status",
        "state",
        "info",
        "history",
        "log",
        "logs",
        "details",
        "result",
        "results",
        "count",
        "settings",
        "config",
        "stats",
        "report",
        "summary",
        "url",
        "link",
        "preview",
    }
)


def _path_verb(segment: str) -> tuple[str, Effect] | None:
    """A path segment names what is done only when it leads with a verb as written: alone
    (``reboot``, ``cancel``, ``search``) or a verb phrase (``remove-token``, ``bulk-delete``). A
    compound ending in a plural is a resource (``exchange_rates``, ``upload_sessions``,
    ``AddOnResults``), as is a plural alone (``Triggers.json``); a format suffix does not count."""
    parts = [p for p in segment.split(".") if p and p.lower() not in _FORMATS]
    ws = words(parts[-1]) if parts else []  # ``users.lookupByEmail``: the method is the last part
    if not ws:
        return None
    if (
        len(ws) > 1
        and ws[-1].endswith("s")
        and not ws[-1].endswith("ss")
        and verb_effect(ws[-1]) is None
        and ws[0] not in _ACTS_ON_THINGS
    ):
        return None  # ``exchange_rates``, ``upload_sessions``; not ``regenerateApiKeys``, ``resendInvites``
    if len(ws) > 1 and ws[0] in NOUN_LIKE:
        return None  # ``commit_activity``, ``merge-async``: a noun first
    if len(ws) > 1 and ws[-1] in _ABOUT_NOUNS:
        return None  # ``resend-status``, ``exec_logs``: a thing about the action, read
    found = verb_effect(ws[0], inflected=False)
    if found is None and len(ws) > 1:
        found = verb_effect(ws[-1], nouns=False, inflected=False)
        if found is not None and found[1] == "read":
            return None
    return found


def changes_named(op: Operation) -> list[Evidence]:
    """The sources that name a change (write or destructive), most authoritative first. The path
    counts only for a segment that is a verb (``/reboot``), not a noun that reads like one
    (``/tags``, ``/orders``): a noun is the thing, not what is done to it."""
    out = []
    for e in evidence(op):
        if e.effect == "read":
            continue
        if e.source == "path" and len(words(e.text)) == 1 and e.verb in NOUN_LIKE - SUBRESOURCE_VERBS:
            continue
        out.append(e)
    return out


def _strongest(items: list[Evidence]) -> Evidence:
    return max(items, key=lambda e: _STRENGTH[e.effect])


def guess_effect(op: Operation) -> EffectGuess:
    """The effect to draft for `op` (see the module docstring), with why and whether it is doubtful."""
    found = evidence(op)
    changes = changes_named(op)
    method = op.method
    if method == "DELETE":
        return EffectGuess("destructive", False, "DELETE", tuple(found))
    if method in ("PUT", "PATCH"):
        destructive = [e for e in changes if e.effect == "destructive"]
        if destructive:
            return EffectGuess("destructive", True, f"{method}, but {destructive[0].says()}", tuple(found))
        return EffectGuess("write", False, method, tuple(found))
    if method in ("GET", "HEAD", "OPTIONS"):
        if not changes:
            return EffectGuess("read", False, method, tuple(found))
        strongest = _strongest(changes)
        decisive = found[0]
        # in doubt when the most authoritative source is weaker, or any source says it only reads
        doubtful = (
            _STRENGTH[decisive.effect] < _STRENGTH[strongest.effect]
            or any(e.effect == "read" for e in found)
            or all(e.source == "description" for e in changes)
        )
        reads = [e for e in found if e.effect == "read"]
        why = f"{method}, but {strongest.says()}" + (f", while {reads[0].says()}" if reads else "")
        return EffectGuess(strongest.effect, doubtful, why, tuple(found))
    # POST and anything else: a write unless it clearly only reads
    if changes:
        strongest = _strongest(changes)
        effect: Effect = "destructive" if strongest.effect == "destructive" else "write"
        doubtful = effect == "destructive" and found[0].effect != "destructive"
        return EffectGuess(effect, doubtful, f"{method}, and {strongest.says()}", tuple(found))
    by_source = {e.source: e for e in found}
    named = by_source.get("operationId")
    summary = by_source.get("summary")
    if (
        named is not None
        and named.verb in POST_READ_VERBS
        and len(words(named.text)) > 1
        and (summary is None or summary.effect == "read")
        and "graphql" not in op.path.lower()
        and not _leads_with_change(named.text, method)
    ):
        return EffectGuess("read", True, f"{method}, but {named.says()}", tuple(found))
    return EffectGuess("write", False, method, tuple(found))


def _leads_with_change(name: str, method: str) -> bool:
    """Does an identifier's first word name a change, even a verb that is also a noun (``put`` of
    ``PutResolverQueryLogConfigPolicy``, whose later ``query`` is its object, not what it does)? The
    operation's own method as the first word (``post-search``) is the method, not a verb."""
    ws = words(_METHOD_PREFIX.sub("", name.strip()))
    if not ws or ws[0] == method.lower():
        return False
    found = verb_effect(ws[0], inflected=False)
    return found is not None and found[1] != "read"


__all__ = [
    "NAME_HINTS",
    "VALUE_HINTS",
    "EffectGuess",
    "Evidence",
    "action_of",
    "changes_named",
    "description_verb",
    "evidence",
    "guess_effect",
    "hint_evidence",
    "name_verb",
    "sentence_verb",
    "summary_of",
    "verb_effect",
    "words",
]
