"""The teaching checks (webmcp_nb.demo.teaching) on the real demo shop: each one passes when the task is
done and otherwise says, in words, what is missing; none ever raises."""

from __future__ import annotations

from typing import Any

import pytest

from webmcp_nb.core.browsers.aria import find_ref
from webmcp_nb.demo import DemoServer
from webmcp_nb.demo.teaching import Check, NotYet, ShopExercise, check, solution


@pytest.fixture
def exercise(session: Any) -> ShopExercise:
    return ShopExercise(session)


def test_find_product(exercise: ShopExercise, session: Any, demo: DemoServer) -> None:
    session.navigate(demo.url).raise_for_status()
    shop = session.snapshot().data["snapshot"]
    banana, cherry = find_ref(shop, "Add Banana", role="button"), find_ref(shop, "Add Cherry", role="button")
    result = exercise.find_product(banana)
    assert not result.passed
    assert result.message.startswith(f'{banana} is the button "Add Banana", not the button "Add Cherry".')
    assert (
        exercise.find_product("cherry").message
        == "cherry_ref should be a ref such as 'e12' (text), but it is 'cherry'."
    )
    assert "is not in your latest snapshot" in exercise.find_product("e99999").message
    passed = exercise.find_product(cherry)
    assert (
        passed.passed
        and str(passed)
        == f'Done: Task 1, find a product. {cherry} is the button "Add Cherry". '
        f"You can click it with %browser click {cherry}."
    )


def test_fill_form(exercise: ShopExercise, session: Any, demo: DemoServer) -> None:
    session.navigate(demo.url_for("form.html")).raise_for_status()
    assert "the 'Submitted data' box under it is empty" in exercise.fill_form().message
    form = session.snapshot().data["snapshot"]
    session.fill_form(
        [
            {"ref": find_ref(form, "Name", role="textbox"), "type": "textbox", "value": "Ada"},
            {"ref": find_ref(form, "Email", role="textbox"), "type": "textbox", "value": "ada@example.org"},
            {"ref": find_ref(form, "Country", role="combobox"), "type": "combobox", "value": "Japan"},
        ]
    ).raise_for_status()
    session.click(find_ref(form, "Submit", role="button")).raise_for_status()
    wrong = exercise.fill_form()
    assert not wrong and wrong.message == (
        "The form was sent with name = 'Ada'; the task asks for 'Ada Lovelace'. Fix that field and send the form again."
    )
    session.type(find_ref(form, "Name", role="textbox"), "Ada Lovelace").raise_for_status()
    session.click(find_ref(form, "Submit", role="button")).raise_for_status()
    assert exercise.fill_form().passed


def test_read_cart(exercise: ShopExercise, session: Any, demo: DemoServer) -> None:
    session.navigate(demo.url).raise_for_status()
    shop = session.snapshot().data["snapshot"]
    assert exercise.read_cart(None).message.startswith("The page says 'Cart: 0 items': add at least two products")
    session.click(find_ref(shop, "Add Apple", role="button")).raise_for_status()
    session.click(find_ref(shop, "Add Fig", role="button")).raise_for_status()
    assert "cart_text is still None" in exercise.read_cart(None).message
    stale = exercise.read_cart("Cart: 1 item: Apple")
    assert stale.message.startswith(
        "cart_text is 'Cart: 1 item: Apple', but the page says 'Cart: 2 items: Apple, Fig'."
    )
    assert exercise.read_cart("Cart: 2 items: Apple, Fig").passed


def test_page_tool(exercise: ShopExercise, session: Any, demo: DemoServer) -> None:
    assert (
        'not on webmcp.html. Go there first: %browser navigate {demo.url_for("webmcp.html")}'
        in exercise.page_tool().message
    )
    session.navigate(demo.url_for("webmcp.html")).raise_for_status()
    session.webmcp_call("add_to_cart", {"item": "Kiwi", "quantity": 3})
    failed = exercise.page_tool().message
    assert failed.startswith("The last add_to_cart call failed (invalid_params: ") and "Read the message" in failed
    session.webmcp_call("add_to_cart", {"item": "Grape", "quantity": 1}).raise_for_status()
    assert "the task asks for 3 grapes" in exercise.page_tool().message
    session.webmcp_call("add_to_cart", {"item": "Grape", "quantity": 3}).raise_for_status()
    done = exercise.page_tool()
    assert done.passed and done.message == "The page tool added 3 grapes; the page now says 'Cart: 4 items'."
    # The checks' own look-ups are in the call log under their own name.
    assert {record.caller for record in session.history if record.tool == "browser_evaluate"} >= {"check"}


def test_a_check_that_cannot_run_says_so_without_a_traceback() -> None:
    @check("Task 9, something")
    def broken() -> str:
        raise RuntimeError("the browser went away")

    @check("Task 9, something")
    def not_yet() -> str:
        raise NotYet("Look at the cart.")

    result = broken()
    assert isinstance(result, Check) and not result
    assert result.message.startswith("The check could not look at the page (RuntimeError: the browser went away).")
    assert str(not_yet()) == "Not yet: Task 9, something. Look at the cart."
    assert "✘ Not yet" in not_yet()._repr_html_()


def test_solutions_are_shown_and_run_only_with_the_teachers_flag(capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict[str, Any] = {}
    solution("answer = 6 * 7", namespace, show=False)
    assert "answer" not in namespace and capsys.readouterr().out.startswith("The solution is hidden.")
    solution("answer = 6 * 7", namespace, show=True)
    assert namespace["answer"] == 42 and "    answer = 6 * 7" in capsys.readouterr().out
