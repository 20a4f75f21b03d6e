"""The viewer in a real browser: Debian's chromium, headless, driven by Playwright for Python.

How it works. The page and its script are copied to a temporary folder and its data files are
built there by viewer.build.main() from the repository's results/, so what the page shows is
compared with the very JSON the simulator wrote (and the repository's own viewer/ is never
touched). Each test opens index.html from disk (file://, no server), fails on any console
error or uncaught exception, and drives the page the way a reader would: clicking a fault and
a tier, playing with the space bar, stepping with the arrow keys, opening the sweep, following
a link, opening a `--replay --json` file. The
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
PAGE_FILES = ("index.html", "viewer.js", "sweep_view.js")
REPLAY_SEEDS = 40
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
    for name in PAGE_FILES:
        shutil.copy(ROOT / "viewer" / name, site / name)
    # replays of the first REPLAY_SEEDS sweep seeds only: the whole sweep takes ~30 s to replay
    assert build.main(RESULTS, site / "traces.js", replay_limit=REPLAY_SEEDS) == 0
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


def _cases() -> list[dict]:
    lines = (RESULTS / "sweep_cases.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(x) for x in lines if x.strip()]


def _cell(case: dict, name: str) -> dict:
    raw = case["cells"][name]
    if isinstance(raw, list):
        return {"refunded": raw[0], "outcome": raw[1], "reasons": raw[2]}
    return raw


def _cursor(page: object) -> int:
    return int(page.get_attribute("body", "data-cursor"))


def _ready(page: object) -> None:
    page.wait_for_selector("body[data-ready=true]", timeout=10_000)


def _value(panel: object, testid: str) -> str:
    return panel.locator(f"[data-testid={testid}]").first.get_attribute("data-value")


def test_pick_a_fault_and_tier_play_to_the_end_and_match_the_results(browser, site):
    fault, tier = "manual refund during outage", "t2"
    pg = Page(browser, site, "#play=0")
    page = pg.page
    _ready(page)
    page.click(f"#fault-list button[data-fault='{fault}']")
    _ready(page)
    assert "support refunds the customer by hand" in page.inner_text("#caption"), \
        "picking a fault describes it"
    page.wait_for_function("Number(document.body.dataset.cursor) >= 1", timeout=5_000)
    page.check(f"#tier-{tier}")
    _ready(page)
    page.check("#sys-durable")
    _ready(page)
    assert page.locator("article.run").count() == 3
    page.select_option("#speed", "8")
    page.locator("body").focus()
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("Home")
    page.keyboard.press(" ")
    page.wait_for_function("Number(document.body.dataset.cursor) >= 2", timeout=10_000)
    page.wait_for_selector("body[data-done='true']", timeout=90_000)  # slow under a loaded CPU
    page.screenshot(path=str(SHOTS / "desktop-played-to-end.png"), full_page=True)
    for system in ("naive", "durable", "kernel"):
        run = _run(fault, system, tier)
        panel = page.locator(f"article.run[data-system='{system}']")
        assert _value(panel, "refunded") == str(run["refunded"])
        assert _value(panel, "verdict") == run["verdict"]
        assert _value(panel, "outcome") == run["outcome"]
        # the world's refund by hand is shown apart from what the system moved
        assert _value(panel, "by-hand") == str(run["metrics"]["by_hand"])
        assert _value(panel, "by-system") == str(run["metrics"]["by_system"])
        sentence = panel.locator("[data-testid=why]").inner_text()
        assert f"${run['metrics']['by_system']} moved by the system" in sentence, sentence
        if run["metrics"]["by_hand"]:
            assert "by hand (the world, not the system)" in sentence
        if system == "durable":
            kinds = [r["kind"] for r in run["journal"]]
            shown = panel.locator(".disk li").all_inner_texts()
            assert [x.split()[0] for x in shown] == kinds, "every engine record, results too"
        if system != "kernel":
            continue
        cards = panel.locator("dl.receipt")
        assert cards.count() == len(run["receipts"])
        for i, receipt in enumerate(run["receipts"]):
            for name in ("proposed", "authorized", "executed", "recorded", "final", "reason"):
                shown = cards.nth(i).locator(f"dd[data-field={name}]").get_attribute("data-value")
                assert json.loads(shown) == receipt[name], name
        assert page.get_attribute("#diagram-svg", "data-state") == run["receipts"][-1]["final"]
    pg.close()


def test_keys_act_on_the_timeline_only_when_no_control_has_focus(browser, site):
    fault, tier = "crash before ack", "t1"
    run = _run(fault, "kernel", tier)
    pg = Page(browser, site, _hash(fault, tier, "kernel"))
    page = pg.page
    _ready(page)
    assert _cursor(page) == 0
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    assert _cursor(page) == 3
    page.keyboard.press("ArrowLeft")
    assert _cursor(page) == 2
    page.focus("#sys-naive")
    page.keyboard.press(" ")  # toggles the checkbox, must not play
    _ready(page)
    assert page.is_checked("#sys-naive")
    time.sleep(0.6)
    assert _cursor(page) == 0 and not page.evaluate("window.viewer.state.playing")
    page.focus("#tier-t1")
    page.keyboard.press("ArrowRight")  # moves the radio to t1d, must not step the timeline
    _ready(page)
    assert page.is_checked("#tier-t1d") and _cursor(page) == 0
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("t")
    page.keyboard.press("t")
    page.keyboard.press("t")
    _ready(page)
    assert page.is_checked("#tier-t1")
    page.uncheck("#sys-naive")
    _ready(page)
    page.evaluate("document.activeElement.blur()")
    kinds = [(e["actor"], e["kind"]) for e in run["events"]]
    dispatched = kinds.index(("journal", "DISPATCHED"))
    send = kinds.index(("network", "send"))
    assert dispatched < send
    while _cursor(page) < dispatched + 1:
        page.keyboard.press("ArrowRight")
    panel = page.locator("article.run[data-system=kernel]")
    assert panel.locator(f"g.glyph[data-i='{dispatched}']").get_attribute("visibility") == "visible"
    assert panel.locator(f"g.glyph[data-i='{send}']").get_attribute("visibility") == "hidden"
    assert "DISPATCHED" in panel.locator(".disk li").last.inner_text()
    assert page.get_attribute("#diagram-svg", "data-state") == "DISPATCHED"
    page.keyboard.press("End")
    assert page.get_attribute("body", "data-done") == "true"
    page.keyboard.press("Home")
    page.keyboard.press(" ")
    page.wait_for_function("Number(document.body.dataset.cursor) >= 2", timeout=5_000)
    page.keyboard.press(" ")
    paused = _cursor(page)
    time.sleep(0.8)
    assert _cursor(page) == paused, "space must pause"
    pg.close()


def test_a_pause_before_the_autoplay_fires_stays_paused(browser, site):
    # Picking a tier schedules an autoplay 350 ms later. A play and a pause pressed before it
    # fires must win: the CI once lost this race (Home, the stale autoplay, then Space paused).
    # The keys go in from a MutationObserver on data-ready, so they land before any timer
    # can fire, however loaded the machine is.
    pg = Page(browser, site, _hash("crash before ack", "t1", "kernel"))
    page = pg.page
    _ready(page)
    page.evaluate("""() => new Promise((resolve) => {
        const key = () => document.body.dispatchEvent(
            new KeyboardEvent("keydown", { key: " ", bubbles: true }));
        const seen = new MutationObserver(() => {
            if (document.body.dataset.ready !== "true") return;
            seen.disconnect(); key(); key(); resolve();
        });
        seen.observe(document.body, { attributes: true, attributeFilter: ["data-ready"] });
        document.getElementById("tier-t2").click();
    })""")
    time.sleep(0.9)
    assert _cursor(page) == 0 and not page.evaluate("window.viewer.state.playing"), \
        "the autoplay scheduled by the tier change undid the pause"
    pg.close()


def test_one_time_axis_cut_waits_zoom_arrows_and_a_clicked_mark(browser, site):
    fault, tier = "crash before ack", "t1"
    pg = Page(browser, site, _hash(fault, tier, "naive,kernel"))
    page = pg.page
    _ready(page)
    page.keyboard.press("End")
    xs = page.evaluate("""() => [...document.querySelectorAll('article.run')].map(a => {
        const ev = window.viewer.shown().find(r => r.id === a.dataset.run).events;
        const i = ev.findIndex(e => e.actor === 'world' && e.kind === 'crash');
        return [ev[i].t, a.querySelector(`g.glyph[data-i='${i}']`).getBoundingClientRect().x
                - a.getBoundingClientRect().x];
    })""")
    (t1, x1), (t2, x2) = xs
    assert t1 == t2 and abs(x1 - x2) < 1.5, f"the same instant at different places: {xs}"
    cuts = page.locator("article.run[data-system=kernel] g.cut text").evaluate_all(
        "els => els.map(e => e.textContent)")
    assert any("960 ms" in c for c in cuts), cuts  # the outage's wait, cut short with its length
    assert page.locator("article.run[data-system=kernel] line.msg[visibility=visible]").count() >= 2
    naive = page.locator("article.run[data-system=naive]")
    assert naive.locator("g.part").get_attribute("visibility") == "visible"
    assert page.locator("article.run[data-system=kernel] g.part").count() == 1
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1400, "the timeline must fit: nothing hides behind a sideways scroll"
    before = naive.locator("g.glyph[data-i='3']").bounding_box()["x"]
    page.click("#zoom-in")
    assert page.inner_text("#zoom-level") == "2.0\u00d7"
    assert naive.locator("g.glyph[data-i='3']").bounding_box()["x"] != before
    assert page.locator("#overview rect.window").count() == 1
    page.click("#zoom-fit")
    kernel = _run(fault, "kernel", tier)
    i = [e["kind"] for e in kernel["events"]].index("DISPATCHED")
    page.locator(f"article.run[data-system=kernel] g.glyph[data-i='{i}']").click()
    shown = json.loads(page.locator("article.run[data-system=kernel] [data-testid=event-json]")
                       .inner_text().split("\njournal entry:")[0])
    want = {k: v for k, v in kernel["events"][i].items()}
    assert shown == want
    insp = page.locator("article.run[data-system=kernel] .inspect").inner_text()
    assert "effect state: AUTHORIZED \u2192 DISPATCHED" in insp and "journal entry #2" in insp
    page.screenshot(path=str(SHOTS / "desktop-inspect-a-mark.png"))
    pg.close()


def test_first_visit_plays_the_telling_run_with_its_why_and_reads_at_390px(browser, site):
    pg = Page(browser, site)
    page = pg.page
    _ready(page)
    current = page.locator("#fault-list button[aria-current=true]")
    assert current.get_attribute("data-fault") == "crash before ack"
    assert page.is_checked("#tier-t1")
    assert [a.get_attribute("data-system") for a in page.locator("article.run").all()] == \
        ["naive", "kernel"]
    page.wait_for_function("Number(document.body.dataset.cursor) >= 3", timeout=5_000)
    loaded = page.evaluate("[...document.scripts].map(s => s.src)")
    scripts = sorted(n.rsplit("/", 1)[-1] for n in loaded if n.endswith(".js"))
    assert scripts == ["crash-before-ack.js", "sweep_view.js", "traces.js", "viewer.js"], \
        f"the first screen loads only what it shows: {scripts}"
    page.screenshot(path=str(SHOTS / "desktop-1440-first-visit.png"))
    page.keyboard.press("End")
    naive = page.locator("article.run[data-system=naive]")
    why = naive.locator("[data-testid=why]").inner_text()
    assert "lost the answer" in why and "$40 moved by the system for $20 approved" in why, why
    pg.close()
    narrow = Page(browser, site, "", width=390, height=844)
    page = narrow.page
    _ready(page)
    first = page.locator("article.run").first.bounding_box()
    assert first["y"] < 844, f"the story starts {first['y']:.0f} px down at 390 px"
    page.screenshot(path=str(SHOTS / "narrow-390-first-visit.png"))
    page.keyboard.press("End")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways at 390 px ({width} px wide)"
    page.click("#sweep summary")
    page.wait_for_selector("body[data-sweep=ready]", timeout=10_000)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the open sweep scrolls sideways at 390 px ({width} px wide)"
    page.screenshot(path=str(SHOTS / "narrow-390-full.png"), full_page=True)
    narrow.close()


def _bottoms(page: object, selector: str) -> list[tuple[str, float, float]]:
    """(selector, top, bottom) in viewport pixels of every element the selector matches."""
    boxes = page.evaluate("(s) => [...document.querySelectorAll(s)].map(e => {"
                          " const r = e.getBoundingClientRect(); return [r.top, r.bottom]; })",
                          selector)
    assert boxes, f"nothing matches {selector}"
    return [(selector, top, bottom) for top, bottom in boxes]


def test_the_first_screen_holds_the_story_the_money_and_the_state_diagram(browser, site):
    """1440x900: headline, timelines, money cards, diagram above the fold; 390x844: story first."""
    pg = Page(browser, site, "", width=1440, height=900)
    page = pg.page
    _ready(page)
    page.wait_for_function("Number(document.body.dataset.cursor) >= 3", timeout=5_000)
    wanted = ("h1", "article.run .tl", "[data-testid=money]", "#diagram h2", "#diagram-svg")
    boxes = [b for sel in wanted for b in _bottoms(page, sel)]
    page.screenshot(path=str(SHOTS / "first-screen-1440.png"))
    low = [(sel, round(bottom)) for sel, top, bottom in boxes if top < 0 or bottom > 900]
    assert low == [], f"below the fold at 1440x900 on the first visit: {low}"
    page.keyboard.press("End")
    page.wait_for_selector("body[data-done='true']", timeout=10_000)
    # once played, the money cards grow (verdict, outcome, reference): their amounts stay in view
    boxes = _bottoms(page, "[data-testid=by-system]") + _bottoms(page, "#diagram-svg")
    page.screenshot(path=str(SHOTS / "first-screen-1440-played.png"))
    low = [(sel, round(bottom)) for sel, top, bottom in boxes if top < 0 or bottom > 900]
    assert low == [], f"below the fold at 1440x900 once played: {low}"
    pg.close()
    for width in (1024, 901, 900):
        wide = Page(browser, site, "#play=0", width=width, height=800)
        _ready(wide.page)
        scroll = wide.page.evaluate("document.documentElement.scrollWidth")
        assert scroll <= width, f"the page scrolls sideways at {width} px ({scroll} px wide)"
        wide.close()
    narrow = Page(browser, site, "", width=390, height=844)
    page = narrow.page
    _ready(page)
    story = _bottoms(page, "article.run")[0][1]
    others = [b for sel in ("#faults", "#diagram", "#legend", ".controls", "#sweep")
              for b in _bottoms(page, sel)]
    first = [(sel, round(top)) for sel, top, _ in others if top <= story]
    assert story < 844 and first == [], \
        f"at 390 px the story ({story:.0f} px) is not first: {first}"
    page.screenshot(path=str(SHOTS / "first-screen-390.png"))
    narrow.close()


def test_the_legend_names_every_mark_the_runs_use(browser, site):
    """Every (actor, kind) of the fixed table and of the first sweep replays has a legend line."""
    index = json.loads((RESULTS / "traces" / "index.json").read_text(encoding="utf-8"))
    used = set()
    for entry in index["traces"]:
        doc = json.loads((RESULTS / "traces" / entry["file"]).read_text(encoding="utf-8"))
        used |= {(e["actor"], e["kind"]) for e in doc["events"]}
    chunk = (site / "replays" / "s0000.js").read_text(encoding="utf-8").split("\n", 1)[1]
    codes = json.loads(chunk.split("] = ", 1)[1][:-2])["codes"]
    used |= {(c["actor"], c["kind"]) for c in codes if isinstance(c, dict) and "actor" in c}
    pg = Page(browser, site, _hash("happy path", "t1", "kernel"))
    page = pg.page
    _ready(page)
    named = set()
    for li in page.locator("#legend-list li[data-actor]").all():
        for kind in li.get_attribute("data-kinds").split():
            named.add((li.get_attribute("data-actor"), kind))
    assert used - named == set(), f"marks missing from the legend: {sorted(used - named)}"
    has_coding = (site / "coding.js").exists()  # results/coding/ holds the coding-agents data
    assert page.locator("#coding").is_visible() == has_coding, \
        "the coding section is shown exactly when its data exists"
    pg.close()


def test_an_ambiguous_run_says_so_in_the_run_and_the_fault_list(browser, site):
    fault, tier = "crash before ack", "t3"
    run = _run(fault, "kernel", tier)
    assert run["outcome"].startswith("AMBIGUOUS") and run["verdict"] == "ok"
    pg = Page(browser, site, _hash(fault, tier, "naive,kernel"))
    page = pg.page
    _ready(page)
    page.keyboard.press("End")
    panel = page.locator("article.run[data-system=kernel]")
    assert panel.get_attribute("data-outcome") == "AMBIGUOUS"
    badge = panel.locator("[data-testid=badge]")
    assert "AMBIGUOUS" in badge.inner_text() and "amb" in badge.get_attribute("class")
    note = panel.locator("[data-testid=ambiguous-note]").inner_text()
    assert "a person must reconcile this" in note
    assert "a person must reconcile this" in panel.locator("[data-testid=why]").inner_text()
    mark = page.locator(f"#fault-list button[data-fault='{fault}'] .mark").last
    assert mark.get_attribute("data-outcome") == "AMBIGUOUS" and mark.inner_text() == "K?"
    page.screenshot(path=str(SHOTS / "desktop-ambiguous.png"))
    pg.close()


def test_the_sweep_counts_ambiguous_apart_filters_sorts_and_plays_a_case(browser, site):
    cases = _cases()
    pg = Page(browser, site, _hash("happy path", "t1", "kernel"))
    page = pg.page
    _ready(page)
    page_ms = page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
    start = time.perf_counter()
    page.click("#sweep summary")
    page.wait_for_selector("body[data-sweep=ready]", timeout=10_000)
    wall_ms = (time.perf_counter() - start) * 1000
    load_ms = page.evaluate("window.VIEWER_SWEEP_LOAD_MS")
    render_ms = page.evaluate("window.VIEWER_SWEEP_RENDER_MS")
    print(f"\nsweep: {len(cases)} cases: script load+parse {load_ms:.0f} ms, render "
          f"{render_ms:.0f} ms, click to ready {wall_ms:.0f} ms; first screen loaded in "
          f"{page_ms:.0f} ms (traces.js {(site / 'traces.js').stat().st_size // 1024} KiB)")
    (SHOTS / "timing.json").write_text(json.dumps(
        {"cases": len(cases), "load_ms": round(load_ms), "render_ms": round(render_ms),
         "click_to_ready_ms": round(wall_ms), "page_load_ms": round(page_ms)},
        sort_keys=True) + "\n")
    assert wall_ms < 2000 and page_ms < 2000
    amb = sum("AMBIGUOUS" in _cell(c, "kernel/t3")["outcome"] and not _cell(c, "kernel/t3")
              ["reasons"] for c in cases)
    td = page.locator("[data-testid=sweep-summary] td[data-cell='kernel/t3']")
    assert td.get_attribute("data-ambiguous") == str(amb) and amb > 0
    assert "AMBIGUOUS" in td.inner_text() and "amb" in td.get_attribute("class")
    page.select_option("#f-system", "kernel")
    page.select_option("#f-tier", "t3")
    page.select_option("#f-outcome", "amb")
    assert page.get_attribute("[data-testid=sweep-count]", "data-value") == str(amb)
    page.select_option("#f-system", "naive")
    page.select_option("#f-outcome", "fail")
    page.select_option("#f-sort", "dollars-desc")
    top = page.locator(".runs-table tr[data-seed]").first
    most = max(_cell(c, "naive/t3")["refunded"] for c in cases if _cell(c, "naive/t3")["reasons"])
    assert f"${most}" in top.inner_text()
    page.select_option("#f-sort", "seed")
    row = page.locator(".runs-table tr[data-seed]").first
    seed = int(row.get_attribute("data-seed"))
    row.locator("a.play-link").click()
    _ready(page)
    assert f"seed={seed}" in page.url and "Sweep case, seed " + str(seed) in \
        page.inner_text("#caption")
    assert page.inner_text("[data-testid=replay-command]") == \
        f"python run_all.py --replay {seed} --system naive --tier t3 --json"
    page.screenshot(path=str(SHOTS / "desktop-sweep.png"))
    pg.close()


def test_a_sweep_case_opens_from_its_link_with_both_timelines_marked(browser, site):
    cases = [c for c in _cases() if c["seed"] < REPLAY_SEEDS]
    case = next(c for c in cases if _cell(c, "naive/t1")["reasons"])
    seed = case["seed"]
    pg = Page(browser, site, f"#seed={seed}&tier=t1&systems=naive,kernel&step=3")
    page = pg.page
    _ready(page)
    assert _cursor(page) == 3, "the link's step"
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("End")
    from sim import sweep as simsweep

    for system in ("naive", "kernel"):
        panel = page.locator(f"article.run[data-system={system}]")
        cell = _cell(case, f"{system}/t1")
        shown = page.evaluate(f"""window.viewer.shown().find(r => r.system === '{system}')
            .events.map(e => [e.t, e.actor, e.kind, e.label])""")
        want = simsweep.replay(seed, system, "t1")["events"]
        assert shown == [[e["t"], e["actor"], e["kind"], e["label"]] for e in want]
        assert _value(panel, "refunded") == str(cell["refunded"])
        assert _value(panel, "outcome") == cell["outcome"]
        assert panel.locator("g.part").count() == 1, "the divergence, marked on both"
    page.click("#copy-link")
    link = page.input_value("#link-box")
    assert f"seed={seed}" in link and "step=" in link and "tier=t1" in link
    page.screenshot(path=str(SHOTS / "desktop-sweep-case-from-link.png"))
    pg.close()


def test_a_replay_json_file_opens_from_the_file_picker(browser, site, tmp_path):
    from sim import sweep as simsweep
    from sim import trace

    doc = simsweep.replay(7, "kernel", "t3")
    path = tmp_path / "replay.json"
    path.write_text(trace.dumps(doc), encoding="utf-8")
    pg = Page(browser, site, _hash("happy path", "t1", "kernel"))
    page = pg.page
    _ready(page)
    page.set_input_files("#file-input", str(path))
    page.wait_for_function("document.querySelector('#caption').innerText.includes('file')")
    _ready(page)
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("End")
    panel = page.locator("article.run").first
    assert panel.get_attribute("data-run") == doc["id"]
    assert _value(panel, "refunded") == str(doc["refunded"])
    assert _value(panel, "outcome") == doc["outcome"]
    other = simsweep.replay(11, "naive", "t1")  # dropped on the page, like a file from a desktop
    page.evaluate("""(text) => {
        const dt = new DataTransfer();
        dt.items.add(new File([text], 'dropped.json', {type: 'application/json'}));
        document.dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true}));
    }""", trace.dumps(other))
    page.wait_for_function(f"document.querySelector('article.run') && "
                           f"document.querySelector('article.run').dataset.run === '{other['id']}'")
    bad = tmp_path / "bad.json"
    bad.write_text('{"no": "events"}', encoding="utf-8")
    page.set_input_files("#file-input", str(bad))
    page.wait_for_function("document.querySelector('#warnings').innerText.includes('bad.json')")
    pg.close()


LANES_JS = """(a) => {
    const box = (e) => { const r = e.getBoundingClientRect(); return [r.top, r.bottom, r.right]; };
    const gutter = a.querySelector('svg.tlsvg > line');
    return {
      gutter: gutter ? gutter.getBoundingClientRect().left : 0,
      lanes: [...a.querySelectorAll('rect.lane')].map(r => [r.dataset.lane, ...box(r)]),
      labels: [...a.querySelectorAll('text.lane-label')].map(t => [t.dataset.lane,
                                                                  t.firstChild.data, ...box(t)]),
      glyphs: [...a.querySelectorAll('g.glyph')].map(g => {
        const [top, bottom] = box(g); return [+g.dataset.i, g.dataset.lane, (top + bottom) / 2]; }),
      arrows: [...a.querySelectorAll('line.msg')].map(l => [+l.dataset.from, +l.dataset.to]),
    }; }"""


def _check_worker_lanes(doc: dict, got: dict, narrow: bool) -> None:
    """Each worker's events sit in its own lane; arrows join a message's send, arrival, answer."""
    events = doc["events"]
    by_worker: dict[int, list[int]] = {}
    for i, e in enumerate(events):
        w = (e.get("details") or {}).get("worker")
        if w is not None and e["actor"] in ("kernel", "journal", "network"):
            by_worker.setdefault(w, []).append(i)
    assert len(by_worker) >= 2, f"{doc['id']}: the simulator names fewer than two workers"
    lanes = {lane: (top, bottom) for lane, top, bottom, _ in got["lanes"]}
    labels = {lane: (text, right) for lane, text, _t, _b, right in got["labels"]}
    glyphs = {i: (lane, y) for i, lane, y in got["glyphs"]}
    for w, idx in by_worker.items():
        lane = f"worker#{w}"
        assert lane in lanes, f"{doc['id']}: no lane for worker {w}: {sorted(lanes)}"
        text, right = labels[lane]
        recovery = w > 1
        want = f"wkr {w}" + (" \u21bb" if recovery else "") if narrow else \
            f"worker {w}" + (" (recovery)" if recovery else "")
        assert text == want, f"{doc['id']}: lane label {text!r}, wanted {want!r}"
        assert right <= got["gutter"] + 1, f"{doc['id']}: label {text!r} runs into the plot"
        top, bottom = lanes[lane]
        for i in idx:
            assert glyphs[i][0] == lane, f"{doc['id']}: event {i} of worker {w} drawn in " \
                                         f"{glyphs[i][0]}"
            assert top <= glyphs[i][1] <= bottom, f"{doc['id']}: event {i} outside its lane"
    assert len({round(lanes[f"worker#{w}"][0]) for w in by_worker}) == len(by_worker), \
        "two workers share one lane"
    arrows = set(map(tuple, got["arrows"]))
    for i, e in enumerate(events):
        msg = (e.get("details") or {}).get("msg")
        if e["actor"] != "network" or e["kind"] != "send" or msg is None:
            continue
        same = [j for j, x in enumerate(events) if (x.get("details") or {}).get("msg") == msg]
        hit = next(j for j in same if events[j]["actor"] == "target")
        assert (i, hit) in arrows, f"{doc['id']}: no arrow from send {i} to its arrival {hit}"
        back = [j for j in same if events[j]["kind"] in ("answer", "undelivered")]
        if back:
            assert (hit, back[0]) in arrows, f"{doc['id']}: no arrow back to {back[0]}"
            assert glyphs[back[0]][0] == glyphs[i][0], "the answer reaches another worker"


def test_one_lane_per_worker_with_events_in_each(browser, site, tmp_path):
    """Two concurrent recoverers, and a crash plus restart: each worker its own lane."""
    from sim import fixed, trace

    docs = [fixed.run_cell(("two workers recovering", "kernel", "t1")),
            fixed.run_cell(("two workers recovering", "naive", "t1")),
            fixed.run_cell(("crash before ack", "durable", "t1"))]
    paths = []
    for doc in docs:
        paths.append(tmp_path / f"{doc['id']}.json")
        paths[-1].write_text(trace.dumps(doc), encoding="utf-8")
    for width, height in ((1440, 900), (390, 844)):
        pg = Page(browser, site, _hash("happy path", "t1", "kernel"), width, height)
        page = pg.page
        _ready(page)
        page.set_input_files("#file-input", [str(p) for p in paths])
        page.wait_for_function(f"document.querySelectorAll('article.run').length === {len(docs)}"
                               f" && document.querySelector('#caption').innerText.includes('file')")
        _ready(page)
        page.evaluate("document.activeElement.blur()")
        page.keyboard.press("End")
        for doc in docs:
            panel = page.locator(f"article.run[data-run='{doc['id']}']")
            _check_worker_lanes(doc, panel.evaluate(LANES_JS), narrow=width < 600)
        kernel = page.locator(f"article.run[data-run='{docs[0]['id']}']")
        for w in (2, 3):  # the two recoverers, each with its own steps
            assert kernel.locator(f"g.glyph[data-lane='worker#{w}']").count() >= 3
        scroll = page.evaluate("document.documentElement.scrollWidth")
        assert scroll <= width, f"the page scrolls sideways at {width} px ({scroll} px wide)"
        page.screenshot(path=str(SHOTS / f"worker-lanes-{width}.png"), full_page=True)
        pg.close()


def test_every_fixed_table_run_plays_to_its_recorded_totals(browser, site):
    """All faults x tiers with all four systems shown, each played to its end in the page."""
    index = json.loads((RESULTS / "traces" / "index.json").read_text(encoding="utf-8"))
    want = {(t["fault"], t["system"], t["tier"]): t for t in index["traces"]}
    pg = Page(browser, site, _hash(index["faults"][0], index["tiers"][0],
                                   ",".join(index["systems"])))
    page = pg.page
    _ready(page)
    page.keyboard.press("]")  # the fault keys, once each way
    _ready(page)
    assert page.evaluate("window.viewer.state.fault") == index["faults"][1]
    page.keyboard.press("[")
    _ready(page)
    got = page.evaluate("""async ([faults, tiers]) => {
        const v = window.viewer, out = [];
        const ready = () => new Promise((ok) => {
            const poll = () => document.body.dataset.ready === 'true' ? ok() : setTimeout(poll, 5);
            poll(); });
        for (const fault of faults) for (const tier of tiers) {
            v.state.fault = fault; v.state.tier = tier; v.state.source = 'fixed';
            v.select({});
            await ready();
            v.seek(v.merged().length);
            out.push({fault, tier, current: document.querySelector(
                '#fault-list button[aria-current=true]').dataset.fault,
                caption: document.querySelector('#caption').innerText,
                runs: [...document.querySelectorAll('article.run')].map(a => {
                    const g = (s) => a.querySelector(`[data-testid=${s}]`).dataset.value;
                    return {id: a.dataset.run, refunded: g('refunded'), verdict: g('verdict'),
                            outcome: g('outcome')}; })});
        }
        return out; }""", [index["faults"], index["tiers"]])
    seen = set()
    for view in got:
        assert view["current"] == view["fault"]
        assert "\u2014 ." not in view["caption"], f"{view['fault']} is not described: " \
                                                   f"{view['caption'][:80]}"
        assert len(view["runs"]) == len(index["systems"])
        for item, system in zip(view["runs"], index["systems"], strict=True):
            entry = want[(view["fault"], system, view["tier"])]
            assert item["id"] == entry["id"]
            assert (item["refunded"], item["verdict"], item["outcome"]) == \
                (str(entry["refunded"]), entry["verdict"], entry["outcome"])
            seen.add(entry["id"])
    assert seen == set(t["id"] for t in index["traces"])
    pg.close()


def test_a_traced_sweep_cell_and_a_shrunk_story_play(browser, tiny_results, tmp_path):
    """A site built from the tiny results: seed 17 has two traced cells; stories from results/."""
    for name in PAGE_FILES:
        shutil.copy(ROOT / "viewer" / name, tmp_path / name)
    shutil.copy(RESULTS / "shrunk.json", tiny_results / "shrunk.json")
    cell = {"id": "rename_break/kernel", "row": "rename_break", "guarantee": "original",
            "system": "kernel", "verdict": "ok", "harms": [], "landed": ["post_url"],
            "outcomes": {"0:post_url": "REFUSED premise_stale"},
            "trace": {"events": [
                {"t": 0, "actor": "agent", "kind": "submit", "label": "unit post_url"},
                {"t": 40, "actor": "world", "kind": "rename", "label": "slugify renamed"},
                {"t": 90, "actor": "journal", "kind": "REFUSED", "label": "REFUSED premise"}],
                "journal": []}}
    (tiny_results / "coding").mkdir(exist_ok=True)
    (tiny_results / "coding" / "coding_traces.json").write_text(json.dumps([cell]),
                                                                encoding="utf-8")
    assert build.main(tiny_results, tmp_path / "traces.js", jobs=1) == 0
    (tiny_results / "coding" / "coding_traces.json").unlink()
    pg = Page(browser, tmp_path, "#seed=17&tier=t3&systems=naive,kernel")
    page = pg.page
    _ready(page)
    assert "seed 17" in page.inner_text("#caption")
    page.keyboard.press("End")
    doc = json.loads((tiny_results / "traces" / "sweep" / "17__kernel__t3.json").read_text())
    panel = page.locator("article.run[data-system=kernel]")
    assert _value(panel, "refunded") == str(doc["refunded"])
    assert _value(panel, "verdict") == doc["verdict"]
    final = panel.locator("dl.receipt").last.locator("dd[data-field=final]")
    assert json.loads(final.get_attribute("data-value")) == doc["receipts"][-1]["final"]
    page.click("#fault-list button[data-fault='crash before ack']")
    _ready(page)
    assert "seed 17" not in page.inner_text("#caption")
    page.click("#coding summary")  # the coding-agents scenario, in the same page
    page.locator("[data-testid=coding-table] button").first.click()
    page.wait_for_function("document.querySelector('#caption').innerText.includes('Coding')")
    _ready(page)
    assert page.locator("article.run").count() == 1
    assert page.locator("article.run g.glyph").count() == 3
    target = page.locator("article.run text.lane-label[data-lane=target]").text_content()
    assert target == "target (repository)", f"a coding run's target lane says {target!r}"
    stories = json.loads((RESULTS / "shrunk.json").read_text(encoding="utf-8"))["stories"]
    story = next(s for s in stories if s["found"])
    page.goto((tmp_path / "index.html").as_uri() +
              f"#story=shrunk-{story['system']}&tier={story['failing_tiers'][0]}")
    page.wait_for_function("document.querySelector('#caption').innerText.includes('Shrunk')")
    _ready(page)
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("End")
    panel = page.locator(f"article.run[data-system={story['system']}]")
    assert _value(panel, "refunded") == str(story["refunded"])
    assert page.locator("article.run[data-system=kernel]").count() == 1
    pg.close()
