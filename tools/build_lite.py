"""Build the course as a static JupyterLite site in ``out/lite`` (``make lite``).

The site runs JupyterLab and a Pyodide (WebAssembly CPython) kernel in the browser from
static files only: lessons, exercises, the ``ssa_course`` wheel, Pyodide itself and
Graphviz compiled to WebAssembly are all inside it, and nothing is fetched from another
host at run time. Downloads happen here, at build time, from npm and the package index.

    python tools/build_lite.py [--out out/lite]

Every pinned version is in :data:`PINS` (docs/lite.md says why each is what it is).
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent

PINS = {
    # the site builder and its kernel (pip); the kernel names the Pyodide it expects
    "jupyterlite-core": "0.8.6",
    "jupyterlite-pyodide-kernel": "0.8.6",
    # npm: the Pyodide core (no wheels in it) and Graphviz as one ES module with its wasm
    "pyodide": "314.0.6",
    "@viz-js/viz": "3.31.0",
    # pure wheels the lessons need that Pyodide's lock does not list (piplite installs them)
    "pydot": "4.0.1",
    "ipywidgets": "8.1.9",
    "comm": "0.2.3",
}
# Pyodide-lock packages shipped in static/pyodide (with what they depend on in the lock);
# the kernel installs micropip, packaging, ipython and jedi; the course needs networkx, pyparsing
LOCK_ROOTS = ("micropip", "packaging", "ipython", "jedi", "networkx", "pyparsing")
# lock dependencies that cannot come along (compiled, and not needed by what we use)
LOCK_DROP = {"networkx": ("matplotlib", "numpy", "setuptools")}
# what the first cell of every notebook on the site loads from the site's lock (with the
# lock's own dependencies; nothing is resolved from the package's metadata, which names
# libraries that cannot exist in the browser); a notebook that imports networkx gets it too
BROWSER_PACKAGES = ("ssa-course", "pydot", "pyparsing", "ipywidgets", "comm")
# wheels that are not in Pyodide's lock but get a lock entry in static/pyodide, so the kernel
# preloads its own with Pyodide itself (one parallel fetch, no micropip resolution) instead
# of installing them one after another when it starts, and the set-up cell loads the
# course's in one call: the kernel's own wheels (shipped by jupyterlite-pyodide-kernel) and
# the course's; name -> what it depends on (in the lock). networkx is not a dependency
# here: only ``quads.cfg.to_networkx`` and the matplotlib fallback (no matplotlib in the
# browser) use it, and a cell that says ``import networkx`` loads it (the kernel loads a
# cell's imports from the lock)
SITE_LOCK = {
    "piplite": ["micropip"],
    "pyodide-kernel": ["comm", "ipython"],
    "ipykernel": ["pyodide-kernel"],
    "comm": [],
    "ssa-course": ["pydot"],
    "pydot": ["pyparsing"],
    "ipywidgets": ["comm", "ipython", "traitlets"],
}
# loadPyodide's `packages`: only what the kernel itself needs to start (it skips its own
# installs of those listed). The course's wheels are not here: every wheel listed is
# unpacked before the kernel reports idle (networkx alone is 1,181 files with its bytecode), so the
# set-up cell loads them instead, and only the ones a lesson uses
PRELOAD = ("micropip", "piplite", "ipykernel", "comm", "pyodide-kernel", "jedi", "ipython")
SETUP_MARK = "# ssa_course in the browser (JupyterLite)"
PRACTICE_NOTE = (
    "**In the browser, checking is practice, not grading.** The test cells run here, in\n"
    "this page's Python; nothing is handed in. Your instructor grades the notebook you submit\n"
    "(download it: File > Download).")
KERNEL_PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"
CACHE = ROOT / "out" / "lite-cache"
WORK = ROOT / "out" / "lite-build"


def build_tools() -> None:
    """The pinned site builder in this environment (pip installs it when it differs)."""
    from importlib.metadata import PackageNotFoundError, version

    wanted = []
    for name in ("jupyterlite-core", "jupyterlite-pyodide-kernel"):
        try:
            ok = version(name) == PINS[name]
        except PackageNotFoundError:
            ok = False
        if not ok:
            wanted.append(f"{name}=={PINS[name]}")
    if wanted:
        run([sys.executable, "-m", "pip", "install", "--quiet", *wanted, "jupyter_server"])


def run(cmd: list[str], **kw) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def npm_package(name: str, version: str) -> Path:
    """``npm pack`` name@version into the cache (once) and unpack it; its ``package`` dir."""
    dest = CACHE / "npm" / f"{name.replace('/', '+')}-{version}"
    if not (dest / "package" / "package.json").exists():
        dest.mkdir(parents=True, exist_ok=True)
        run(["npm", "pack", "--silent", f"{name}@{version}"], cwd=dest,
            stdout=subprocess.DEVNULL)
        (tgz,) = dest.glob("*.tgz")
        with tarfile.open(tgz) as tar:
            tar.extractall(dest, filter="data")
    return dest / "package"


def pure_wheel(name: str, version: str, python: str = "3.14") -> Path:
    """The py3-none-any wheel of name==version from the package index (cached)."""
    dest = CACHE / "wheels"
    dest.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[-_.]+", "_", name).lower()
    found = [w for w in dest.glob("*.whl")
             if w.name.lower().startswith(f"{stem}-{version}-")]
    if not found:
        run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
             "--only-binary=:all:", "--python-version", python, "--platform", "any",
             "--implementation", "py", "--abi", "none", "-d", str(dest),
             f"{name}=={version}"])
        found = [w for w in dest.glob("*.whl")
                 if w.name.lower().startswith(f"{stem}-{version}-")]
    if len(found) != 1:
        raise SystemExit(f"error: expected one wheel for {name}=={version}, got {found}")
    return found[0]


def normal(name: str) -> str:
    """A package name in PEP 503's normal form."""
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_closure(packages: dict) -> list[str]:
    """LOCK_ROOTS and their lock dependencies (minus LOCK_DROP), in a stable order."""
    key = {normal(k): k for k in packages}  # depends may spell prompt_toolkit
    seen: list[str] = []
    todo = list(LOCK_ROOTS)
    while todo:
        name = key[normal(todo.pop(0))]
        if name in seen:
            continue
        seen.append(name)
        drop = LOCK_DROP.get(name, ())
        todo += [d for d in packages[name]["depends"] if d not in drop]
    return seen


