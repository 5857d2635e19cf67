"""`toolgen describe INTENT_MAP [--provider P --model M | --replay FILE] [--record FILE] [--spec PATH]
[--max-tools N] [--batch N] [--examples N] [--replace]`: draft the search expansions of the intents
that lack them, for a human to review.

Input: an intent map and its spec; a writer: a provider's model (`toolgen.evals.writers`, the
providers of `toolgen eval`: openai · anthropic · gemini · openai-compatible, the API key from the
provider's variable or ``--api-key-env``), or a recorded run (``--replay FILE``: every request must
equal the recorded one; nothing is sent). Output: the intent map rewritten in place, atomically, with
each drafted intent's `examples` / `use_when` / `not_for` added and a ``# decide [examples-unreviewed]``
mark above it (`toolgen.scaffold.describe`); what was drafted, left alone and dropped, printed on
stderr. Without a writer nothing is drafted and the command says so (exit 0). ``--record FILE`` keeps
every exchange (replacing the file atomically, as the map; a symbolic link is refused). Exit codes: 0 ok · 2 bad input (map, spec, arguments, missing key or SDK, a replay
that differs, a writer that failed: nothing written) · 3 internal error.
"""

from __future__ import annotations

import importlib
import os
import stat
import sys
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from ..diagnostics import display_path
from ..durable import new_file_mode, replace_file
from ..evals.provider_names import KEY_ENV, PROVIDERS, SDK_MODULES
from ..scaffold.describe import MAX_DRAFTED, DescribeOptions
from .exits import EXTRA_HINT, ExitCode, guarded
from .options import endpoint_options, model_options, stacked
from .terminal import terminal_safe

