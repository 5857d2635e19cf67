"""The verbs that say what an operation does, by the effect they name (`toolgen.compile.verbs` reads
an operation's names, summary and description with them).

Input: nothing (the lists are data). Output: the word sets, each of lower-case words as `words`
splits a name: `DESTRUCTIVE_VERBS`, `WRITE_VERBS` and `READ_VERBS` (a verb's effect),
`SUBRESOURCE_VERBS` (a path segment that acts whatever the operationId says), `POST_READ_VERBS` (a
POST that only reads) and `NOUN_LIKE` (verbs that are as often a resource's name); and `Effect`.
"""

from __future__ import annotations

from typing import Literal

Effect = Literal["read", "write", "destructive"]

DESTRUCTIVE_VERBS = frozenset({
    "delete", "del", "remove", "rm", "terminate", "destroy", "purge", "erase", "wipe", "drop", "truncate",
    "deregister", "unregister", "uninstall", "decommission", "kill", "evict", "expunge",
})
WRITE_VERBS = frozenset({
    "create", "update", "put", "set", "add", "send", "start", "stop", "reboot", "restart", "modify", "attach",
    "detach", "cancel", "post", "patch", "insert", "upload", "import", "export", "register", "enable", "disable",
    "associate", "disassociate", "apply", "approve", "reject", "assign", "unassign", "authorize", "revoke",
    "grant", "replace", "reset", "restore", "copy", "move", "rename", "merge", "publish", "unpublish", "submit",
    "execute", "run", "invoke", "trigger", "tag", "untag", "accept", "decline", "activate", "deactivate",
    "archive", "unarchive", "resume", "pause", "suspend", "unsuspend", "lock", "unlock", "mark", "link", "unlink",
    "subscribe", "unsubscribe", "follow", "unfollow", "like", "unlike", "star", "unstar", "join", "leave",
    "invite", "change", "edit", "save", "store", "write", "push", "sync", "refresh", "rotate", "generate",
    "issue", "provision", "deploy", "install", "schedule", "reschedule", "promote", "release", "allocate",
    "upsert", "increment", "decrement", "clear", "flush", "request", "reserve", "confirm", "close", "open",
    "complete", "commit", "rollback", "revert", "undo", "redo", "transfer", "pay", "charge", "refund", "capture",
    "void", "book", "order", "buy", "purchase", "sell", "notify", "email", "sms", "message", "reply", "forward",
    "share", "unshare", "block", "unblock", "mute", "unmute", "pin", "unpin", "enroll", "unenroll", "enqueue",
    "dequeue", "batch", "bulk", "swap", "scale", "resize", "reindex", "rebuild", "build", "compile", "migrate",
    "failover", "switchover", "retry", "rerun", "abort", "halt", "kick", "ban", "unban", "verify", "claim", "redeem", "finalize", "exchange", "tokenize", "login", "logout", "signin", "signout", "signup",
    "upgrade", "downgrade", "increase", "decrease", "adjust", "allow", "deny", "authorise", "authenticate",
    "exec", "invalidate", "resend", "reissue", "regenerate", "redeliver", "replay", "retrigger", "reprocess",
    "resync", "renew", "expire", "shutdown", "poweroff", "poweron", "wake", "wakeup", "dispatch", "acknowledge",
    "dismiss", "snooze", "remind", "clone", "duplicate", "fork", "launch", "spawn", "reload", "repair", "recover",
    "reinstall", "impersonate", "nudge", "broadcast", "hibernate", "portforward", "reactivate", "reopen", "unsnooze",
    "rekey", "reauthorize", "reconnect", "disconnect", "reassign", "rollout",
})
#: the verbs of well-known side-effecting sub-resources: ``GET /pods/{name}/exec``,
#: ``GET /access-tokens/{id}/invalidate``: whatever the operationId says, the path's verb acts
SUBRESOURCE_VERBS = frozenset({
    "exec", "attach", "portforward", "invalidate", "resend", "revoke", "trigger", "retrigger", "redeliver",
    "reissue", "regenerate", "rotate", "renew", "expire", "reset", "restart", "reboot", "shutdown",
    "poweroff", "poweron", "wake", "cancel", "abort", "kill", "terminate", "approve", "reject", "confirm",
    "verify", "activate", "deactivate", "enable", "disable", "suspend", "resume", "unsubscribe", "execute",
    "invoke", "rerun", "retry", "send", "publish", "unpublish", "resync", "refresh", "flush",
    "purge", "clear", "acknowledge", "dismiss", "snooze", "impersonate", "rollback", "undo", "unlock", "unarchive",
    "logout", "signout",
})
READ_VERBS = frozenset({
    "get", "list", "describe", "search", "query", "head", "count", "fetch", "find", "lookup", "read", "retrieve",
    "show", "view", "check", "download", "return", "obtain", "display", "select", "scan", "filter", "browse",
    "poll", "watch", "stream", "estimate", "calculate", "compute", "preview", "inspect", "test", "validate",
    "exists", "is", "has", "can", "ping", "echo", "lists", "print", "render", "explain", "summarize", "resolve",
    "match", "suggest", "autocomplete", "info", "whoami", "status", "health", "options",
})
#: a POST drafted as a read when its operationId and summary both say one of these (and nothing says
#: a change): searches and queries that take their filter as a body
POST_READ_VERBS = frozenset({"search", "query", "list", "find", "lookup", "count", "filter"})
#: verbs that are also common resource nouns: plural, as a path segment or as the last word of a name,
#: they name the resource (``/orders``, ``userTags``), not what is done to it
NOUN_LIKE = frozenset({
    "tag", "order", "message", "email", "sms", "link", "batch", "bulk", "export", "import", "request",
    "release", "build", "transfer", "charge", "refund", "capture", "book", "share", "block", "pin", "star",
    "like", "issue", "schedule", "status", "health", "info", "options", "put", "post", "patch", "exchange",
    "upload", "merge", "deploy", "invite", "subscribe", "follow", "match", "lock", "run", "sync", "scale",
    "reply", "store", "mark", "test", "void", "complete", "close", "open", "login", "logout", "signup",
    "signin", "signout", "claim", "commit", "change", "pay", "notify", "view", "archive", "set", "purchase",
    "clone", "duplicate", "fork", "launch", "replay", "broadcast", "dispatch", "rollout", "reload", "recover",
    "exec",
})
