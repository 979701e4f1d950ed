"""The whole journey in a real browser (Debian's Chromium driven by Playwright): start the app,
request a kernel for a suite op with the offline expert, wait for the verified result, open its
review page, promote it, export the library. A screenshot of each step is saved under
$OPFORGE_ARTIFACTS/ui/ when that is set, else in the test's tmp folder: the test writes nothing into
the repository (its server, and the runs it starts, keep to the test's registry folder). Without
Chromium the test skips — except in CI (OPFORGE_CI=1, where .ci/run installs it), where it fails."""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("OPFORGE_CHROMIUM", "/usr/bin/chromium")
RUN_TIMEOUT_MS = 240_000  # an expert run of silu, budget 1, is ~10 s alone; 2 busy cores can make it 10x


def require_browser():
    missing = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing = "the playwright package is not installed (make setup installs it)"
    if missing is None and not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        missing = f"{CHROMIUM} not found (bash scripts/browser_up.sh installs Debian's chromium)"
    if missing:
        if os.environ.get("OPFORGE_CI"):
            pytest.fail(f"the browser test must run in CI: {missing}")
        pytest.skip(missing)
    return sync_playwright


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server(isolated_registry):
    from opforge.ui.server import server_command

    port = free_port()
    argv, env = server_command(isolated_registry, port)
    isolated_registry.parent.mkdir(parents=True, exist_ok=True)
    log = open(isolated_registry.parent / "streamlit.log", "wb")
    proc = subprocess.Popen(argv, env=env, cwd=isolated_registry.parent, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.3)
        else:
            pytest.fail("the Streamlit server did not come up: " + (isolated_registry.parent / "streamlit.log").read_text())
        yield url
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=30)
        log.close()


@pytest.fixture
def artifacts(tmp_path) -> Path:
    """Where the screenshots go: $OPFORGE_ARTIFACTS/ui/ (CI keeps them), else this test's tmp folder."""
    folder = Path(os.environ["OPFORGE_ARTIFACTS"]) / "ui" if os.environ.get("OPFORGE_ARTIFACTS") else tmp_path / "ui"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def shot(page, folder: Path, name: str) -> None:
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def pick(page, label: str, option: str) -> None:
    page.locator('[data-testid="stSelectbox"]').filter(has_text=label).locator("div[role=combobox], input").first.click()
    page.get_by_role("option", name=option, exact=True).click()


def set_number(page, label: str, value: int) -> None:
    box = page.locator('[data-testid="stNumberInput"]').filter(has_text=label).locator("input")
    box.fill(str(value))
    box.press("Enter")


def test_request_watch_review_promote_export_in_a_browser(server, isolated_registry, artifacts):
    sync_playwright = require_browser()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1300})
        page.set_default_timeout(60_000)
        try:
            journey(page, server, artifacts)
        except Exception:
            shot(page, artifacts, "failure")
            raise
        finally:
            browser.close()
    steps = [f"{i}-{step}.png" for i, step in enumerate(("request", "watch", "review", "promoted", "export"), 1)]
    assert [name for name in steps if not (artifacts / name).is_file()] == []


def journey(page, url: str, artifacts: Path) -> None:
    page.goto(url)  # the request page is the default page
    pick(page, "Suite op", "silu")
    set_number(page, "Budget (rounds)", 1)
    set_number(page, "Candidates per round", 1)
    page.get_by_text("silu: valid spec").wait_for()
    shot(page, artifacts, "1-request")
    page.get_by_role("button", name="Start run").click()

    page.get_by_text("Review the best kernel").wait_for(timeout=RUN_TIMEOUT_MS)
    page.get_by_text("Stopped: verified").wait_for()
    shot(page, artifacts, "2-watch")
    page.get_by_text("Review the best kernel").click()

    page.get_by_text("Candidate #").first.wait_for()
    page.get_by_role("tab", name="Verification").click()
    page.get_by_text("Evaluation #").first.wait_for()
    shot(page, artifacts, "3-review")
    page.get_by_role("button", name="Promote").click()
    page.get_by_text("Promoted: silu v1").wait_for()
    shot(page, artifacts, "4-promoted")

    page.goto(f"{url}/export")
    page.get_by_role("button", name="Build library").click()
    page.get_by_text("Built kernels_generated with 1 op(s)").wait_for(timeout=RUN_TIMEOUT_MS)
    page.get_by_role("button", name=re.compile(r"^Download kernels_generated-.*\.whl$")).wait_for()
    shot(page, artifacts, "5-export")