_BOM = "\ufeff"
#: `toolgen init --describe`: its writer runs after the draft is written
INIT_COMMAND = "toolgen init --describe"
#: what stands for the API key wherever a server echoed it (a failure message, a recording, an answer)
REDACTED = "[redacted API key]"
#: a key shorter than this is not searched for (it would hide ordinary words)
MIN_KEY_CHARS = 8
#: the most tools shown by name in each list of the summary
SHOWN = 20
#: the most dropped answer parts listed one by one (a model may answer thousands of items)
SHOWN_DROPS = 50

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class WriterChoice:
    """The writer the command line chose: a provider and model (with its endpoint and key variable),
    a cassette to replay, a file to record into; `configured` is false when none was given."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    record: Path | None = None
    replay: Path | None = None

    @property
    def configured(self) -> bool:
        return self.replay is not None or (self.provider is not None and self.model is not None)


def writer_options(func: F) -> F:
    """The writer's options, shared by `toolgen describe` and `toolgen init --describe`: the
    provider's (as `toolgen eval run` takes them), then the recording's."""
    return stacked(
        model_options("The provider whose model drafts the expansions (as `toolgen eval run`)."),
        endpoint_options,
        click.option(
            "--record",
            type=click.Path(path_type=Path),
            default=None,
            help="Keep every exchange with the provider in this JSON file (replayable offline).",
        ),
        click.option(
            "--replay",
            type=click.Path(path_type=Path),
            default=None,
            help="Answer every request from this recorded file; sends nothing to a provider.",
        ),
    )(func)


def describe_options(func: F) -> F:
    """The bounds of a describe run (`toolgen.scaffold.describe.DescribeOptions`)."""
    return stacked(
        click.option(
            "--max-tools",
            type=click.IntRange(min=1),
            default=100,
            show_default=True,
            help="The most tools drafted in one run (run again for the rest).",
        ),
        click.option(
            "--batch",
            type=click.IntRange(1, 50),
            default=10,
            show_default=True,
            help="Tools per request to the model.",
        ),
        click.option(
            "--examples",
            type=click.IntRange(1, MAX_DRAFTED),
            default=3,
            show_default=True,
            help="Requests drafted per tool.",
        ),
        click.option(
            "--replace", is_flag=True, help="Draft tools that already have expansions too, replacing them."
        ),
    )(func)


@click.command("describe")
@click.argument("intent_map", type=click.Path(path_type=Path))
@click.option(
    "--spec",
    "spec",
    type=click.Path(path_type=Path),
    default=None,
    help="The spec, when not the intent map's `spec:`.",
)
@writer_options
@describe_options
@guarded
def describe_command(
    intent_map: Path,
    spec: Path | None,
    provider: str | None,
    model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    record: Path | None,
    replay: Path | None,
    max_tools: int,
    batch: int,
    examples: int,
    replace: bool,
) -> None:
    """Draft search expansions (examples, use_when, not_for) for the intents of INTENT_MAP that lack them."""
    choice = WriterChoice(provider, model, base_url, api_key_env, record, replay)
    run_describe(
        intent_map, spec, choice, DescribeOptions(max_tools, batch, examples, replace), "toolgen describe"
    )


def _fail(command: str, message: str) -> None:
    after = (
        "the draft intent map was written without search expansions (`toolgen describe` drafts them)"
        if command == INIT_COMMAND
        else "nothing was written"
    )
    click.echo(terminal_safe(f"{command}: {message}; {after}."), err=True)
    sys.exit(ExitCode.BAD_INPUT)


def check_writer(command: str, choice: WriterChoice, intent_map: Path, spec: Path) -> None:
    """Refuse (exit 2), before anything is written, a writer the run could not use: ``--record``
    with ``--replay``, a recording that cannot be read or aims at an input, a missing key or SDK."""
    if choice.configured:
        _check_record(command, choice, {"intent map": intent_map, "spec": spec})
        _make_writer(command, choice)


def _require_sdk(command: str, provider: str) -> None:
    for module in ("httpx2", *SDK_MODULES.get(provider, ())):
        try:
            importlib.import_module(module)
        except ImportError as exc:
            _fail(
                command,
                f"the {provider} provider needs the {module!r} package, which is not installed "
                f"({type(exc).__name__}: {exc}); install the eval extra: " + EXTRA_HINT.format(extra="eval"),
            )


def _names(keys: list[str]) -> str:
    shown = ", ".join(keys[:SHOWN])
    return shown + (f" and {len(keys) - SHOWN:,} more" if len(keys) > SHOWN else "")


def run_describe(
    intent_map: Path, spec: Path | None, choice: WriterChoice, options: DescribeOptions, command: str
) -> None:
    """Load the map and its spec, draft through the chosen writer and write the map (see the module
    docstring); prints on stderr. Raises `DiagnosticError` for a map or spec that cannot be loaded;
    exits 2 for a writer that cannot be made or failed."""
    from ..compile.inputs import require_spec, resolve_spec_path
    from ..compile.intent import load_intent_map
    from ..compile.load import load_spec
    from ..diagnostics import DiagnosticSink
    from ..scaffold.describe import describe, plan_describe

    loaded = load_intent_map(intent_map)
    saved = _read_saved(command, intent_map, loaded.text)
    spec_path = resolve_spec_path(loaded, spec)
    require_spec(loaded, spec_path, overridden=spec is not None)
    doc = load_spec(spec_path, sink=DiagnosticSink())
    shown = display_path(intent_map)
    _check_record(command, choice, {"intent map": saved.path, "spec": spec_path})
    if not choice.configured:
        plan = plan_describe(doc, loaded, options)
        lacking = [t.tool for t in plan.todo] + [t.key for t in plan.toolsets] + plan.later
        click.echo(
            f"{command}: no writer configured (--provider and --model, or --replay FILE): nothing drafted; "
            f"{_counted(lacking)} of {shown} lack search expansions.",
            err=True,
        )
        return
    writer, transport, cassette, key = _make_writer(command, choice)
    redact = _redactor(key)
    try:
        result = describe(doc, loaded, RedactingWriter(writer, redact), options, saved.text)
    except Exception as exc:  # noqa: BLE001 - the writer's SDK and transport raise their own error types
        mismatch = getattr(transport, "mismatch", None)
        _fail(command, redact(f"the writer failed: {mismatch or f'{type(exc).__name__}: {exc}'}"))
        return
    if cassette is not None and getattr(transport, "position", None) != len(cassette.exchanges):
        _fail(command, f"the run sent fewer requests than {choice.replay} recorded: the map or spec changed")
    if choice.record is not None and cassette is None:
        from ..evals.writers import Cassette

        writer_info = getattr(writer, "provider", choice.provider), getattr(writer, "model", choice.model)
        recording = Cassette(
            str(writer_info[0]),
            str(writer_info[1]),
            _without_userinfo(choice.base_url),
            [_redacted(e, redact) for e in getattr(transport, "exchanges", [])],
        )
        _write_recording(command, choice.record, recording.text().encode("utf-8"))
    if result.text != saved.text:
        _write_saved(command, saved, result.text)
    _report(command, shown, result)


def _check_record(command: str, choice: WriterChoice, inputs: dict[str, Path]) -> None:
    """Refuse a ``--record`` file that is a symbolic link, a folder, or one of the run's inputs (the
    recording would replace it), before anything is sent."""
    if choice.record is None:
        return
    _refuse_link(command, choice.record)
    if choice.record.is_dir():
        _fail(command, f"--record {choice.record} is a folder: name a JSON file to record into")
    target = os.path.realpath(choice.record)
    for what, path in inputs.items():
        if target == os.path.realpath(path):
            _fail(command, f"--record {choice.record} is the {what} this run reads: name another file")


def _refuse_link(command: str, record: Path) -> None:
    if record.is_symlink():
        _fail(
            command,
            f"--record {record} is a symbolic link: name the file itself (a recording replaces the "
            "file it names, never the one a link points to)",
        )


def _write_recording(command: str, record: Path, data: bytes) -> None:
    """Replace the recording `record` with `data` atomically (`toolgen.durable.replace_file`): an
    existing one keeps its mode, a new one gets a new file's (0666 less the umask); a symbolic link, also one made while
    the writer drafted, is refused (exit 2, nothing written)."""
    _refuse_link(command, record)
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode = stat.S_IMODE(record.stat().st_mode)
        except FileNotFoundError:
            mode = new_file_mode()
        replace_file(record, data, mode)
    except OSError as exc:
        _fail(command, f"cannot write the recording --record {record}: {exc.strerror or exc}")


@dataclass(frozen=True)
class SavedMap:
    """The intent map as saved: its bytes, whether they start with a byte order mark, and its text
    without the mark, line breaks as saved (CRLF, LF or CR: a draft keeps them)."""

    path: Path
    raw: bytes
    bom: bool
    text: str


def _read_saved(command: str, intent_map: Path, loaded_text: str) -> SavedMap:
    """The map as saved (a symlink's target: the link stays); refuses a map no one may write (mode
    without a write bit: its owner meant it to stay as it is) or one that changed since it was loaded."""
    path = Path(os.path.realpath(intent_map))
    shown = display_path(intent_map)
    try:
        raw = path.read_bytes()
        mode = path.stat().st_mode
    except OSError as exc:
        _fail(command, f"cannot read {shown}: {exc.strerror}")
        raise
    if not mode & 0o222:
        _fail(command, f"{shown} is read-only: make it writable (chmod u+w) to draft into it")
    text = raw.decode("utf-8", "replace")
    bom = text.startswith(_BOM)
    text = text.removeprefix(_BOM)
    if text.replace("\r\n", "\n").replace("\r", "\n") != loaded_text:
        _fail(command, f"{shown} changed while it was read: run again")
    return SavedMap(path, raw, bom, text)


def _write_saved(command: str, saved: SavedMap, text: str) -> None:
    """Replace the map with `text` (its byte order mark put back) atomically: a new file beside it,
    with the map's mode, renamed over it; refused when the map changed since it was read."""
    shown = display_path(saved.path)
    data = ((_BOM if saved.bom else "") + text).encode("utf-8")
    try:
        with open(saved.path, "rb") as held:
            _lock(held.fileno())  # released when closed: after the rename
            _replace_unchanged(command, saved, data, shown)
    except OSError as exc:
        _fail(command, f"cannot write {shown}: {exc.strerror or exc}")


