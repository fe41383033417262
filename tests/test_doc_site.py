"""The documentation site builds with warnings as errors and renders in a real browser.

The build runs the gallery (``examples/plot_*.py``), so this is also where those
examples are run. The browser part drives headless Chromium (Debian's
``chromium`` package) over a local HTTP server and checks the rendered text and
that every image the pages show was fetched (no 404). Without Chromium it is
skipped, unless ``SKLEARN_SKETCH_REQUIRE_BROWSER=1`` (CI sets it) makes that a
failure.
"""
import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "doc"
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The HTML site, built once with ``sphinx-build -W``."""
    if not (DOC / "conf.py").is_file():
        pytest.skip("no doc/ folder beside the tests (installed tests only)")
    out = tmp_path_factory.mktemp("site")
    # Run from outside the checkout, so that the package imported is the one the
    # tests test (installed, or built in place), not the uncompiled sources.
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html",
         "-d", str(out / "doctrees"), str(DOC), str(out / "html")],
        capture_output=True, text=True, timeout=600, cwd=out)
    assert result.returncode == 0, (
        "sphinx-build -W failed:\n" + result.stdout[-3000:] + result.stderr[-5000:])
    return out / "html"


def test_every_page_and_gallery_example_is_built(site):
    for page in ("index", "getting_started", "api", "benchmarks", "changelog",
                 "user_guide/index", "user_guide/memory", "user_guide/parallel",
                 "auto_examples/index", "generated/sklearn_sketch.MissionClassifier",
                 "generated/sklearn_sketch.io.partial_fit_stream",
                 "generated/sklearn_sketch.dask.fit"):
        assert (site / f"{page}.html").is_file(), page
    drawn = 0
    for example in sorted((ROOT / "examples").glob("plot_*.py")):
        page = (site / "auto_examples" / f"{example.stem}.html").read_text()
        # The gallery ran the script: its figures are on the page, unless it
        # said that the shared data it needs were not found.
        if re.search(rf'<img src="../_images/sphx_glr_{example.stem}_\d+\.png"', page):
            drawn += 1
        else:
            assert "not found" in page, f"{example.name} drew no figure"
    # Those on the embedded sample and on synthetic data always draw.
    assert drawn >= 3


def test_every_public_name_has_an_api_page(site):
    import sklearn_sketch
    import sklearn_sketch.io

    public = [f"sklearn_sketch.{name}" for name in sklearn_sketch.__all__
              if name != "__version__"]
    public += [f"sklearn_sketch.io.{name}" for name in sklearn_sketch.io.__all__
               if not name.isupper()]
    public += ["sklearn_sketch.datasets.load_dna_sample", "sklearn_sketch.dask.fit"]
    import sklearn_sketch.deltoids
    import sklearn_sketch.explain
    import sklearn_sketch.pmi
    import sklearn_sketch.feature_extraction
    for module in (sklearn_sketch.explain, sklearn_sketch.feature_extraction,
                   sklearn_sketch.deltoids, sklearn_sketch.pmi):
        public += [f"{module.__name__}.{name}" for name in module.__all__
                   if name not in sklearn_sketch.__all__]  # KmerVectorizer: top level
    missing = [name for name in public if not (site / "generated" / f"{name}.html").is_file()]
    assert not missing, f"no API page for {missing}"


def _browser():
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("SKLEARN_SKETCH_REQUIRE_BROWSER") == "1":
        pytest.fail("SKLEARN_SKETCH_REQUIRE_BROWSER=1 but no Chromium was found")
    pytest.skip("headless Chromium not installed (Debian: apt-get install chromium)")


class _LoggingHandler(http.server.SimpleHTTPRequestHandler):
    def log_request(self, code="-", size="-"):
        self.server.requests.append((self.path.split("?")[0], int(code)))

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server(site):
    """The built site over HTTP on a free local port, with a log of (path, status)."""
    handler = functools.partial(_LoggingHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.requests = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def render(browser, url, tmp_path):
    """The DOM of ``url`` after Chromium has loaded it, scripts run and images fetched."""
    result = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
         "--virtual-time-budget=10000", "--dump-dom", url],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def visible_text(dom):
    dom = re.sub(r"(?s)<(script|style)\b.*?</\1>", " ", dom)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", dom))


PAGES = {
    "index.html": ["sklearn-sketch", "Getting started", "User guide", "API reference"],
    "auto_examples/plot_accuracy_memory.html": [
        "Accuracy against memory, at equal real bytes", "AWM-Sketch", "SGDClassifier"],
    "generated/sklearn_sketch.MissionClassifier.html": [
        "MissionClassifier", "n_features_to_select", "memory_budget", "get_support"],
}


@pytest.mark.parametrize("page", sorted(PAGES))
def test_pages_render_in_chromium_with_their_images(page, server, tmp_path):
    browser = _browser()
    start = len(server.requests)
    dom = render(browser, f"http://127.0.0.1:{server.server_port}/{page}", tmp_path)
    text = visible_text(dom)
    for expected in PAGES[page]:
        assert expected in text, f"{page}: {expected!r} not rendered"
    served = dict(server.requests[start:])
    missing = [path for path, status in server.requests[start:]
               if status == 404 and not path.endswith("favicon.ico")]
    assert not missing, f"{page}: 404 for {missing}"
    base = "/" + page.rsplit("/", 1)[0] + "/" if "/" in page else "/"
    images = [os.path.normpath(base + src) if not src.startswith("/") else src
              for src in re.findall(r'<img[^>]*\bsrc="([^"]+)"', dom)
              if not src.startswith(("http", "data:"))]
    for image in images:
        assert served.get(image) == 200, f"{page}: the browser did not load {image}"
    if page.startswith("auto_examples/"):
        assert any("sphx_glr_plot_accuracy_memory_" in image for image in images), (
            "the gallery page shows no figure")