# Pure wheels hold only sources, so every page compiled each imported module to bytecode
# when the kernel started (IPython, jedi, networkx, the course: most of the start). Pyodide's
# own CPython (run by node) adds each module's bytecode to the wheel at build time,
# "unchecked-hash" so it is used without comparing it to the source's mtime.
PYC_JS = r"""
const [pyodideDir, wheelDir] = process.argv.slice(2);
const { loadPyodide } = await import(pyodideDir + "/pyodide.mjs");
const py = await loadPyodide({ indexURL: pyodideDir + "/" });
py.FS.mkdir("/wheels");
py.FS.mount(py.FS.filesystems.NODEFS, { root: wheelDir }, "/wheels");
py.runPython(`
import importlib.util, os, py_compile, tempfile, zipfile
for name in sorted(os.listdir("/wheels")):
    if not name.endswith(".whl"):
        continue
    path = os.path.join("/wheels", name)
    with zipfile.ZipFile(path) as zin:
        items = [(i, zin.read(i)) for i in zin.infolist()]
    have = {i.filename for i, _ in items}
    out = tempfile.mktemp(suffix=".whl")
    added = 0
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for info, data in items:
            zout.writestr(info, data)
            if not info.filename.endswith(".py") or ".dist-info/" in info.filename:
                continue
            pyc = importlib.util.cache_from_source(info.filename)
            if pyc in have:
                continue
            src = tempfile.mktemp(suffix=".py")
            with open(src, "wb") as f:
                f.write(data)
            try:
                py_compile.compile(src, cfile=src + "c", dfile=info.filename, doraise=True,
                    invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
            except py_compile.PyCompileError:
                continue  # (a file only for another Python version): left as source
            with open(src + "c", "rb") as f:
                zout.writestr(pyc, f.read())
            added += 1
    with open(out, "rb") as f, open(path, "wb") as g:
        g.write(f.read())
    print(name, added)
`);
"""