def _lock(fd: int) -> None:
    """Hold an exclusive lock on the open map: a second run that opened it before this one renames
    a new file over it waits here, then finds it changed (no lock where the OS has no ``flock``)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return
    fcntl.flock(fd, fcntl.LOCK_EX)


def _replace_unchanged(command: str, saved: SavedMap, data: bytes, shown: str) -> None:
    """Rename a new file holding `data`, with the map's mode, over the map, unless the map (read by
    its path, under the lock) is no longer what was read."""
    if saved.path.read_bytes() != saved.raw:
        _fail(
            command,
            f"{shown} changed while the writer drafted (another run or an editor saved it): run again",
        )
    replace_file(saved.path, data, stat.S_IMODE(saved.path.stat().st_mode))


def _redactor(key: str) -> Callable[[str], str]:
    """What hides the API key `key` in a text (one too short to find safely is left: `MIN_KEY_CHARS`)."""
    if len(key) < MIN_KEY_CHARS:
        return lambda text: text
    return lambda text: text.replace(key, REDACTED)


def _without_userinfo(url: str | None) -> str | None:
    """`url` without a ``user:password@`` part (a credential a recording must not keep)."""
    if url is None or "@" not in url:
        return url
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[-1]))


def _redacted(value: Any, redact: Callable[[str], str]) -> Any:
    """`value` (an exchange's JSON) with `redact` applied to every string in it."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redacted(v, redact) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v, redact) for v in value]
    return value


@dataclass(frozen=True)
class RedactingWriter:
    """A writer whose answers have the API key hidden (a server that echoes it reaches neither the
    map nor the terminal through the answer)."""

    inner: Any
    redact: Callable[[str], str]

    @property
    def name(self) -> str:
        return str(self.inner.name)

    def write(self, system: str, prompt: str, schema: Any) -> str:
        return self.redact(self.inner.write(system, prompt, schema))


def _make_writer(command: str, choice: WriterChoice) -> tuple[Any, Any, Any, str]:
    """(writer, its transport, the cassette replayed or None, the API key it sends)."""
    if choice.record is not None and choice.replay is not None:
        _fail(command, "--record and --replay exclude each other")
    cassette = None
    if choice.replay is not None:
        from ..evals.writers import Cassette

        try:
            cassette = Cassette.read(choice.replay)
        except (OSError, ValueError) as exc:
            _fail(command, f"{choice.replay}: {exc}")
        assert cassette is not None
        provider, model, base_url, key = cassette.provider, cassette.model, cassette.base_url, "replay"
        if provider not in PROVIDERS:
            _fail(
                command,
                f"{choice.replay}: the recording's writer has an unknown provider {provider!r}: "
                f"use one of {', '.join(PROVIDERS)}",
            )
        asked = {
            "--provider": (choice.provider, provider),
            "--model": (choice.model, model),
            "--base-url": (choice.base_url, base_url),
        }
        for option, (given, recorded) in asked.items():
            if given is not None and given != recorded:
                _fail(
                    command,
                    f"{choice.replay} recorded {option} {recorded!r}, not {given!r}: drop {option} "
                    "to replay the recording, or record a run of the writer you name",
                )
    else:
        assert choice.provider is not None and choice.model is not None
        provider, model, base_url = choice.provider, choice.model, choice.base_url
        env = choice.api_key_env or KEY_ENV[provider]
        key = os.environ.get(env) or ""
        if not key and provider != "openai-compatible":
            _fail(command, f"no API key: set {env} (or name another variable with --api-key-env)")
    _require_sdk(command, provider)
    import httpx2 as httpx

    from ..evals.cassette import RecordingTransport, ReplayTransport
    from ..evals.writers import make_writer

    transport: httpx.BaseTransport = (
        ReplayTransport(cassette.exchanges) if cassette is not None else RecordingTransport()
    )
    try:
        client = httpx.Client(transport=transport, timeout=300.0)
        return (
            make_writer(provider, model, api_key=key or "none", base_url=base_url, http_client=client),
            transport,
            cassette,
            key,
        )
    except ValueError as exc:
        _fail(command, str(exc))
        raise


def _counted(keys: list[str]) -> str:
    """``N intents`` (and ``and M toolsets`` when some of `keys` name one: ``toolsets.NAME``)."""
    sets = sum(1 for k in keys if k.startswith("toolsets."))
    tools = len(keys) - sets
    text = f"{tools:,} intent{'s' if tools != 1 else ''}"
    return text + (f" and {sets:,} toolset{'s' if sets != 1 else ''}" if sets else "")


def _report(command: str, shown: str, result: Any) -> None:
    plan = result.plan
    drafted = sorted(result.drafted)
    echo = click.echo
    echo(
        f"{command}: {shown}: drafted search expansions for {_counted(drafted)}"
        f" in {result.requests:,} request{'s' if result.requests != 1 else ''}"
        + (f": {_names(drafted)}" if drafted else "")
        + ".",
        err=True,
    )
    if plan.have:
        echo(
            f"  left alone (they have expansions; --replace drafts them again): {len(plan.have):,}", err=True
        )
    if plan.later:
        echo(f"  over --max-tools, for a later run: {_names(plan.later)}", err=True)
    for key, why in plan.skipped:
        echo(terminal_safe(f"  not drafted: {key}: {why}"), err=True)
    for key, why in result.dropped[:SHOWN_DROPS]:
        echo(terminal_safe(f"  dropped from the answer: {key + ': ' if key else ''}{why}"), err=True)
    if len(result.dropped) > SHOWN_DROPS:
        echo(f"  and {len(result.dropped) - SHOWN_DROPS:,} more dropped from the answers", err=True)
    if drafted:
        echo(
            f"Next: review each `# decide [examples-unreviewed]` mark in {shown}: keep the requests users would "
            "say, fix or delete the rest, then delete the mark (`toolgen lint --strict` reports each until then).",
            err=True,
        )


__all__ = [
    "INIT_COMMAND",
    "RedactingWriter",
    "WriterChoice",
    "check_writer",
    "describe_command",
    "describe_options",
    "run_describe",
    "writer_options",
]
