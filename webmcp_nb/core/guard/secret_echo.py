"""The last step of every call: what it returns and records holds no known secret.

`finish` runs in the engine once a call's envelope is made (`Engine._finish`, after `refresh`
for a call that finished), whatever the tool or front end: the
call's typed text and secret arguments are redacted (`webmcp_nb.core.guard.redaction.redact_call`);
text typed into fields found secret and secret arguments join the known secrets (text redacted
only because its field was never checked does not: it reached no field, and ordinary words would
then be scrubbed everywhere); the instance's cookie values are read again, and the
envelope and arguments are scrubbed of every known secret and secret URL part
(`webmcp_nb.core.guard.known_secrets`). The record (history, call logs, exports) always gets the scrubbed
copy; the caller gets it too unless it may see secrets: an agent with the ``secrets`` grant, the
notebook with ``Session(reveal_secrets=True)``, or a call that asked for ``reveal_secrets=true``
(which the tool allowed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .redaction import redact_call, redact_secrets, scrub_envelope, typed_paths, value_at

if TYPE_CHECKING:
    from ..call.context import CallContext
    from ..call.envelope import Envelope
    from ..call.registry import ToolSpec
    from .grants import Grant
    from .known_secrets import KnownSecrets

SECRETS_GROUP = "secrets"


def reveals(grant: Grant | None, session_reveals: bool, args: Any) -> bool:
    """Whether the caller sees known secrets in what it gets back (never in the record)."""
    if grant is not None:
        return SECRETS_GROUP in grant.groups
    return session_reveals or (isinstance(args, dict) and args.get("reveal_secrets") is True)


def scrub_record(
    known: KnownSecrets, spec: ToolSpec | None, ctx: CallContext | None, args: Any, envelope: Envelope
) -> tuple[Any, Envelope, Envelope]:
    """(arguments to record, envelope with only the call's own typed text redacted, envelope with
    every known secret scrubbed); the call's redacted values join `known`."""
    if spec is not None and isinstance(args, dict):
        secret = ctx.typed_secret if ctx is not None else set()
        known.add(value_at(args, path) for path in typed_paths(spec.typed_text, args) if path in secret)
        known.add(redact_secrets(spec, args)[1])
        args, envelope, _ = redact_call(spec, args, ctx.typed_plain if ctx else set(), envelope)
    forms = known.forms()
    return known.scrub(args), envelope, scrub_envelope(envelope, forms, urls=True)


async def refresh(known: KnownSecrets, ctx: CallContext | None) -> None:
    """Read the call's live instance's cookie values again, before a finished call is recorded
    (the read its tool sent with its last read of the page, if it did: `CallContext.last_read`)."""
    if ctx is not None and ctx.cookie_read is not None:
        await ctx.cookie_read
    else:
        await read_cookies(known, ctx)


async def read_cookies(known: KnownSecrets, ctx: CallContext | None) -> None:
    """Read the cookie values of the call's instance, if it is live."""
    instance = ctx.instance if ctx is not None else None
    if instance is not None and instance.state == "live":
        await known.refresh(instance.instance_id, instance.context)


def finish(
    known: KnownSecrets,
    spec: ToolSpec | None,
    ctx: CallContext | None,
    args: Any,
    envelope: Envelope,
    *,
    grant: Grant | None,
    session_reveals: bool,
) -> tuple[Any, Envelope, Envelope]:
    """(arguments to record, envelope to return, envelope to record) of a call (a finished one
    after `refresh`; a cancelled one, whose caller gets nothing, without)."""
    args, own, scrubbed = scrub_record(known, spec, ctx, args, envelope)
    return args, own if reveals(grant, session_reveals, args) else scrubbed, scrubbed
