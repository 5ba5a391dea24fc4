"""The typed Python API: the generated `Session` methods and the types `webmcp_nb` exports.

The methods are generated from the registry (scripts/generate_api.py); these tests fail when
the committed module is stale, when a tool lacks a method, or when a method's parameters
differ from its tool's params model. Real calls go through Chromium against the demo site.
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import subprocess
import sys
import typing
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, get_args, get_origin

import pytest
from pydantic import Field

import webmcp_nb
from tests.conftest import CheckedSession, error, ok, ref_for
from webmcp_nb import Session
from webmcp_nb._arguments import Default
from webmcp_nb._generated import ToolMethods
from webmcp_nb.client import tool_registry
from webmcp_nb.core.call.registry import ToolSpec
from webmcp_nb.core.tools.models import ActionData, PageParams
from webmcp_nb.demo import DemoServer

ROOT = Path(__file__).resolve().parent.parent
SPECS = sorted(tool_registry(), key=lambda spec: spec.name)


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_api", ROOT / "scripts" / "generate_api.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


generator = load_generator()


def last_call(session: Session) -> tuple[str, dict[str, Any]]:
    record = session.history[-1]
    return record.tool, record.args


# generation ----------------------------------------------------------------------
def test_the_committed_module_is_what_the_registry_generates() -> None:
    committed = (ROOT / "webmcp_nb" / "_generated.py").read_text(encoding="utf-8")
    generated = generator.render()
    assert generated == generator.render(), "generation must be deterministic"
    assert committed == generated, generator.STALE_HINT  # "run `make generate`"


def test_a_new_tool_gets_both_methods_from_its_params_model() -> None:
    class FrobParams(PageParams):
        target: str = Field(description="What to frob.")
        times: int = Field(1, ge=1, le=9, description="How often.")
        style: Literal["gently", "firmly"] = "gently"

    async def handler(ctx: Any, p: FrobParams) -> ActionData:
        raise AssertionError("never called")

    new = ToolSpec("browser_frob_widget", "Frob", "Frob a widget.", FrobParams, ActionData, handler, "page")
    source = generator.render([*SPECS, new])
    assert source != generator.render(), "a new tool must make the committed module stale"
    signature = (
        "(\n        self,\n        target: str,\n        *,\n        instance: str | None = default(None),\n"
        "        page_id: str | None = default(None),\n        times: int = default(1),\n"
        '        style: Literal["gently", "firmly"] = default("gently"),\n    ) -> Envelope:\n'
        '        """Frob a widget.\n'
    )
    assert f"    def frob_widget{signature}" in source
    twin = signature.replace(
        '"""Frob a widget.\n', '"""Awaitable twin of `frob_widget` (the ``browser_frob_widget`` tool)."""\n'
    )
    assert f"    async def afrob_widget{twin}" in source
    assert 'return self.call("browser_frob_widget", **given(locals()))' in source
    assert 'return await self.acall("browser_frob_widget", **given(locals()))' in source
    assert "        Args:\n            target: What to frob.\n            instance: The browser instance" in source
    assert '            times: How often. (1 to 9)\n        """\n' in source


def test_the_generator_refuses_what_it_cannot_express() -> None:
    class Clash(PageParams):
        url: str

    bad = ToolSpec("browser_bad", "Bad", "Bad.", Clash, ActionData, None, "page", positional=("page_id",))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"required parameters \['url'\] must be positional too"):
        generator.render([bad])
    with pytest.raises(ValueError, match="does not start with 'browser_'"):
        generator.render([ToolSpec("frob", "F", "F.", Clash, ActionData, None, "page")])  # type: ignore[arg-type]