def add_bytecode(pyodide: Path, wheels: Path) -> None:
    """Every wheel in ``wheels`` gets its modules' bytecode, compiled by ``pyodide``'s own
    CPython under node (:data:`PYC_JS`)."""
    script = WORK / "pyc.mjs"
    script.write_text(PYC_JS)
    run(["node", str(script), str(pyodide.resolve()), str(wheels.resolve())])


def kernel_wheels() -> list[Path]:
    """The kernel's own wheels (piplite, pyodide-kernel, ipykernel), as the kernel
    extension ships them for its piplite index."""
    pypi = (Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "@jupyterlite"
            / "pyodide-kernel-extension" / "static" / "pypi")
    found = [w for w in pypi.glob("*.whl")
             if normal(w.name.split("-")[0]) in ("piplite", "pyodide-kernel", "ipykernel")]
    if len(found) != 3:
        raise SystemExit(f"error: the kernel's wheels are not all in {pypi}: {found}")
    return found


def lock_entry(wheel: Path) -> dict:
    """A pyodide-lock.json entry for a pure wheel of :data:`SITE_LOCK`."""
    dist, version = wheel.name.split("-")[:2]
    name = normal(dist)
    return {"name": name, "version": version, "file_name": wheel.name,
            "install_dir": "site", "sha256": sha256(wheel), "package_type": "package",
            "imports": [dist.lower()], "depends": SITE_LOCK[name], "unvendored_tests": False}


def pyodide_dir(dest: Path, site_wheels: list[Path] = ()) -> None:
    """Pyodide's core plus the lock's pure wheels, the lock trimmed to what is there,
    and ``site_wheels`` (:data:`SITE_LOCK`) added to it."""
    core = npm_package("pyodide", PINS["pyodide"])
    dest.mkdir(parents=True)
    for f in core.iterdir():
        if f.suffix not in (".map", ".ts", ".html") and f.name not in ("package.json",):
            shutil.copy2(f, dest / f.name)
    lock = json.loads((core / "pyodide-lock.json").read_text())
    lock["info"].setdefault("version", PINS["pyodide"])  # pyodide-lock wants one
    python = ".".join(lock["info"]["python"].split(".")[:2])  # Pyodide's CPython
    keep = {}
    for name in lock_closure(lock["packages"]):
        entry = dict(lock["packages"][name])
        wheel = pure_wheel(entry["name"], entry["version"], python)
        shutil.copy2(wheel, dest / wheel.name)
        drop = LOCK_DROP.get(name, ())
        entry.update(file_name=wheel.name, sha256=sha256(wheel),
                     depends=[d for d in entry["depends"] if d not in drop])
        keep[name] = entry
    for wheel in site_wheels:
        shutil.copy2(wheel, dest / wheel.name)
    add_bytecode(core, dest)
    for entry in keep.values():
        entry["sha256"] = sha256(dest / entry["file_name"])
    for wheel in site_wheels:
        entry = lock_entry(dest / wheel.name)
        keep[entry["name"]] = entry
    missing = {normal(d) for e in keep.values() for d in e["depends"]} - set(map(normal, keep))
    wanted = {*PRELOAD, *BROWSER_PACKAGES, "networkx"}  # what the kernel and set-up cells load
    if missing or wanted - set(keep):
        raise SystemExit(f"error: the lock lacks {sorted(missing | (wanted - set(keep)))}")
    lock["packages"] = keep
    (dest / "pyodide-lock.json").write_text(json.dumps(lock, indent=1) + "\n")


def course_wheels() -> list[Path]:
    """ssa_course built from this checkout, and the pure wheels the lessons need."""
    dest = WORK / "wheels"
    dest.mkdir(parents=True)
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
         "-w", str(dest), str(ROOT)])
    wheels = list(dest.glob("ssa_course-*.whl"))
    for name in ("pydot", "ipywidgets", "comm"):
        wheels.append(shutil.copy2(pure_wheel(name, PINS[name]), dest))
    return [Path(w) for w in wheels]


