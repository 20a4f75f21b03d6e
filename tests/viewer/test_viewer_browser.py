"""The viewer in a real browser: Debian's chromium, headless, driven by Playwright for Python.

How it works. The page and its script are copied to a temporary folder and its data files are
built there by viewer.build.main() from the repository's results/, so what the page shows is
compared with the very JSON the simulator wrote (and the repository's own viewer/ is never
touched). Each test opens index.html from disk (file://, no server), fails on any console
error or uncaught exception, and drives the page the way a reader would: clicking a fault and
a tier, playing with the space bar, stepping with the arrow keys, opening the sweep. The
screenshots go to $VIEWER_SCREENSHOTS or <tmp>/viewer-screenshots (printed; CI keeps them).
Skips with its reason when chromium or Playwright is missing; never downloads a browser.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from viewer import build

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
SHOTS = Path(os.environ.get("VIEWER_SCREENSHOTS",
                            Path(tempfile.gettempdir()) / "viewer-screenshots"))

if not Path(CHROMIUM).exists():
    pytest.skip(f"{CHROMIUM} is absent (bash .ci/setup installs Debian's chromium as root)",
                allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api",
                               reason="Playwright for Python is not installed (pip install "
                                      "playwright; no browser download is needed)")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (RESULTS / "traces" / "index.json").exists():
        pytest.fail("results/traces/index.json is missing: run `python run_all.py` first")
    site = tmp_path_factory.mktemp("viewer")
    for name in ("index.html", "viewer.js"):
        shutil.copy(ROOT / "viewer" / name, site / name)
    assert build.main(RESULTS, site / "traces.js") == 0
    SHOTS.mkdir(parents=True, exist_ok=True)
    print(f"\nviewer screenshots: {SHOTS}")
    return site


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


class Page:
    """A page plus every console error and uncaught exception it produced."""

    def __init__(self, browser: object, site: Path, hash_: str = "", width: int = 1400,
                 height: int = 1000) -> None:
        self.errors: list[str] = []
        self.page = browser.new_page(viewport={"width": width, "height": height})
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else 0)
        self.page.on("pageerror", lambda e: self.errors.append(f"uncaught: {e}"))
        self.page.goto((site / "index.html").as_uri() + hash_)

    def close(self) -> None:
        self.page.close()
        assert self.errors == [], f"console errors: {self.errors}"


def _hash(fault: str, tier: str, systems: str, play: bool = False) -> str:
    return f"#fault={quote(fault)}&tier={tier}&systems={systems}" + ("" if play else "&play=0")


def _run(fault: str, system: str, tier: str) -> dict:
    index = json.loads((RESULTS / "traces" / "index.json").read_text(encoding="utf-8"))
    entry = next(t for t in index["traces"]
                 if (t["fault"], t["system"], t["tier"]) == (fault, system, tier))
    return json.loads((RESULTS / "traces" / entry["file"]).read_text(encoding="utf-8"))


def _cursor(page: object) -> int:
    return int(page.get_attribute("body", "data-cursor"))


def test_pick_a_fault_and_tier_play_to_the_end_and_match_the_results(browser, site):
    fault, tier = "manual refund during outage", "t2"
    pg = Page(browser, site, "#play=0")
    page = pg.page
    page.click(f"#fault-list button[data-fault='{fault}']")
    page.check(f"#tier-{tier}")
    page.check("#sys-durable")
    assert page.locator("article.run").count() == 3
    page.select_option("#speed", "8")
    page.keyboard.press("Home")
    page.keyboard.press(" ")
    page.wait_for_selector("body[data-done='true']", timeout=30_000)
    page.screenshot(path=str(SHOTS / "desktop-played-to-end.png"), full_page=True)
    for system in ("naive", "durable", "kernel"):
        run = _run(fault, system, tier)
        panel = page.locator(f"article.run[data-system='{system}']")
        money = panel.locator("[data-testid=money]")
        assert money.locator("[data-testid=refunded]").get_attribute("data-value") == \
            str(run["refunded"])
        assert money.locator("[data-testid=verdict]").get_attribute("data-value") == run["verdict"]
        assert money.locator("[data-testid=outcome]").get_attribute("data-value") == run["outcome"]
        if system != "kernel":
            continue
        cards = panel.locator("dl.receipt")
        assert cards.count() == len(run["receipts"])
        for i, receipt in enumerate(run["receipts"]):
            for name in ("proposed", "authorized", "executed", "recorded", "final", "reason"):
                shown = cards.nth(i).locator(f"dd[data-field={name}]").get_attribute("data-value")
                assert json.loads(shown) == receipt[name], name
        state = page.get_attribute("#diagram-svg", "data-state")
        assert state == run["receipts"][-1]["final"]
        assert page.locator("#diagram-svg g.node[data-current=true]").count() == 1
    pg.close()


def test_keyboard_steps_and_the_intent_is_on_disk_before_the_send(browser, site):
    fault, tier = "crash before ack", "t1"
    run = _run(fault, "kernel", tier)
    pg = Page(browser, site, _hash(fault, tier, "kernel"))
    page = pg.page
    assert _cursor(page) == 0
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert _cursor(page) == 3
    page.keyboard.press("ArrowLeft")
    assert _cursor(page) == 2
    kinds = [(e["actor"], e["kind"]) for e in run["events"]]
    dispatched = kinds.index(("journal", "DISPATCHED"))
    send = kinds.index(("network", "send"))
    assert dispatched < send
    while _cursor(page) < dispatched + 1:
        page.keyboard.press("ArrowRight")
    panel = page.locator("article.run[data-system=kernel]")
    vis = panel.locator(f".scroll g.glyph[data-i='{dispatched}']").get_attribute("visibility")
    assert vis == "visible"
    assert panel.locator(f".scroll g.glyph[data-i='{send}']").get_attribute("visibility") == \
        "hidden"
    assert "DISPATCHED" in panel.locator(".disk li").last.inner_text()
    assert page.get_attribute("#diagram-svg", "data-state") == "DISPATCHED"
    page.screenshot(path=str(SHOTS / "desktop-dispatched-before-send.png"), full_page=True)
    page.keyboard.press("End")
    assert page.get_attribute("body", "data-done") == "true"
    page.keyboard.press("Home")
    assert _cursor(page) == 0
    page.keyboard.press(" ")
    page.wait_for_function("Number(document.body.dataset.cursor) >= 2", timeout=5_000)
    page.keyboard.press(" ")
    paused = _cursor(page)
    time.sleep(1.0)
    assert _cursor(page) == paused, "space must pause"
    pg.close()


def test_first_visit_autoplays_the_telling_run_and_reads_at_narrow_width(browser, site):
    pg = Page(browser, site)
    page = pg.page
    current = page.locator("#fault-list button[aria-current=true]")
    assert current.get_attribute("data-fault") == "crash before ack"
    assert page.is_checked("#tier-t1")
    assert [page.locator("article.run").nth(i).get_attribute("data-system")
            for i in range(page.locator("article.run").count())] == ["naive", "kernel"]
    page.wait_for_function("Number(document.body.dataset.cursor) >= 3", timeout=5_000)
    assert "Exactly-once" in page.inner_text("h1")
    assert page.locator("#legend-list li").count() >= 10
    page.screenshot(path=str(SHOTS / "desktop-first-visit.png"))
    pg.close()
    narrow = Page(browser, site, _hash("crash before ack", "t1", "naive,kernel"), width=390,
                  height=844)
    page = narrow.page
    page.keyboard.press("End")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 392, f"the page scrolls sideways at 390 px ({width} px wide)"
    page.screenshot(path=str(SHOTS / "narrow-390px-full.png"), full_page=True)
    page.locator("article.run[data-system=kernel]").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "narrow-390px-kernel.png"))
    narrow.close()


def test_the_whole_sweep_loads_in_under_two_seconds(browser, site):
    pg = Page(browser, site, _hash("happy path", "t1", "kernel"))
    page = pg.page
    page.wait_for_load_state("load")
    page_ms = page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
    start = time.perf_counter()
    page.click("#sweep summary")
    page.wait_for_selector("body[data-sweep=ready]", timeout=10_000)
    wall_ms = (time.perf_counter() - start) * 1000
    load_ms = page.evaluate("window.VIEWER_SWEEP_LOAD_MS")
    render_ms = page.evaluate("window.VIEWER_SWEEP_RENDER_MS")
    cases = page.evaluate("window.VIEWER_SWEEP.cases.length")
    size = (site / "sweep.js").stat().st_size // 1024
    print(f"\nsweep: {cases} cases, sweep.js {size} KiB: script load+parse {load_ms:.0f} ms, "
          f"render {render_ms:.0f} ms, click to ready {wall_ms:.0f} ms; the page itself "
          f"(traces.js {(site / 'traces.js').stat().st_size // 1024} KiB) loaded in "
          f"{page_ms:.0f} ms (headless chromium)")
    (SHOTS / "sweep-timing.json").write_text(json.dumps(
        {"cases": cases, "kib": size, "load_ms": round(load_ms), "render_ms": round(render_ms),
         "click_to_ready_ms": round(wall_ms), "page_load_ms": round(page_ms)},
        sort_keys=True) + "\n")
    assert wall_ms < 2000 and page_ms < 2000
    lines = (RESULTS / "sweep_cases.jsonl").read_text(encoding="utf-8").splitlines()
    assert cases == len([x for x in lines if x.strip()])
    case = json.loads(lines[17])
    page.fill("#sweep-seed", str(case["seed"]))
    page.click("#sweep-form button[type=submit]")
    assert page.get_attribute("#sweep-case", "data-seed") == str(case["seed"])
    page.locator("#sweep-case td.cell").last.click()
    command = page.inner_text("[data-testid=replay-command]")
    assert command == f"python run_all.py --replay {case['seed']} --system kernel --tier t3 --json"
    page.locator("#sweep").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "desktop-sweep-case.png"))
    pg.close()


def test_every_fixed_table_run_plays_to_its_recorded_totals(browser, site):
    """All faults x tiers with all four systems shown, walked with the [ ] and t keys."""
    index = json.loads((RESULTS / "traces" / "index.json").read_text(encoding="utf-8"))
    want = {(t["fault"], t["system"], t["tier"]): t for t in index["traces"]}
    pg = Page(browser, site, _hash(index["faults"][0], index["tiers"][0],
                                   ",".join(index["systems"])))
    page = pg.page
    seen = set()
    for _fault in index["faults"]:
        for _tier in index["tiers"]:
            page.keyboard.press("End")
            got = page.evaluate("""() => ({
                fault: document.querySelector('#fault-list button[aria-current=true]')
                    .dataset.fault,
                tier: document.querySelector('input[name=tier]:checked').value,
                runs: [...document.querySelectorAll('article.run')].map(a => {
                    const v = (s) => a.querySelector(`[data-testid=${s}]`).dataset.value;
                    return {id: a.dataset.run, refunded: v('refunded'), verdict: v('verdict'),
                            outcome: v('outcome')};
                })})""")
            fault, tier, shown = got["fault"], got["tier"], got["runs"]
            assert len(shown) == len(index["systems"])
            for item, system in zip(shown, index["systems"], strict=True):
                entry = want[(fault, system, tier)]
                assert item["id"] == entry["id"]
                assert (item["refunded"], item["verdict"], item["outcome"]) == \
                    (str(entry["refunded"]), entry["verdict"], entry["outcome"])
                seen.add(entry["id"])
            page.keyboard.press("t")
        page.keyboard.press("]")
    assert seen == set(t["id"] for t in index["traces"])
    pg.close()


def test_a_traced_sweep_cell_plays_its_full_timeline(browser, tiny_results, tmp_path):
    """A site built from the tiny results, whose seed 17 has two traced cells."""
    for name in ("index.html", "viewer.js"):
        shutil.copy(ROOT / "viewer" / name, tmp_path / name)
    assert build.main(tiny_results, tmp_path / "traces.js") == 0
    pg = Page(browser, tmp_path, _hash("crash before ack", "t1", "kernel"))
    page = pg.page
    page.click("#sweep summary")
    page.wait_for_selector("body[data-sweep=ready]")
    page.fill("#sweep-seed", "17")
    page.click("#sweep-form button[type=submit]")
    buttons = page.locator("#sweep-case button.play-sweep")
    assert buttons.count() == 2
    buttons.last.click()  # kernel at t3
    page.wait_for_selector("article.run[data-system=kernel]")
    assert page.is_checked("#tier-t3")
    assert "seed 17" in page.inner_text("#caption")
    page.keyboard.press("End")
    doc = json.loads((tiny_results / "traces" / "sweep" / "17__kernel__t3.json").read_text())
    panel = page.locator("article.run[data-system=kernel]")
    assert panel.locator("[data-testid=refunded]").get_attribute("data-value") == \
        str(doc["refunded"])
    assert panel.locator("[data-testid=verdict]").get_attribute("data-value") == doc["verdict"]
    final = panel.locator("dl.receipt").last.locator("dd[data-field=final]")
    assert json.loads(final.get_attribute("data-value")) == doc["receipts"][-1]["final"]
    assert "seed=17" in page.url
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "desktop-sweep-timeline.png"))
    page.click("#fault-list button[data-fault='crash before ack']")
    assert "seed 17" not in page.inner_text("#caption")
    pg.close()
