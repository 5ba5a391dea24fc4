"""Property-based fuzzing of every tool, through `Session` and through an MCP client.

Arguments are generated from each tool's own input schema (`spec.input_schema`): valid
values, wrong types, unknown keys, huge strings, deep nesting, lone surrogates, values that
are not objects at all. Whatever comes in, every call must return an envelope that obeys
the contract (and serialises), an MCP client must get a tool result (never a JSON-RPC
error), and a call whose outcome is ``not_started`` must leave the page exactly as it was:
its URL, a count of DOM mutations kept by a MutationObserver, form values, scroll, focus,
the tabs and the instances.

The calls run on one real Chromium at `webmcp.html` of the demo site (page tools to call,
a form, buttons). Before each call the session is brought back to that page if an earlier
call took it elsewhere. Arguments that could harm the machine or the session are held to
safe values (file paths, Chromium flags, profile directories, instance names to create or
destroy); everything else is free. Hypothesis runs derandomised with no example database,
so a run is reproducible.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx2
import jsonschema
import mcp_types as types
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

import webmcp_nb.core.tools  # noqa: F401 - registers every tool
from tests.conftest import check_contract, ok
from webmcp_nb import Envelope, Session
from webmcp_nb.core.call.bounds import INVALID_TOOL_NAME, MAX_ARGUMENT_BYTES, MAX_ARGUMENT_DEPTH, MAX_TOOL_NAME_CHARS
from webmcp_nb.core.call.registry import REGISTRY, ToolSpec
from webmcp_nb.core.config import Limits
from webmcp_nb.core.guard.grants import ALWAYS_GRANTED
from webmcp_nb.mcp.results import output_schema

pytestmark = pytest.mark.browser  # every test calls tools on a live page

TOOLS = REGISTRY.names()
SESSION_EXAMPLES = 15  # per tool (each test asserts it got them all)
MCP_EXAMPLES = 13
NAME_EXAMPLES = 60
MIN_CALLS = 500  # generated calls per run, through Session and again through an MCP client
EXTRA_INSTANCE = "fuzz-extra"  # the only instance the fuzz may create or destroy
FUZZ_TIMEOUT_S = 15  # the operation timeout of each generated call: nothing generated may hang the run
FRUITS = ["Apple", "Banana", "Cherry", "Date", "Elderberry", "Fig", "Grape"]
PAGE_TOOLS = ["add_to_cart", "get_cart", "echo_text", "fail_always", "search_products", "extra_tool", "no_such_tool"]
# `leave_page` never answers (it navigates away): calling it would only wait for the timeout.
EXPRESSIONS = [
    "1 + 1",
    "document.title",
    "() => location.href",
    "el => el.textContent",
    "throw new Error('fuzz')",
    "'a' + String.fromCharCode(0xd800)",
    "new Promise(r => setTimeout(() => r(7), 20))",
    "undefined",
    "[1, {a: 2}]",
]

FUZZ = settings(
    max_examples=SESSION_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)

# ---------------------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------------------

SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
TEXT = st.text(st.one_of(st.characters(), SURROGATES), max_size=12)


@dataclass(frozen=True)
class Big:
    """A value too large or too deep to print (Hypothesis prints examples): made at call time."""

    kind: str
    size: int

    def make(self) -> Any:
        if self.kind == "nested":
            value: Any = "leaf"
            for _ in range(self.size):
                value = {"a": value}
            return value
        return self.kind * self.size


def made(value: Any) -> Any:
    """`value` with every `Big` in it made."""
    if isinstance(value, Big):
        return value.make()
    if isinstance(value, dict):
        return {made(key): made(item) for key, item in value.items()}
    if isinstance(value, list):
        return [made(item) for item in value]
    return value


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    TEXT,
    st.integers(min_value=2**1023, max_value=2**1100),
)
HUGE = st.sampled_from([Big("x", 200_000), Big("é", MAX_ARGUMENT_BYTES // 2 + 1), Big("\ud800", 1_000)])
DEEP = st.sampled_from(
    [Big("nested", MAX_ARGUMENT_DEPTH - 2), Big("nested", MAX_ARGUMENT_DEPTH + 1), Big("nested", 3_000)]
)
JUNK_KEYS = st.text(st.sampled_from("qxz0 _\ud800é"), max_size=8)
JUNK = st.one_of(
    SCALARS,
    HUGE,
    DEEP,
    st.recursive(
        SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(JUNK_KEYS, inner, max_size=3), max_leaves=6
    ),
)
"""Anything: wrong types, huge, deep, surrogates."""
WRONG_TYPE = st.one_of(st.integers(), st.booleans(), st.dictionaries(JUNK_KEYS, st.integers(), max_size=2), DEEP)
"""Junk that is never a string or a list of strings (for arguments that must stay safe)."""


def resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def valid(schema: dict[str, Any], root: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values the JSON Schema accepts (kept small)."""
    schema = resolve(schema, root)
    if "anyOf" in schema:
        return st.one_of([valid(branch, root) for branch in schema["anyOf"]])
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        return st.integers(schema.get("minimum", -(2**31)), schema.get("maximum", 2**31))
    if kind == "number":
        low = schema.get("minimum", schema.get("exclusiveMinimum", -1e6))
        return st.floats(low, schema.get("maximum", 1e6), exclude_min="exclusiveMinimum" in schema, allow_nan=False)
    if kind == "string":
        low, high = schema.get("minLength", 0), min(schema.get("maxLength", 20), 20)
        if "pattern" in schema:
            return st.from_regex(schema["pattern"], fullmatch=True).filter(
                lambda s: low <= len(s) <= schema.get("maxLength", 10**9)
            )
        return st.text(min_size=low, max_size=max(low, high))
    if kind == "array":
        return st.lists(
            valid(schema["items"], root), min_size=schema.get("minItems", 0), max_size=min(schema.get("maxItems", 4), 4)
        )
    if kind == "object":
        if schema.get("additionalProperties") is True and "properties" not in schema:
            return st.dictionaries(st.text(max_size=8), JUNK, max_size=3)
        required = set(schema.get("required", []))
        props = schema.get("properties", {})
        return st.fixed_dictionaries(
            {k: valid(v, root) for k, v in props.items() if k in required},
            optional={k: valid(v, root) for k, v in props.items() if k not in required},
        )
    raise AssertionError(f"no strategy for {schema}")


