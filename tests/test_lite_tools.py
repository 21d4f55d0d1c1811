"""The pure parts of ``make lite`` (tools/build_lite.py) and ``make lite-test``
(tools/lite_check.py); the browser run itself is outside ``make test`` (docs/lite.md)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import build_lite  # noqa: E402
import lite_check  # noqa: E402


def cell(*outs: dict, count: int | None = 1) -> dict:
    return {"count": count, "outs": list(outs)}


def out(kind: str = "stream", text: str = "", mimes: tuple = ()) -> dict:
    return {"type": kind, "text": text, "mimes": list(mimes)}


# --- lite_check: what counts as leaving the site ---------------------------------------

@pytest.mark.parametrize("url, leaves", [
    ("http://127.0.0.1:8123/lab/index.html", False),
    ("http://127.0.0.1/static/pyodide/pyodide.asm.wasm", False),
    ("data:text/plain,hi", False),
    ("blob:http://127.0.0.1:8123/3f0c", False),
    ("about:blank", False),
    ("https://pypi.org/simple/micropip/", True),
    ("https://cdn.jsdelivr.net/pyodide/v0.29.0/full/pyodide.js", True),
    ("http://localhost:8123/lab/", True),  # only 127.0.0.1 resolves in the check
    ("ws://10.0.0.1/socket", True),
])
def test_leaves_site(url: str, leaves: bool) -> None:
    assert lite_check.leaves_site(url) is leaves


def test_the_offline_probe_counts_as_leaving() -> None:
    assert lite_check.leaves_site(lite_check.PROBE_URL)


@given(st.text())
def test_one_line_is_one_short_line(text: str) -> None:
    line = lite_check.one_line(text, 40)
    assert "\n" not in line and len(line) <= 40
    if len(" ".join(text.split())) <= 40:
        assert line == " ".join(text.split())


# --- lite_check: judging a notebook's outputs ------------------------------------------

def test_judge_a_clean_notebook() -> None:
    cells = [cell(out(text="159\n")), cell(out("display_data", mimes=("image/svg+xml",))),
             cell()]
    assert lite_check.judge("03-ssa", cells) == ([], 1)


def test_judge_reports_each_kind_of_problem_with_the_notebook_name() -> None:
    cells = [cell(out("error", "NameError: name 'x' is not defined")),
             cell(out(text="note: Graphviz is not installed; a simpler drawing\n")),
             cell(out("display_data", mimes=("image/png",))),
             cell(count=None)]
    problems, svgs = lite_check.judge("07-optimistic", cells)
    assert svgs == 0
    assert problems == [
        "07-optimistic: error output: NameError: name 'x' is not defined",
        "07-optimistic: printed 'note: Graphviz is not installed; a simpler drawing'",
        "07-optimistic: 1 drawings are PNG (not the SVG of Graphviz)",
        "07-optimistic: only 3 of 4 code cells ran",
    ]


def test_judge_reads_html_outputs_and_what_widgets_show() -> None:
    linked = ('<section data-pane="cfg"><div class="why">no drawing: Graphviz (&#x27;dot&#x27;) '
              "is not installed</div></section>")
    cells = [cell(out("display_data", linked, ("text/html",))),
             cell(out("display_data", "", ("application/vnd.jupyter.widget-view+json",)))
             | {"shown": "cfg: linked to the source\nno drawing: Graphviz ('dot') is not "
                         "installed"},
             cell(out(text="pip install capstone: not installed\n"))
             | {"shown": "pip install capstone: not installed"},  # reported once
             cell(out("execute_result", "Drawing(12 characters)", ("text/plain",)),
                  out("display_data", "<svg/>", ("image/svg+xml",))) | {"shown": "ok"}]
    problems, svgs = lite_check.judge("11-codegen", cells)
    assert svgs == 1
    assert len(problems) == 3
    assert problems[0] == "11-codegen: printed 'pip install capstone: not installed'"
    assert problems[1].startswith("11-codegen: shows ") and "'dot') is not installed" in \
        problems[1] and "<" not in problems[1]  # the HTML output, its text without tags
    assert problems[2] == ("11-codegen: shows \"linked to the source no drawing: "
                           "Graphviz ('dot') is not installed\"")


def test_state_js_reads_html_and_what_the_page_shows() -> None:
    """STATE_JS on a stand-in notebook panel (Node.js): a display's HTML and plain text,
    and the text of the output area (a widget's panel) reach :func:`lite_check.judge`."""
    import json
    import shutil

    if shutil.which("node") is None:
        pytest.skip("no node")
    page = """
const list = (xs) => ({length: xs.length, get: (i) => xs[i]});
const out = (o) => ({toJSON: () => o});
const cells = [
  {type: 'markdown', outputs: list([])},
  {type: 'code', executionCount: 1, outputs: list([
    out({output_type: 'display_data', data: {'text/html': ['<b>no drawing: ', 'x</b>'],
                                             'text/plain': 'HTML'}}),
    out({output_type: 'stream', text: 'hi'})])},
];
const widgets = [{}, {outputArea: {node: {innerText: 'cfg: is not installed'}}}];
const window = {jupyterapp: {shell: {currentWidget: {
  content: {model: {cells: list(cells)}, widgets: widgets},
  sessionContext: {session: {kernel: {status: 'idle'}}}}}}};
console.log(JSON.stringify((STATE)()));
""".replace("STATE", lite_check.STATE_JS)
    done = subprocess.run(["node", "-e", page], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    state = json.loads(done.stdout)
    assert state["status"] == "idle" and len(state["cells"]) == 1
    (cell_state,) = state["cells"]
    assert cell_state["outs"][0]["text"] == "<b>no drawing: x</b>\nHTML"
    assert cell_state["outs"][1] == {"type": "stream", "mimes": [], "text": "hi"}
    assert cell_state["shown"] == "cfg: is not installed"
    assert lite_check.judge("00-tour", state["cells"])[0] == [
        "00-tour: shows 'cfg: is not installed'"]


def test_judge_a_notebook_with_no_cells_is_a_problem() -> None:
    assert lite_check.judge("00-tour", [])[0] == ["00-tour: only 0 of 0 code cells ran"]


def test_report_one_line_per_failing_notebook() -> None:
    problems = ["03-ssa: error output: KeyError: 'x'", "03-ssa: only 4 of 9 code cells ran",
                "11-codegen: TimeoutError: Page.wait_for_function: Timeout exceeded.",
                "offline: 2 requests left 127.0.0.1, first https://pypi.org/"]
    names = ["00-tour", "03-ssa", "11-codegen", "exercise-01-quads"]
    assert lite_check.report(problems, names) == [
        "FAIL 03-ssa: error output: KeyError: 'x' (+1 more above)",
        "FAIL 11-codegen: TimeoutError: Page.wait_for_function: Timeout exceeded.",
        "FAIL offline: 2 requests left 127.0.0.1, first https://pypi.org/",
    ]
    assert lite_check.report([], names) == []


def test_timing_table_adds_kernel_and_first_output() -> None:
    table = lite_check.timing_table([("00-tour", 20.0, 2.5, 6.0, 2)])
    assert table.splitlines()[2] == "| 00-tour | 20.0 | 2.5 | 22.5 | 6.0 | 2 |"


# --- build_lite: the files a lesson reads, the Pyodide lock ----------------------------

def test_read_paths_finds_existing_files_and_folders(tmp_path: Path) -> None:
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "sum.tiny").write_text("")
    (tmp_path / "tests" / "programs").mkdir(parents=True)
    (tmp_path / "Makefile").write_text("")
    text = ('Path("../examples/sum.tiny").read_text()\n'
            'corpus = Path("../tests/programs")\n'
            'see ../Makefile.\n'
            'open("../exercises/01-quads.ipynb"), ../examples/missing.tiny, ../')
    assert build_lite.read_paths(text, tmp_path) == ["Makefile", "examples/sum.tiny",
                                                     "tests/programs"]


def test_read_paths_refuses_a_folder_called_js(tmp_path: Path) -> None:
    (tmp_path / "js").mkdir()
    (tmp_path / "js" / "x").write_text("")
    with pytest.raises(SystemExit, match="'js'"):
        build_lite.read_paths("../js/x", tmp_path)


def test_lock_closure_follows_depends_and_drops_the_compiled_ones() -> None:
    packages = {
        "micropip": {"depends": ["packaging"]}, "packaging": {"depends": []},
        "ipython": {"depends": ["prompt_toolkit", "decorator"]},
        "prompt-toolkit": {"depends": ["wcwidth"]}, "wcwidth": {"depends": []},
        "decorator": {"depends": []}, "jedi": {"depends": ["parso"]},
        "parso": {"depends": []}, "pyparsing": {"depends": []},
        "networkx": {"depends": ["matplotlib", "numpy", "setuptools"]},
        "numpy": {"depends": []}, "matplotlib": {"depends": ["numpy"]},
    }
    closure = build_lite.lock_closure(packages)
    assert set(closure) == set(packages) - {"numpy", "matplotlib", "setuptools"}
    assert closure[: len(build_lite.LOCK_ROOTS)] == ["micropip", "packaging", "ipython",
                                                     "jedi", "networkx", "pyparsing"]


def test_setup_cell_loads_the_course_from_the_lock_and_graphviz() -> None:
    source = build_lite.setup_cell().source
    assert source.startswith(build_lite.SETUP_MARK)
    assert "await pyodide_js.loadPackage(['ssa-course', " in source
    assert "networkx" not in source and "await browser.load()" in source
    # networkx (1,181 files to unpack) only where a notebook imports it
    assert build_lite.notebook_packages("import ssa_course") == build_lite.BROWSER_PACKAGES
    assert build_lite.notebook_packages("import networkx\n")[-1] == "networkx"


# --- the grader imports where nothing can be forked (Pyodide) --------------------------

def test_grading_imports_and_guards_in_process_without_fork_or_timers() -> None:
    """In Pyodide there is no os.fork, no signal.setitimer and no pwd module: a guarded
    answer is watched in this process, and an exercise's checks import."""
    code = (
        "import os, signal, sys\n"
        "del signal.setitimer, os.fork\n"
        "sys.platform = 'emscripten'\n"
        "sys.modules['pwd'] = None  # (import pwd raises ImportError)\n"
        "from ssa_course.grading import box  # what every check imports\n"
        "import networkx\n"
        "from ssa_course.grading import sandbox\n"
        "from ssa_course.grading.forbid import Forbidden, guard\n"
        "assert not sandbox.can_isolate()\n"
        "print(guard(lambda n: n + 1, forbid=[networkx])(41))\n"
        "try:\n"
        "    guard(lambda: networkx.DiGraph(), forbid=[networkx], task='answer')()\n"
        "except Forbidden as e:\n"
        "    print('refused:', e)\n")
    done = _run_python(code, 120)
    first, second = done.stdout.splitlines()
    assert first == "42"
    assert second.startswith("refused: your answer calls the library networkx")


# --- machine code in a browser: every stage that runs it says why it cannot ------------

def test_in_a_browser_machine_code_stages_say_why_in_one_line() -> None:
    """Imitates Pyodide (sys.platform 'emscripten', no unicorn, no capstone, no fork): the
    tour's loop over every stage gets one reason line for each stage that runs machine
    code, and a result for every other stage."""
    code = (
        "import os, sys\n"
        "sys.platform = 'emscripten'\n"
        "del os.fork\n"
        "for name in ('unicorn', 'capstone', 'keystone'):\n"
        "    sys.modules[name] = None\n"
        "import ssa_course\n"
        "from ssa_course import registry\n"
        "from ssa_course.codegen.toolchain import BROWSER_REASON\n"
        "prog = ssa_course.compile(open('examples/sum.tiny').read())\n"
        "for stage in ssa_course.stage_names():\n"
        "    result = ssa_course.run(prog, 10, via=stage)\n"
        "    why = registry.representation(stage).unavailable()\n"
        "    print(stage, result.status, repr(result.stdout.strip()), why == BROWSER_REASON,\n"
        "          result.error == 'error: ' + BROWSER_REASON if why else result.error)\n")
    done = _run_python(code, 300)
    rows = [line.split(" ", 4) for line in done.stdout.splitlines()]
    blocked = {r[0] for r in rows if r[3] == "True"}
    assert {"native", "emulated", "asm", "native-aarch64", "emulated-aarch64",
            "qemu-aarch64"} <= blocked
    for stage, status, stdout, browser, rest in rows:
        if stage in blocked:  # one line saying why, not an empty result
            assert (status, stdout, rest) == ("1", "''", "True"), stage
        else:  # everything else still runs
            assert (status, stdout, browser) == ("0", "'159'", "False"), (stage, rest)


def test_lesson_11_in_a_browser_gives_no_install_advice() -> None:
    """Pyodide has no capstone, keystone or programs (GNU as): lesson 11's cells say so,
    never ``pip install``/``apt-get install``; outside a browser the advice stays."""
    code = (
        "import shutil, sys\n"
        "for name in ('unicorn', 'capstone', 'keystone'):\n"
        "    sys.modules[name] = None\n"
        "shutil.which = lambda name, *a, **k: None\n"
        "from ssa_course import registry\n"
        "from ssa_course.codegen import toolchain\n"
        "from ssa_course.lessons import l11_codegen as l11\n"
        "def said():\n"
        "    return [l11.disassembler_missing(), l11.assembler_missing(),\n"
        "            registry.representation('disasm-aarch64').unavailable()] + [\n"
        "            l11.assembler_missing(n) for n in toolchain.ASSEMBLERS]\n"
        "print(repr(said()))\n"
        "sys.platform = 'emscripten'\n"
        "print(repr(said()))\n")
    here, browser = (eval(line) for line in _run_python(code, 120).stdout.splitlines())
    assert any("pip install capstone" in (r or "") for r in here)
    assert any("binutils" in (r or "") for r in here)
    assert l11_none(browser) == l11_none(here)  # the same things missing, said differently
    for reason in browser:
        assert reason is None or not re.search(r"install|binutils", reason), reason
    assert "no capstone package" in browser[0]


def l11_none(reasons: list) -> list[bool]:
    return [r is None for r in reasons]


def test_browser_reason_only_in_a_browser(monkeypatch: pytest.MonkeyPatch) -> None:
    from ssa_course.codegen import toolchain
    from ssa_course.codegen.aarch64 import toolchain as a64

    assert toolchain.browser_missing() is None
    monkeypatch.setattr(sys, "platform", "emscripten")
    for check in (toolchain.native_missing, toolchain.emulator_missing, a64.native_missing,
                  a64.emulator_missing, a64.qemu_missing):
        assert check() == toolchain.BROWSER_REASON, check
    assert "browser" in toolchain.BROWSER_REASON and "\n" not in toolchain.BROWSER_REASON


# --- the kernel preloads its own and the course's wheels with Pyodide -------------------

def test_preload_lists_what_the_kernel_would_install_and_no_more() -> None:
    # the kernel skips its own installs only for names in loadPyodideOptions.packages
    for name in ("micropip", "piplite", "ipykernel", "comm", "pyodide-kernel", "jedi",
                 "ipython"):
        assert name in build_lite.PRELOAD
    # the course's wheels are unpacked by the set-up cell, not before the kernel is idle
    assert not {"ssa-course", "networkx", "pydot", "ipywidgets"} & set(build_lite.PRELOAD)
    assert set(build_lite.PRELOAD) | set(build_lite.BROWSER_PACKAGES) <= \
        set(build_lite.SITE_LOCK) | set(build_lite.LOCK_ROOTS)
    assert "networkx" not in build_lite.SITE_LOCK["ssa-course"]


def test_lock_entry_of_a_site_wheel(tmp_path: Path) -> None:
    wheel = tmp_path / "pyodide_kernel-0.8.6-py3-none-any.whl"
    wheel.write_bytes(b"not really a wheel")
    entry = build_lite.lock_entry(wheel)
    assert entry["name"] == "pyodide-kernel" and entry["version"] == "0.8.6"
    assert entry["file_name"] == wheel.name and entry["imports"] == ["pyodide_kernel"]
    assert entry["depends"] == ["comm", "ipython"] and len(entry["sha256"]) == 64
    other = tmp_path / "numpy-2.0-cp314-none-any.whl"  # not one of SITE_LOCK
    other.write_bytes(b"")
    with pytest.raises(KeyError):
        build_lite.lock_entry(other)


def _run_python(code: str, seconds: int) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter that imports this checkout (from the repository's
    root), with a minimal environment; it must exit 0."""
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=seconds, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done


# --- the start page: the site opens on a way into the tour and the exercises -----------

def _site_with(tmp_path: Path, *paths: str) -> Path:
    """A stand-in site whose contents (``files/``) hold notebooks at ``paths``."""
    for rel in paths:
        (tmp_path / "files" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "files" / rel).write_text("{}")
    return tmp_path


def test_start_page_links_to_every_lesson_and_exercise_with_their_titles() -> None:
    page = build_lite.start_page(ROOT)
    links = lite_check.start_links(page)
    lessons = sorted(f"notebooks/{p.name}" for p in (ROOT / "notebooks").glob("*.ipynb"))
    exercises = sorted(f"exercises/{p.name}" for p in (ROOT / "exercises").glob("*.ipynb"))
    assert links == ["notebooks/00-tour.ipynb", *lessons, *exercises]
    assert 'id="tour" href="lab/index.html?path=notebooks/00-tour.ipynb"' in page
    assert "00 · A tour: one program through every representation" in page
    assert "*" not in page.split("<body>")[1]  # Markdown emphasis of titles dropped
    assert "practice, not grading" in page
    # every page of the site reads the root's configuration from it; nothing redirects
    assert build_lite.EMPTY_ROOT_CONFIG in page and "config-utils" not in page
    with pytest.raises(SystemExit):
        build_lite.start_page(ROOT, "<html>no configuration</html>")


def test_judge_start_page(tmp_path: Path) -> None:
    page = build_lite.start_page(ROOT)
    names = lite_check.start_links(page)
    assert lite_check.judge_start(page, _site_with(tmp_path, *names)) == []
    gone = (names[0], names[-1])  # the tour (linked twice, reported once), an exercise
    site = _site_with(tmp_path / "partial", *(n for n in names if n not in gone))
    problems = lite_check.judge_start(page, site)
    assert problems == [f"start page: links to {names[0]}, which the site does not have",
                        f"start page: links to {names[-1]}, which the site does not have"]
    bare = '<a href="lab/index.html?path=notebooks/01-quads.ipynb">01</a>'
    assert lite_check.judge_start(bare, _site_with(tmp_path / "b", "notebooks/01-quads.ipynb")) \
        == ["start page: no 'tour' link to notebooks/00-tour.ipynb",
            "start page: no link to an exercise"]


# --- the linked view driven in the tour -------------------------------------------------

def test_linked_cells_load_the_magic_and_draw_beside_a_listing() -> None:
    load, view = lite_check.linked_cells("fn main() { print(1); }")
    assert load == "%load_ext ssa_course"
    first, body = view.split("\n", 1)
    assert first == "%%tiny --show quads,cfg --linked" and body == "fn main() { print(1); }"


def test_judge_linked_wants_a_drawn_svg_and_no_notice() -> None:
    good = {"linked": True, "svgs": 3, "nodes": 5, "text": "quads cfg"}
    assert lite_check.judge_linked(good) == []
    assert lite_check.judge_linked({**good, "nodes": 0}) == [
        "linked view: 3 SVGs and no drawn node (no Graphviz drawing)"]
    assert lite_check.judge_linked({"linked": False, "text": "UsageError: no such view"}) == [
        "linked view: no linked page in the output ('UsageError: no such view')"]
    notice = {**good, "text": "cfg: Graphviz ('dot') is not installed"}
    assert lite_check.judge_linked(notice) == [
        "linked view: shows \"cfg: Graphviz ('dot') is not installed\""]