def setup_cell(packages: tuple[str, ...] = BROWSER_PACKAGES) -> nbformat.NotebookNode:
    """The first cell of every notebook on the site: load the course from the site's lock
    and the WebAssembly Graphviz (the lesson's own first cell follows unchanged)."""
    names = ", ".join(repr(p) for p in packages)
    return nbformat.v4.new_code_cell(
        f"{SETUP_MARK}: load the course from this site and Graphviz\n"
        "import pyodide_js\n\n"
        f"await pyodide_js.loadPackage([{names}])\n"
        "from ssa_course.viz import browser\n\n"
        "await browser.load()")


def notebook_packages(sources: str) -> tuple[str, ...]:
    """What the set-up cell of a notebook with these cell ``sources`` loads."""
    extra = ("networkx",) if re.search(r"\bnetworkx\b", sources) else ()
    return BROWSER_PACKAGES + extra


# a path a lesson reads relative to its folder: ../examples/sum.tiny, ../Makefile
RELATIVE = re.compile(r"\.\./((?:[\w-][\w.-]*/)*[\w-][\w.-]*)")


def read_paths(text: str, root: Path = ROOT) -> list[str]:
    """The repository files and folders ``text`` names as ``../path`` (those that exist,
    outside notebooks/ and exercises/, which the site has already), sorted."""
    found = set()
    for rel in RELATIVE.findall(text):
        rel = rel.rstrip(".")
        if rel.split("/")[0] in ("notebooks", "exercises") or not (root / rel).exists():
            continue
        if rel.split("/")[0] == "js":  # it would shadow Pyodide's js module
            raise SystemExit(f"error: a lesson reads ../{rel}: no site folder may be "
                             "called 'js' (it kills the kernel; docs/lite.md)")
        found.add(rel)
    return sorted(found)


def contents_dir(dest: Path) -> None:
    """Lessons and exercises (each with the set-up cell first) and the files they read,
    in the repository's layout so relative paths (../examples/...) still work."""
    read: set[str] = set()
    for folder in ("notebooks", "exercises"):
        (dest / folder).mkdir(parents=True)
        for path in sorted((ROOT / folder).glob("*.ipynb")):
            nb = nbformat.read(path, as_version=4)
            sources = "\n".join(c.source for c in nb.cells)
            read.update(read_paths(sources))
            nb.cells.insert(0, setup_cell(notebook_packages(sources)))
            if folder == "exercises":
                nb.cells.insert(0, nbformat.v4.new_markdown_cell(PRACTICE_NOTE))
            nbformat.write(nb, dest / folder / path.name)
    for rel in sorted(read):
        if (ROOT / rel).is_dir():
            shutil.copytree(ROOT / rel, dest / rel, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__", ".*"))
        else:
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)


def notebook_title(path: Path) -> str:
    """A notebook's first heading (``# 00 · A tour: ...``), else its file name."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):  # (its Markdown emphasis dropped)
                    return line[2:].replace("*", "").replace("`", "").strip()
    return path.stem


def lab_link(path: str) -> str:
    """The site-relative address that opens ``path`` (a contents path) in JupyterLab."""
    return f"lab/index.html?path={path}"


START_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>ssa_course: compiler IRs in the browser</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
{config}
<style>
body {{ font-family: sans-serif; max-width: 46em; margin: 2em auto; padding: 0 1em;
       line-height: 1.45; color: #222; }}
a.start {{ display: inline-block; padding: .6em 1.2em; background: #1565c0; color: #fff;
          border-radius: 4px; text-decoration: none; font-weight: bold; }}
li {{ margin: .2em 0; }} small {{ color: #555; }}
</style></head><body>
<h1>ssa_course: from quads to graphs, in your browser</h1>
<p>Thirteen lessons on compiler intermediate representations (quads, SSA, Julia-style IR, the
sea of nodes, down to x86-64, then all of Bril), eleven with an exercise. Everything runs
in this page: Python (Pyodide) and Graphviz are part of the site, nothing is sent anywhere.
The first start takes a little while (Python loads); run a notebook with <b>Run &gt; Run
All Cells</b>.</p>
<p><a class="start" id="tour" href="{tour}">Start the tour (lesson 00)</a></p>
<h2>Lessons</h2>
<ul>
{lessons}
</ul>
<h2>Exercises</h2>
<p><small>In the browser a check is practice, not grading: your work stays in this
browser (File &gt; Download saves the notebook to hand in).</small></p>
<ul>
{exercises}
</ul>
<p><small><a href="lab/index.html">All files in JupyterLab</a></small></p>
</body></html>
"""


