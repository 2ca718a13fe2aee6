"""A journey through the console in headless Chromium: every step is a screenshot under
test-artifacts/console/<journey>/, and every page it reaches passes axe-core (the copy that
axe-playwright-python carries) with no serious or critical violation."""

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Locator, Page, expect, sync_playwright

CHROMIUM: Final = "/usr/bin/chromium"
ARTIFACTS: Final = Path(__file__).resolve().parents[2] / "test-artifacts" / "console"
STEP_TIMEOUT_MS: Final = 15_000
BLOCKING: Final = ("serious", "critical")
_AXE = Axe()


class Journey:
    def __init__(self, page: Page, name: str) -> None:
        self.page = page
        self.folder = ARTIFACTS / name
        self.folder.mkdir(parents=True, exist_ok=True)
        for old in self.folder.glob("*.png"):
            old.unlink()
        self.steps = 0
        self.checked: set[str] = set()

    def step(self, what: str, *, full_page: bool = True) -> Path:
        """A screenshot of the page as it is now, after its accessibility check; of the viewport
        only where what matters is fixed to it (a side pane over the page)."""
        self.accessible()
        self.steps += 1
        slug = re.sub(r"[^a-z0-9]+", "-", what.lower()).strip("-")
        shot = self.folder / f"{self.steps:02d}-{slug}.png"
        self.page.screenshot(path=str(shot), full_page=full_page)
        return shot

    def accessible(self) -> None:
        results = _AXE.run(self.page)
        violations: list[dict[str, Any]] = results.response["violations"]
        blocking = [v for v in violations if v.get("impact") in BLOCKING]
        assert not blocking, f"{self.page.url}: " + "; ".join(
            f"{v['id']} ({v['impact']}): {v['help']} at "
            + ", ".join(str(n["target"]) for n in v["nodes"][:3])
            for v in blocking
        )
        self.checked.add(self.page.url.split("?")[0])


@contextmanager
def journey(name: str) -> Iterator[Journey]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox"]
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(STEP_TIMEOUT_MS)
            page.set_default_navigation_timeout(STEP_TIMEOUT_MS)
            yield Journey(page, name)
        finally:
            browser.close()


def sign_in(page: Page, url: str, client_id: str, secret: str) -> None:
    page.goto(f"{url}/console/sign-in")
    page.get_by_label("Client ID").fill(client_id)
    page.get_by_label("Client secret").fill(secret)
    page.get_by_role("button", name="Sign in").click()


def fill(within: Page | Locator, by_label: dict[str, str]) -> None:
    """Type each value into the field of that label (within a fieldset, say)."""
    for label, value in by_label.items():
        within.get_by_label(label, exact=True).fill(value)


def refused_next_to(page: Page, field_id: str, says: str, *, what: str = "created") -> Locator:
    """The form came back saying the template was not `what`, the refusal (`says`) next to the
    field `field_id`, marked invalid; that field."""
    expect(page.get_by_role("alert")).to_contain_text(f"The template was not {what}")
    field = page.locator(f"#{field_id}")
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(page.locator(f"#{field_id}-error")).to_contain_text(says)
    return field
