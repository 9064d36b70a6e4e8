#!/usr/bin/env python3
"""The evidence site in a real browser (headless Chromium, driven by Playwright).

Renders the site from a fixture set of real run records with `binberg report`, then opens every
page reachable from index.html and checks what a reader relies on:
  - no console error and no failed load on any page;
  - no request leaves the site's folder (no network, no external fonts or scripts);
  - every relative link and image resolves to a file of the site;
  - every chart is present with its data points (data-points matches the marks drawn);
  - each page is readable with JavaScript disabled (same text as with it enabled) and at 375 px wide
    (nothing wider than the viewport).
Writes screenshots of the index and of one drill page into --artifacts.
"""

import argparse
import pathlib
import subprocess
import sys
import tempfile
from urllib.parse import unquote, urlparse

from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def render(binberg, runs, out):
    result = subprocess.run([binberg, "report", "--runs-dir", str(runs), "--out", str(out)],
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        fail(f"binberg report exited {result.returncode}: {result.stderr.strip()}")
    index = pathlib.Path(result.stdout.strip().splitlines()[-1])
    if index != out.resolve() / "index.html" or not index.is_file():
        fail(f"binberg report's last line should be the index page's path, was {index}")
    return index


def local_target(page_path, href):
    """The file a relative link points to; None for an in-page anchor; a str for a link that leaves."""
    parsed = urlparse(href)
    if parsed.scheme or parsed.netloc:
        return href
    if not parsed.path:
        return None
    return (page_path.parent / unquote(parsed.path)).resolve()


class SiteVisit:
    """Opens each page once with JavaScript and once without, recording what went wrong."""

    def __init__(self, browser, site):
        self.site = site.resolve()
        self.problems = []
        self.with_js = browser.new_context(viewport={"width": 375, "height": 900})
        self.without_js = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
        for context in (self.with_js, self.without_js):
            context.on("request", self.check_request)

    def check_request(self, request):
        parsed = urlparse(request.url)
        path = pathlib.Path(unquote(parsed.path)).resolve() if parsed.scheme == "file" else None
        if path is None or not path.is_relative_to(self.site):
            self.problems.append(f"request leaves the site folder: {request.url}")

    def open(self, context, path):
        page = context.new_page()
        page.on("console", lambda msg: msg.type == "error" and self.problems.append(f"{path.name}: console: {msg.text}"))
        page.on("pageerror", lambda error: self.problems.append(f"{path.name}: page error: {error}"))
        page.on("requestfailed", lambda request: self.problems.append(f"{path.name}: failed to load {request.url}"))
        response = page.goto(path.as_uri())
        if response is not None and not response.ok:
            self.problems.append(f"{path.name}: status {response.status}")
        return page

    def check_page(self, path):
        """Checks one page; returns the site pages it links to."""
        page = self.open(self.with_js, path)
        text_with_js = page.inner_text("body")
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        if overflow > 0:
            self.problems.append(f"{path.name}: {overflow} px wider than a 375 px screen")
        self.check_charts(path, page)
        linked = self.check_links(path, page)
        page.close()
        page = self.open(self.without_js, path)
        if page.inner_text("body") != text_with_js:
            self.problems.append(f"{path.name}: reads differently with JavaScript disabled")
        page.close()
        return linked

    def check_charts(self, path, page):
        for chart in page.locator("svg.chart").all():
            label = chart.get_attribute("aria-label") or "(unlabelled chart)"
            declared = chart.get_attribute("data-points")
            drawn = chart.locator(".point, .bar").count()
            if declared is None or int(declared) != drawn:
                self.problems.append(f"{path.name}: chart {label!r} declares {declared} points, draws {drawn}")
            if not chart.is_visible():
                self.problems.append(f"{path.name}: chart {label!r} is not visible")

    def check_links(self, path, page):
        linked = []
        for attribute, selector in (("href", "a[href]"), ("href", "link[href]"), ("src", "[src]")):
            for element in page.locator(selector).all():
                target = local_target(path, element.get_attribute(attribute))
                if target is None:
                    continue
                if isinstance(target, str):
                    self.problems.append(f"{path.name}: {attribute}={target!r} leaves the site")
                    continue
                if not target.is_file() or not target.is_relative_to(self.site):
                    self.problems.append(f"{path.name}: {attribute}={element.get_attribute(attribute)!r} does not resolve")
                elif target.suffix == ".html":
                    linked.append(target)
        return linked


def visit_site(index, artifacts):
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        visit = SiteVisit(browser, index.parent)
        seen, queue, drill_pages, charts = set(), [index.resolve()], [], 0
        while queue:
            path = queue.pop()
            if path in seen:
                continue
            seen.add(path)
            queue.extend(visit.check_page(path))
            if path.parent != index.parent:
                drill_pages.append(path)
        page = visit.open(visit.without_js, index)
        charts = page.locator("svg.chart").count()
        page.screenshot(path=str(artifacts / "report-index.png"), full_page=True)
        if drill_pages:
            drill = visit.open(visit.without_js, sorted(drill_pages)[0])
            charts += drill.locator("svg.chart").count()
            drill.screenshot(path=str(artifacts / "report-drill.png"), full_page=True)
        browser.close()
    if not drill_pages:
        visit.problems.append("the index links to no drill page")
    if charts == 0:
        visit.problems.append("neither the index nor a drill page holds a chart")
    return seen, visit.problems


BROKEN_PAGE = """<!doctype html><html><head><title>broken</title></head><body>
<a href="runs/missing.html">a drill page that is not there</a>
<a href="https://example.invalid/">away</a>
<img src="https://example.invalid/logo.png" alt="">
<svg class="chart" data-points="3" aria-label="recovery" viewBox="0 0 10 10" width="100" height="100">
<circle class="point" cx="1" cy="1" r="1"/><circle class="point" cx="2" cy="2" r="1"/></svg>
<div style="width: 900px">too wide for a phone</div>
</body></html>"""


def self_check(artifacts):
    """The checks above fail on a site that breaks each of them: none passes by default."""
    with tempfile.TemporaryDirectory(prefix="binberg-broken-site-") as folder:
        index = pathlib.Path(folder) / "index.html"
        index.write_text(BROKEN_PAGE)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            visit = SiteVisit(browser, index.parent)
            visit.check_page(index.resolve())
            browser.close()
    expected = ["does not resolve", "leaves the site", "declares 3 points, draws 2", "wider than a 375 px screen"]
    missing = [what for what in expected if not any(what in problem for problem in visit.problems)]
    if missing:
        fail(f"the browser checks let a broken site through: nothing said {missing}; they said {visit.problems}")
    print(f"self-check: a broken site fails each check ({len(visit.problems)} problems found)")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--binberg", required=True)
    parser.add_argument("--runs", required=True, type=pathlib.Path)
    parser.add_argument("--artifacts", required=True, type=pathlib.Path)
    args = parser.parse_args()
    args.artifacts.mkdir(parents=True, exist_ok=True)
    self_check(args.artifacts)
    with tempfile.TemporaryDirectory(prefix="binberg-report-") as out:
        index = render(args.binberg, args.runs, pathlib.Path(out) / "site")
        pages, problems = visit_site(index, args.artifacts)
    for problem in problems:
        print(f"FAIL: {problem}", file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"site browser test: {len(pages)} pages checked; screenshots in {args.artifacts.resolve()}")


if __name__ == "__main__":
    main()