# JupyterLite's own index.html holds the site's root configuration, which every page of the
# site reads (config-utils.js fetches each parent's index.html for it): the start page keeps
# that element, without the script that would send the browser on to the file browser
LITE_ROOT_CONFIG = re.compile(
    r'<script id="jupyter-config-data" type="application/json"[^>]*>.*?</script>', re.S)
EMPTY_ROOT_CONFIG = ('<script id="jupyter-config-data" type="application/json" '
                     'data-jupyter-lite-root=".">{}</script>')


def start_page(contents: Path, lite_index: str = EMPTY_ROOT_CONFIG) -> str:
    """The site's front page (``index.html``): a button to the tour, every lesson and every
    exercise, each a link that opens the notebook in JupyterLab. ``lite_index`` is the
    page JupyterLite built there (its root configuration is kept)."""
    config = LITE_ROOT_CONFIG.search(lite_index)
    if config is None or "data-jupyter-lite-root" not in config.group(0):
        raise SystemExit("error: JupyterLite's index.html has no root configuration "
                         "(jupyter-config-data): the start page cannot replace it")

    def items(folder: str) -> str:
        return "\n".join(
            f'<li><a href="{html.escape(lab_link(f"{folder}/{p.name}"))}">'
            f"{html.escape(notebook_title(p))}</a></li>"
            for p in sorted((contents / folder).glob("*.ipynb")))

    tour = html.escape(lab_link("notebooks/00-tour.ipynb"))
    return START_PAGE.format(config=config.group(0), tour=tour, lessons=items("notebooks"),
                             exercises=items("exercises"))


def lite_config(path: Path) -> None:
    path.write_text(json.dumps({
        "jupyter-lite-schema-version": 0,
        "jupyter-config-data": {
            "appName": "ssa_course",
            "litePluginSettings": {KERNEL_PLUGIN: {
                "disablePyPIFallback": True,
                # fetched in parallel while Pyodide starts (static/pyodide's lock)
                "loadPyodideOptions": {"packages": list(PRELOAD)}}},
            # window.jupyterapp: tools/lite_check.py drives the page through it
            "exposeAppInBrowser": "true",
            # nbgrader's Lab extension (in this environment for the course) needs a server
            "disabledExtensions": ["@jupyter/nbgrader"],
        },
    }, indent=2) + "\n")


def build(out: Path) -> None:
    started = time.monotonic()
    build_tools()
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    wheels = course_wheels()
    pyodide_dir(WORK / "static" / "pyodide", kernel_wheels() + wheels)
    contents_dir(WORK / "contents")
    lite_config(WORK / "jupyter-lite.json")
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "-m", "jupyterlite_core", "build", "--lite-dir", str(WORK),
           "--output-dir", str(out), "--contents", str(WORK / "contents"),
           "--no-sourcemaps"]
    for wheel in wheels:
        cmd += ["--piplite-wheels", str(wheel)]
    run(cmd, cwd=WORK)
    # the front page replaces JupyterLite's (a redirect to the file browser, which lists
    # folders and says nothing about where to begin)
    index = out / "index.html"
    index.write_text(start_page(WORK / "contents", index.read_text()))
    viz = npm_package("@viz-js/viz", PINS["@viz-js/viz"]) / "dist" / "viz.js"
    (out / "static" / "viz").mkdir(parents=True, exist_ok=True)
    shutil.copy2(viz, out / "static" / "viz" / "viz.js")
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print(f"built {out.relative_to(ROOT)}: {size / 1e6:.1f} MB in "
          f"{time.monotonic() - started:.0f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "lite")
    build(parser.parse_args().out.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