# coverage and signatures -----------------------------------------------------------
@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.name)
def test_every_tool_has_a_blocking_and_an_awaitable_method(spec: ToolSpec) -> None:
    name = spec.name.removeprefix("browser_")
    blocking, awaitable = getattr(Session, name), getattr(Session, "a" + name)
    # Session uses the generated methods: nothing hand-written shadows them.
    assert blocking is getattr(ToolMethods, name) and awaitable is getattr(ToolMethods, "a" + name)
    assert not inspect.iscoroutinefunction(blocking) and inspect.iscoroutinefunction(awaitable)
    assert str(inspect.signature(blocking)) == str(inspect.signature(awaitable))
    words = " ".join((blocking.__doc__ or "").split())
    assert f"Calls the ``{spec.name}`` tool" in words and " ".join(spec.description.split()) in words
    assert awaitable.__doc__ == f"Awaitable twin of `{name}` (the ``{spec.name}`` tool)."


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.name)
def test_method_parameters_match_the_params_model(spec: ToolSpec) -> None:
    method = getattr(Session, spec.name.removeprefix("browser_"))
    parameters = list(inspect.signature(method).parameters.values())[1:]  # after self
    fields = spec.params.model_fields
    assert sorted(p.name for p in parameters) == sorted(fields)
    required = [name for name, field in fields.items() if field.is_required()]
    positional = [p.name for p in parameters if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert positional == list(spec.positional or required)
    hints = typing.get_type_hints(method)
    assert hints["return"].__name__ == "Envelope"
    for p in parameters:
        field = fields[p.name]
        if p.name not in positional:
            assert p.kind is inspect.Parameter.KEYWORD_ONLY
        if field.is_required():
            assert p.default is inspect.Parameter.empty
        else:
            assert isinstance(p.default, Default)
            expected = field.default_factory() if field.default_factory else field.default  # type: ignore[call-arg]
            assert p.default.value == expected and repr(p.default) == repr(expected)
        assert literal_values(hints[p.name]) == literal_values(field.annotation), p.name


def literal_values(annotation: Any) -> set[Any]:
    """Every Literal value inside an annotation (enums must survive generation exactly)."""
    if get_origin(annotation) is Literal:
        return set(get_args(annotation))
    return set().union(*(literal_values(argument) for argument in get_args(annotation)))


def test_existing_call_shapes_still_work_positionally() -> None:
    # The notebooks, README and tests call these positionally; the generated methods keep that.
    assert list(inspect.signature(Session.tabs).parameters)[:2] == ["self", "action"]
    assert list(inspect.signature(Session.webmcp_call).parameters)[:3] == ["self", "name", "input"]
    assert [p.name for p in inspect.signature(Session.drag).parameters.values()][1:3] == ["source_ref", "target_ref"]
    assert inspect.signature(Session.type).parameters["text"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD


# real calls --------------------------------------------------------------------------
def test_blocking_and_awaitable_methods_call_the_tool_with_the_arguments_given(
    session: CheckedSession, demo: DemoServer
) -> None:
    ok(session.navigate(demo.url))
    assert last_call(session) == ("browser_navigate", {"url": demo.url})
    ok(session.navigate(demo.url, wait_until="load", instance=None))
    assert last_call(session) == ("browser_navigate", {"url": demo.url, "wait_until": "load", "instance": None})

    async def shop() -> str:
        snapshot = ok(await session.asnapshot())["snapshot"]
        ref = ref_for(snapshot, 'button "Add Banana"')
        ok(await session.aclick(ref, button="left"))
        assert last_call(session) == ("browser_click", {"ref": ref, "button": "left"})
        return ok(await session.aevaluate("document.getElementById('cart').textContent"))["result"]

    cart = asyncio.run(shop())
    assert cart == "Cart: 1 item: Banana"
    assert last_call(session) == ("browser_evaluate", {"expression": "document.getElementById('cart').textContent"})
    # The 5 tools that had no method before, through their generated ones.
    scrolled = session.scroll(delta_y=0)
    assert scrolled.tool == "browser_scroll" and scrolled.ok


def test_a_wrong_type_gives_an_invalid_params_envelope(session: CheckedSession, demo: DemoServer) -> None:
    # Annotations are for readers and IDEs; the tool's model checks values, so a wrong type gets the
    # same envelope as from `call`, the magics or an agent, not a TypeError.
    message = error(session.click(123), "invalid_params", outcome="not_started", retry="after_correction")  # type: ignore[arg-type]
    assert "parameter 'ref'" in message
    envelope = asyncio.run(session.asnapshot(depth="deep"))  # type: ignore[arg-type]
    assert "parameter 'depth'" in error(envelope, "invalid_params", outcome="not_started", retry="after_correction")
    # A name the method does not have is a Python error at the call site, as for any function.
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        session.click("e1", bogus=True)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'url'"):
        session.navigate()  # type: ignore[call-arg]


# exported types --------------------------------------------------------------------
def test_all_is_explicit_and_every_name_resolves_lazily() -> None:
    assert set(webmcp_nb.__all__) == set(webmcp_nb._LAZY) | {"__version__", "session"}
    assert len(webmcp_nb.__all__) == len(set(webmcp_nb.__all__))
    code = (
        "import sys, webmcp_nb\n"
        "assert sorted(m for m in sys.modules if m.startswith(('webmcp_nb', 'pydantic'))) == ['webmcp_nb'], 'eager'\n"
        "missing = [n for n in webmcp_nb.__all__ if getattr(webmcp_nb, n, None) is None]\n"
        "assert not missing, missing\n"
        "assert sorted(dir(webmcp_nb)) == sorted(webmcp_nb.__all__)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)


PUBLIC_CLASSES = [
    "Session", "NotebookSession", "Envelope", "Operation", "ToolCallError", "PageToolHandle",
    "PublishedHandle", "ServerHandle", "LiveView", "DemoServer", "CallRecord",
]  # fmt: skip


def exported_classes(annotation: Any) -> Iterator[type]:
    if isinstance(annotation, type):
        yield annotation
    for argument in get_args(annotation):
        yield from exported_classes(argument)


def public_annotations(cls: type) -> Iterator[tuple[str, Any, ModuleType]]:
    """(name, annotation, module) of every public attribute and method return of `cls`."""
    for name, annotation in inspect.get_annotations(cls).items():
        if not name.startswith("_"):
            yield name, annotation, sys.modules[cls.__module__]
    for name, member in inspect.getmembers(cls):
        function = member.fget if isinstance(member, property) else member
        annotations = getattr(function, "__annotations__", {}) if callable(function) else {}
        if not name.startswith("_") and "return" in annotations:
            yield f"{name}()", annotations["return"], sys.modules[function.__module__]


@pytest.mark.parametrize("class_name", PUBLIC_CLASSES)
def test_every_type_a_public_method_returns_is_exported(class_name: str) -> None:
    exports = {name: getattr(webmcp_nb, name) for name in webmcp_nb.__all__}
    checked = 0
    for name, annotation, module in public_annotations(exports[class_name]):
        where = f"{class_name}.{name}: {annotation}"
        try:  # resolved with the module's runtime names plus what webmcp_nb exports, nothing else
            resolved = eval(annotation, vars(module), exports) if isinstance(annotation, str) else annotation
        except NameError as exc:
            raise AssertionError(f"{where}: {exc}; export it from webmcp_nb") from None
        for returned in exported_classes(resolved):
            if returned.__module__.startswith("webmcp_nb"):
                assert returned in exports.values(), f"{where}: {returned} is not exported"
        checked += 1
    assert checked


def test_error_types_outcomes_and_retries_have_one_source() -> None:
    from webmcp_nb.core.call.envelope import ERROR_TYPES, RETRY_ADVICE

    # (Output schemas hold the envelope loosely: its error types are not spelled out there.)
    assert ERROR_TYPES == get_args(webmcp_nb.ErrorType) and len(ERROR_TYPES) == len(set(ERROR_TYPES))
    assert get_args(webmcp_nb.Outcome) == ("completed", "not_started", "unknown")
    assert list(RETRY_ADVICE) == list(get_args(webmcp_nb.Retry))
    modes = get_args(webmcp_nb.WebMCPMode)
    create = tool_registry().get("browser_create_instance")
    assert create.input_schema["properties"]["webmcp"]["anyOf"][0]["enum"] == list(modes)
    state = create.data_schema["$defs"]["InstanceInfo"]["properties"]["state"]["enum"]
    assert state == list(get_args(webmcp_nb.InstanceState))