class Page:
    """What the fuzz knows of its page: the URL, real refs, a file to upload."""

    def __init__(self, url: str, refs: list[str], upload: str) -> None:
        self.url, self.refs, self.upload = url, refs, upload


def mostly(common: st.SearchStrategy[Any], rare: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`common` four times in five, else `rare`."""
    return st.sampled_from([True] * 4 + [False]).flatmap(lambda usual: common if usual else rare)


def safe_values(page: Page) -> dict[str, st.SearchStrategy[Any]]:
    """Valid values for arguments that must not take just any valid value, by name."""
    # The page's current refs (read when drawn: `settle` renews them), or any ref at all.
    current = st.integers(0, 63).map(lambda index: page.refs[index % len(page.refs)])
    refs = mostly(current, st.from_regex(r"^(f\d{1,6})?e\d{1,9}$", fullmatch=True))
    return {
        # Files and processes on this machine: only known, harmless values.
        "paths": st.sampled_from([[page.upload], [], ["/nonexistent/fuzz.txt"]]),
        "profile_dir": st.none(),
        "executable_path": st.none(),
        "args": st.just([]),
        "headless": st.sampled_from([True, None]),
        # Instances: never the session's own one destroyed, at most one more launched.
        "name@browser_create_instance": mostly(st.just("default"), st.just(EXTRA_INSTANCE)),  # launches are slow
        "name@browser_destroy_instance": st.sampled_from([EXTRA_INSTANCE, "ghost"]),
        "instance": mostly(
            st.sampled_from([None, "default"]),
            st.sampled_from(["ghost"]) | st.from_regex(r"^[a-z][a-z0-9]{0,8}$", fullmatch=True),
        ),
        "page_id": mostly(st.none(), st.text(min_size=1, max_size=8)),
        "frame_id": mostly(st.none(), st.text(min_size=1, max_size=8)),
        "download_id": mostly(st.none(), st.text(min_size=1, max_size=8)),
        # Quick answers: no waiting for text that never comes, no unreachable hosts.
        "time_s": st.floats(0.01, 0.2),
        "wait_s": st.floats(0, 0.2),
        "timeout_s": st.floats(0.5, 3),
        "url": st.sampled_from(
            [page.url, "about:blank", page.url.replace("webmcp.html", "form.html"), "http://127.0.0.1:9/"]
        )
        | st.text(st.characters(exclude_characters=":"), min_size=1, max_size=12),
        # The page's own things, so that some calls act for real.
        "ref": refs,
        "source_ref": refs,
        "target_ref": refs,
        "expression": st.sampled_from(EXPRESSIONS) | st.text(min_size=1, max_size=12),
        "name@browser_webmcp_call": st.sampled_from(PAGE_TOOLS),
        "input": st.fixed_dictionaries({"item": st.sampled_from(FRUITS), "quantity": st.integers(1, 10)})
        | st.fixed_dictionaries({"text": TEXT})
        | st.dictionaries(st.text(max_size=6), JUNK, max_size=3),
        "text": st.text(max_size=12) | TEXT,
    }


SAFE_JUNK = {
    "paths",
    "profile_dir",
    "executable_path",
    "args",
    "name@browser_create_instance",
    "name@browser_destroy_instance",
    "url",
    "time_s",
    "wait_s",
    "timeout_s",
    "expression",
    "name@browser_webmcp_call",
}
"""Arguments whose invalid values must not be strings or lists of strings either (a random
string is a valid path, URL, expression or instance name)."""
ALWAYS = {"time_s", "wait_s", "timeout_s"}
"""Arguments always sent: their defaults wait long."""


def arguments(spec: ToolSpec, page: Page, *, surrogates: bool = True) -> st.SearchStrategy[Any]:
    """Arguments for `spec`: all valid, some fields wrong, or not arguments at all."""
    root = spec.input_schema
    safe = safe_values(page)
    props = root.get("properties", {})
    required = set(root.get("required", [])) | (ALWAYS & set(props))

    def key(name: str) -> str:
        return f"{name}@{spec.name}" if f"{name}@{spec.name}" in safe else name

    def good(name: str) -> st.SearchStrategy[Any]:
        return safe[key(name)] if key(name) in safe else valid(props[name], root)

    def bad(name: str) -> st.SearchStrategy[Any]:
        return WRONG_TYPE if key(name) in SAFE_JUNK else JUNK

    def fields(value: Callable[[str], st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
        return st.fixed_dictionaries(
            {name: value(name) for name in props if name in required},
            optional={name: value(name) for name in props if name not in required},
        )

    extras = st.dictionaries(JUNK_KEYS.filter(lambda k: k not in props), JUNK, min_size=1, max_size=2)
    all_valid = fields(good)
    some_wrong = fields(lambda name: good(name) | bad(name))
    with_extras = st.tuples(all_valid, extras).map(lambda pair: {**pair[1], **pair[0]})
    not_an_object = st.one_of(st.lists(SCALARS, max_size=3), SCALARS, HUGE)
    huge_or_deep = (
        st.fixed_dictionaries({}, optional={name: st.one_of(HUGE, DEEP) for name in props}).filter(bool)
        if props
        else DEEP.map(lambda deep: {"x": deep})
    )
    kinds = {
        "valid": all_valid,
        "wrong": some_wrong,
        "extras": with_extras,
        "big": huge_or_deep,
        "not an object": not_an_object,
    }
    # Half of the calls valid (so that tools act and pages change), half bad in some way.
    generated = st.sampled_from(["valid"] * 5 + ["wrong", "wrong", "extras", "big", "not an object"]).flatmap(
        kinds.__getitem__
    )
    if not surrogates:
        generated = generated.filter(lambda value: encodable(made(value)))
    return generated


def encodable(value: Any) -> bool:
    """Whether `value` can be written as UTF-8 JSON (a client cannot send a lone surrogate)."""
    try:
        json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (ValueError, RecursionError):
        return False
    return True


# ---------------------------------------------------------------------------------------
# The page and its fingerprint
# ---------------------------------------------------------------------------------------

OBSERVER = """() => {
  if (window.__fuzzMutations !== undefined) return;
  window.__fuzzMutations = 0;
  new MutationObserver((records) => { window.__fuzzMutations += records.length; })
    .observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
}"""
FINGERPRINT = """() => JSON.stringify([
  location.href, window.__fuzzMutations ?? null, history.length, document.title, scrollX, scrollY,
  document.activeElement && (document.activeElement.tagName + '#' + document.activeElement.id),
  [...document.querySelectorAll('input, textarea, select')].map((e) => [e.value, e.checked]),
])"""


def fingerprint(session: Session) -> tuple[Any, ...]:
    """Everything about the session's browser a call could change, read without changing it."""
    page = session.evaluate(FINGERPRINT, instance="default")
    instances = ok(session.list_instances())
    tabs = session.tabs("list", instance="default")
    return (
        tuple(json.loads(page.data["result"])) if page.ok else page.error_type,
        instances["current_instance"],
        [(i["name"], i["state"], i["pages"]) for i in instances["instances"]],
        [(t["page_id"], t["url"], t["current"]) for t in tabs.data["tabs"]] if tabs.ok else tabs.error_type,
    )


@contextlib.contextmanager
def default_budget(session: Session) -> Iterator[None]:
    """The default operation timeout for the test's own calls: a first launch, or a page restored
    on a loaded machine, may take longer than the generated calls are allowed."""
    session.reconfigure(operation_timeout_s=Limits().operation_timeout_s)
    try:
        yield
    finally:
        session.reconfigure(operation_timeout_s=FUZZ_TIMEOUT_S)


def settle(session: Session, page: Page) -> tuple[Any, ...]:
    """Bring the browser back to the fuzz page if a call took it elsewhere; return its fingerprint."""
    with default_budget(session):
        return restore(session, page)


def restore(session: Session, page: Page) -> tuple[Any, ...]:
    for _ in range(3):
        state = fingerprint(session)
        page_state, current, instances, tabs = state
        home = isinstance(page_state, tuple) and page_state[0] == page.url and page_state[1] is not None
        if (
            home
            and current == "default"
            and [i[0] for i in instances] == ["default"]
            and isinstance(tabs, list)
            and len(tabs) == 1
        ):
            return state
        if EXTRA_INSTANCE in [i[0] for i in instances]:
            session.destroy_instance(EXTRA_INSTANCE)
        session.call("browser_handle_dialog", accept=True, instance="default")
        session.call("browser_file_upload", paths=[], instance="default")
        listed = session.tabs("list", instance="default")
        if listed.ok:
            for tab in listed.data["tabs"][1:]:
                session.tabs("close", page_id=tab["page_id"], instance="default")
            if not listed.data["tabs"]:
                session.tabs("new", instance="default")
        ok(session.navigate(page.url))  # the current instance, "default" again: launched if need be
        ok(session.evaluate(OBSERVER, instance="default"))
        renew_refs(session, page)
    raise AssertionError(f"the fuzz page could not be restored: {state}")


def renew_refs(session: Session, page: Page) -> None:
    """Take a whole snapshot, so that the refs the fuzz draws are the latest (a snapshot of a
    subtree, which the fuzz takes too, would make the others stale)."""
    page.refs = re.findall(r"\[ref=(e\d+)\]", ok(session.snapshot(instance="default"))["snapshot"]) or page.refs


def assert_envelope(envelope: Any, limit: int) -> Envelope:
    """An envelope that obeys the contract and serialises whatever it holds."""
    assert isinstance(envelope, Envelope), envelope
    check_contract(envelope)
    encoded = envelope.to_json_bytes()
    assert len(encoded) <= limit
    json.loads(encoded)
    str(envelope).encode("utf-8")
    repr(envelope).encode("utf-8", "backslashreplace")
    return envelope


# ---------------------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fuzz_session(demo) -> Iterator[Session]:
    # Every envelope of the fuzz is checked as it comes, so the session records none.
    with Session(operation_timeout_s=FUZZ_TIMEOUT_S) as session:
        yield session


@pytest.fixture(scope="module")
def page(fuzz_session: Session, demo, tmp_path_factory) -> Page:
    upload = tmp_path_factory.mktemp("fuzz") / "upload.txt"
    upload.write_text("fuzz upload\n")
    fuzz_page = Page(demo.url_for("webmcp.html"), [], str(upload))
    settle(fuzz_session, fuzz_page)
    assert len(fuzz_page.refs) >= 8, fuzz_page.refs
    return fuzz_page


class McpCaller:
    """One `mcp.Client` over streamable HTTP, kept open on a loop thread of its own so that
    synchronous Hypothesis examples can use it."""

    def __init__(self, url: str, token: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.closing = asyncio.Event()
        opened: concurrent.futures.Future[Client] = concurrent.futures.Future()
        self.task = asyncio.run_coroutine_threadsafe(self._hold(url, token, opened), self.loop)
        self.client = opened.result(timeout=60)

    async def _hold(self, url: str, token: str, opened: concurrent.futures.Future[Client]) -> None:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        agent = types.Implementation(name="fuzz-agent", version="1.0")
        async with Client(streamable_http_client(url, http_client=http), client_info=agent) as client:
            opened.set_result(client)
            await self.closing.wait()

    def run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=120)

    def call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        return self.run(self.client.call_tool(name, arguments))

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.closing.set)
        self.task.result(timeout=60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


@pytest.fixture(scope="module")
def mcp(fuzz_session: Session, page: Page) -> Iterator[McpCaller]:
    handle = fuzz_session.serve_mcp()  # default caps: core tools and what the notebook publishes
    caller = McpCaller(handle.url, handle.token)
    yield caller
    caller.close()
    handle.stop()


# ---------------------------------------------------------------------------------------
# The properties
# ---------------------------------------------------------------------------------------


def unchanged_if_not_started(session: Session, before: tuple[Any, ...], outcome: str, what: str) -> None:
    if outcome == "not_started":
        with default_budget(session):
            after = fingerprint(session)
        assert after == before, f"a not_started call changed the page: {what}"


@pytest.mark.parametrize("tool", TOOLS)
def test_session_calls_always_return_an_envelope(fuzz_session, page, tool):
    spec = REGISTRY.get(tool)
    outcomes: Counter[str] = Counter()

    # Three calls every tool must refuse before it starts, whatever the draws find on the page
    # (which refs are stale depends on the tests before): the not_started check runs on each.
    @FUZZ
    @given(args=arguments(spec, page))
    @example(args=[])
    @example(args={"fuzz_no_such_option": 1})
    @example(args={"fuzz_too_big": Big("x", 2_000_000)})
    def call(args: Any) -> None:
        args = made(args)
        before = settle(fuzz_session, page)
        envelope = assert_envelope(fuzz_session.call_as("fuzz", tool, args), fuzz_session.limits.max_result_bytes)
        assert envelope.operation.tool == tool
        if not isinstance(args, dict):
            assert envelope.error_type == "invalid_params", (envelope.error_type, envelope.message)
        outcomes[envelope.operation.outcome] += 1
        unchanged_if_not_started(fuzz_session, before, envelope.operation.outcome, f"{tool} {envelope.message}")

    settle(fuzz_session, page)
    renew_refs(fuzz_session, page)
    call()
    assert sum(outcomes.values()) >= SESSION_EXAMPLES
    assert outcomes["not_started"] >= 3, outcomes


NAMES = st.one_of(
    st.sampled_from(TOOLS).map(lambda name: name[:-1]),  # near misses
    st.sampled_from(TOOLS).map(lambda name: name + "\ud800"),
    TEXT,
    st.text(min_size=129, max_size=300),
    st.just(Big("x", 2_000_000)),
    st.integers(),
    st.none(),
    st.binary(max_size=8),
    st.lists(st.text(max_size=3), max_size=2),
    st.floats(),
)


@settings(FUZZ, max_examples=NAME_EXAMPLES)
@given(name=NAMES, args=st.one_of(st.just({}), JUNK))
def test_any_tool_name_returns_an_envelope(fuzz_session, page, name, args):
    name, args = made(name), made(args)
    before = settle(fuzz_session, page)
    envelope = assert_envelope(fuzz_session.call_as("fuzz", name, args), fuzz_session.limits.max_result_bytes)
    assert envelope.error_type == "invalid_params" and envelope.operation.outcome == "not_started"
    expected = name if isinstance(name, str) and len(name) <= MAX_TOOL_NAME_CHARS else INVALID_TOOL_NAME
    assert envelope.operation.tool == expected
    unchanged_if_not_started(fuzz_session, before, "not_started", repr(name)[:80])


@pytest.mark.parametrize("tool", TOOLS)
def test_mcp_calls_always_return_a_tool_result(fuzz_session, page, mcp, tool):
    spec = REGISTRY.get(tool)
    granted = spec.group in ALWAYS_GRANTED
    schema = output_schema(spec)
    outcomes: Counter[str] = Counter()

    @settings(FUZZ, max_examples=MCP_EXAMPLES)
    @given(args=arguments(spec, page, surrogates=False).filter(lambda a: isinstance(a, dict)))
    def call(args: dict[str, Any]) -> None:
        # A client sends an object (the Python client refuses anything else itself; raw
        # non-object arguments are pinned in test_bad_input).
        args = made(args)
        before = settle(fuzz_session, page)
        try:
            result = mcp.call(tool, args)
        except MCPError as exc:  # pragma: no cover - the property under test
            raise AssertionError(f"JSON-RPC error for {tool}: {exc}") from exc
        envelope = result.structured_content
        if envelope is None:  # an image result: the image block and the envelope's facts as text
            assert schema is None and result.is_error is False, result
            assert [block for block in result.content if isinstance(block, types.ImageContent)], result
            outcomes["completed"] += 1
            return
        assert isinstance(envelope, dict), result
        assert result.is_error is (envelope["status"] == "error")
        if schema is not None:
            jsonschema.validate(envelope, schema)
        assert envelope["operation"]["tool"] == tool
        if not granted:  # refused, whatever the arguments (out of bounds, invalid or not granted)
            assert (envelope["error_type"], envelope["operation"]["outcome"]) == ("invalid_params", "not_started")
        (text,) = [block.text for block in result.content if isinstance(block, types.TextContent)]
        assert text.startswith(f"{tool}: ")
        outcomes[envelope["operation"]["outcome"]] += 1
        unchanged_if_not_started(fuzz_session, before, envelope["operation"]["outcome"], f"{tool} over MCP")

    settle(fuzz_session, page)
    renew_refs(fuzz_session, page)
    call()
    assert sum(outcomes.values()) >= MCP_EXAMPLES


def test_each_run_makes_at_least_500_calls_each_way():
    assert len(TOOLS) * SESSION_EXAMPLES + NAME_EXAMPLES >= MIN_CALLS  # through Session
    assert len(TOOLS) * MCP_EXAMPLES >= MIN_CALLS  # through an MCP client


def test_the_fingerprint_sees_what_calls_change(fuzz_session, page):
    """The not_started property is only as good as the fingerprint: each kind of change a
    call can make must show in it."""
    changes = {
        "DOM": lambda: fuzz_session.evaluate("document.body.append(document.createElement('hr'))"),
        "form value": lambda: fuzz_session.evaluate("document.querySelector('input').value = 'typed'"),
        "scroll": lambda: fuzz_session.evaluate("document.body.style.height = '5000px'; scrollTo(0, 300)"),
        "URL": lambda: fuzz_session.navigate(page.url + "#moved"),
        "tabs": lambda: fuzz_session.tabs("new"),
        "instances": lambda: fuzz_session.create_instance(EXTRA_INSTANCE),
    }
    for what, change in changes.items():
        before = settle(fuzz_session, page)
        with default_budget(fuzz_session):
            ok(change())
            after = fingerprint(fuzz_session)
        assert after != before, what
    settle(fuzz_session, page)
