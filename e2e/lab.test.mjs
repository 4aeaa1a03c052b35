// lab.test.mjs: memlab's browser test. For each edition (en, zh-CN) it starts
// JupyterLab as `make lab` does — the checkout's own, from .venv, on the learners'
// working copies (a workbook folder made by scripts/lab.sh sync; here a fresh one
// under build/e2e/workbook, so a learner's own workbook/ is never touched), in the
// edition's language — on a free loopback port with the project's GoNB kernel,
// drives Debian's Chromium headless through playwright-core, and for every
// notebooks/{en,zh-CN}/*.ipynb: opens its working copy, runs all cells, waits for
// the kernel to go idle, then asserts that
//   - every code cell ran (a failing cell stops Run All) and none shows an error
//     output, a Go panic, a GoNB compile error or an error line on stderr;
//   - every image in the outputs is loaded (naturalWidth > 0), and every cell tagged
//     "plot" in the notebook shows one;
//   - every heading of the notebook's own markdown is rendered;
//   - its Chinese text is drawn with a CJK font's glyphs, not boxes (the fonts
//     Chromium used for it, as CSS.getPlatformFontsForNode reports them);
// and, in the first notebook that imports memlab.dev/memlab/memlab, that Tab
// completion on `memlab.` offers memlab's exported names and Shift-Tab on
// `memlab.MustOpen` shows its documentation, in a plain cell (gopls works). For each
// edition it also checks JupyterLab's own language (the zh-CN edition's menus are
// Chinese: 文件, with CJK glyphs; the en edition's are English) and, as a learner
// would, edits a cell of a working copy and saves it with Ctrl+S: the working copy
// changes on disk, a second sync keeps the edit, and `git status --porcelain` is
// what it was before the test. Every table a notebook shows fits its output area
// with the file browser open in a 1280-px window (build/e2e/EDITION-NAME-tables.png
// shows the widest). A full-page screenshot of each executed notebook
// goes to build/e2e/EDITION-NAME.png, JupyterLab's File menu to
// build/e2e/EDITION-menu.png. The pristine notebooks are never written: autosave
// is off, and their bytes are compared before and after.
//
// Run it with e2e/run.sh (make e2e), which installs what it needs. Environment:
// CHROMIUM (default /usr/bin/chromium), E2E_NOTEBOOKS (space-separated paths,
// default notebooks/{en,zh-CN}/*.ipynb), E2E_NOTEBOOK_TIMEOUT (seconds per notebook, default
// 900), E2E_MAX_SHOT (the tallest screenshot in pixels, default 15000), E2E_MARK (a marker put into the environment of every process started, so
// that run.sh can find and stop what is left).
import { spawn, execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const OUT = path.join(REPO, "build", "e2e");
const WORKBOOK = path.join(OUT, "workbook"); // the test's own working copies
const EDITIONS = ["en", "zh-CN"];
const LAB_SH = path.join(REPO, "scripts", "lab.sh");
const CJK = /[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]/gu;
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const NOTEBOOK_TIMEOUT = 1000 * Number(process.env.E2E_NOTEBOOK_TIMEOUT || 900);
const MARK = process.env.E2E_MARK || "memlab-e2e-" + randomBytes(6).toString("hex");

// The rules of scripts/nbcheck, applied to what the browser shows.
const STDERR_BAD = /panic|^\s*(error|fatal)\b|\berror:|\bfailed\b|exit status [1-9]/im;
const OUTPUT_BAD = /panic:|goroutine \d+ \[|cannot use|undefined: |\[ERROR\]/;

const log = (...a) => console.log("e2e:", ...a);
const failures = [];
const fail = (where, what) => {
  failures.push(`${where}: ${what}`);
  console.log(`e2e: FAIL ${where}: ${what}`);
};

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const sha = (file) => createHash("sha256").update(fs.readFileSync(file)).digest("hex");

// headingsOf returns the headings of a notebook's markdown cells (outside code fences).
function headingsOf(nb) {
  const out = [];
  for (const c of nb.cells) {
    if (c.cell_type !== "markdown") continue;
    let fence = false;
    for (const line of [].concat(c.source).join("").split("\n")) {
      if (/^\s*(```|~~~)/.test(line)) fence = !fence;
      const m = !fence && /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
      if (m) out.push(m[1]);
    }
  }
  return out;
}

// norm keeps the letters and digits of a heading, so that markdown (links, code,
// emphasis) and the rendered text (with its ¶ anchor) compare equal.
const norm = (s) =>
  s
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[^\p{L}\p{N}]+/gu, "")
    .toLowerCase();

// memlabNames lists the exported names of package memlab, as go doc prints them.
function memlabNames() {
  const doc = execFileSync("go", ["doc", "-short", "./memlab"], { cwd: REPO, encoding: "utf8" });
  const names = new Set();
  for (const line of doc.split("\n")) {
    const m = /^\s*(?:func|type|const|var)\s+(?:\([^)]*\)\s*)?([A-Z]\w*)/.exec(line);
    if (m) names.add(m[1]);
  }
  if (names.size === 0) throw new Error("go doc -short ./memlab listed no names");
  return names;
}

// labEnv is the environment of scripts/lab.sh as the test runs it: the test's
// workbook, the edition, the marker.
const labEnv = (edition) => ({ ...process.env, E2E_MARK: MARK, MEMLAB_WORKBOOK: WORKBOOK, EDITION: edition });

// gitStatus is `git status --porcelain` of the checkout.
const gitStatus = () => execFileSync("git", ["status", "--porcelain"], { cwd: REPO, encoding: "utf8" });

async function startLab(edition, port, token, settings, workspaces) {
  const env = {
    ...labEnv(edition),
    JUPYTER_CONFIG_DIR: path.join(OUT, "jupyter-config"),
    JUPYTERLAB_SETTINGS_DIR: settings,
    JUPYTERLAB_WORKSPACES_DIR: workspaces,
  };
  fs.mkdirSync(env.JUPYTER_CONFIG_DIR, { recursive: true });
  // The server make lab runs (scripts/lab.sh server), plus what a test needs: the
  // app object in the page (to read cell models), no notebook signatures on disk,
  // no news or update checks.
  const args = [
    "server",
    String(port),
    token,
    "--LabApp.expose_app_in_browser=True",
    "--NotebookNotary.db_file=:memory:",
    `--FileCheckpoints.checkpoint_dir=${path.join(OUT, "checkpoints")}`, // not beside the notebooks
    "--LabApp.news_url=",
    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
  ];
  const logFile = path.join(OUT, `jupyterlab-${edition}.log`);
  const fd = fs.openSync(logFile, "w");
  const child = spawn(LAB_SH, args, {
    env,
    stdio: ["ignore", fd, fd],
    detached: true,
  });
  fs.closeSync(fd);
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`JupyterLab exited with ${child.exitCode} (log: ${logFile})`);
    try {
      const r = await fetch(`${base}/api/status?token=${token}`);
      if (r.ok) break;
    } catch {}
    if (Date.now() > deadline) throw new Error(`JupyterLab did not answer within 120 s (log: ${logFile})`);
    await new Promise((r) => setTimeout(r, 500));
  }
  const version = execFileSync(LAB_SH, ["exec", "lab", "--version"], {
    encoding: "utf8",
  }).trim();
  log(`${edition}: JupyterLab ${version} on ${base}, on ${path.relative(REPO, WORKBOOK)} (log: ${path.relative(REPO, logFile)})`);
  return { child, base, logFile };
}

async function stopLab(lab) {
  if (!lab || lab.child.exitCode !== null) return;
  const gone = new Promise((r) => lab.child.once("exit", r));
  try {
    process.kill(lab.child.pid, "SIGTERM"); // the server shuts its kernels down
  } catch {}
  const t = setTimeout(() => {
    try {
      process.kill(-lab.child.pid, "SIGKILL");
    } catch {}
  }, 20_000);
  await gone;
  clearTimeout(t);
}

async function api(base, token, method, p) {
  const r = await fetch(`${base}${p}`, { method, headers: { Authorization: `token ${token}` } });
  if (!r.ok && r.status !== 204) throw new Error(`${method} ${p}: HTTP ${r.status}`);
  return r.status === 204 ? null : r.json();
}

// panelState reads the current notebook panel through the app object: its
// kernel, and each cell's type, source, execution count and outputs (nbformat).
const panelState = () => {
  const w = window.jupyterapp?.shell.currentWidget;
  const k = w?.sessionContext?.session?.kernel;
  return {
    label: w?.title.label,
    kernel: k ? { name: k.name, status: k.status, connection: k.connectionStatus } : null,
    cells: (w?.content?.widgets || []).map((c) => ({
      type: c.model.type,
      source: c.model.sharedModel.getSource(),
      running: c.model.type === "code" && c.model.executionState === "running",
      count: c.model.type === "code" ? c.model.executionCount : null,
      outputs: c.model.type === "code" ? c.model.outputs.toJSON() : [],
    })),
  };
};

// shotName names a notebook's screenshots and workspace: its edition and name,
// en-02-memory-mechanics.
function shotName(file) {
  return `${path.basename(path.dirname(file))}-${path.basename(file, ".ipynb")}`;
}

// openNotebook opens the working copy REL (en/02-….ipynb, relative to the
// server's root, the workbook) in a fresh workspace and waits for its GoNB kernel.
async function openNotebook(page, base, token, rel, workspace) {
  await page.goto(`${base}/lab/workspaces/${workspace}/tree/${rel.split(path.sep).map(encodeURIComponent).join("/")}?reset&token=${token}`);
  await page.waitForSelector(".jp-NotebookPanel .jp-Notebook .jp-Cell", { timeout: 120_000 });
  // The notebook alone, as wide as the window: no file browser beside it.
  await page.evaluate(() => window.jupyterapp.shell.collapseLeft());
  // The kernel must be GoNB's and connected. (Its status may still read "Unknown":
  // GoNB publishes a status only in reply to a request, and can send the "busy" of
  // kernel_info after its "idle"; the first execution settles it.)
  await page.waitForFunction(
    (label) => {
      const w = window.jupyterapp?.shell.currentWidget;
      const k = w?.sessionContext?.session?.kernel;
      return w?.title.label === label && k?.connectionStatus === "connected";
    },
    path.basename(rel),
    { timeout: 120_000 },
  );
}

// clickMenuCommand finds the menu of the menu bar that holds COMMAND and clicks
// its item, by the labels the page shows (in the UI's language), as a user would.
async function clickMenuCommand(page, command) {
  const where = await page.evaluate((command) => {
    const app = window.jupyterapp;
    for (const area of ["menu", "top"])
      for (const w of app.shell.widgets(area))
        for (const m of w.menus || [])
          if (m.items.some((i) => i.command === command)) return { menu: m.title.label, item: app.commands.label(command) };
    return null;
  }, command);
  if (!where) {
    const seen = await page.evaluate(() =>
      ["menu", "top"].map((a) => `${a}: ${[...window.jupyterapp.shell.widgets(a)].map((w) => `${w.id}(${(w.menus || []).map((m) => m.title.label + ":" + m.items.map((i) => i.command).join("|")).join("; ")})`).join(", ")}`),
    );
    throw new Error(`no menu of the menu bar holds ${command}: ${seen.join(" / ")}`);
  }
  await page.locator(".lm-MenuBar-item", { hasText: where.menu }).first().click();
  await page.getByRole("menuitem", { name: where.item, exact: true }).click();
}

// runNotebook opens the working copy of one notebook, runs all its cells and
// checks what it shows.
async function runNotebook(page, cdp, base, token, file, probeCompletion, names) {
  const rel = path.relative(path.join(REPO, "notebooks"), file); // en/02-….ipynb, in the workbook as in notebooks/
  const name = shotName(file);
  const nb = JSON.parse(fs.readFileSync(file, "utf8"));
  const t0 = Date.now();
  await openNotebook(page, base, token, rel, `e2e-${name}`);
  let st = await page.evaluate(panelState);
  if (st.kernel.name !== "gonb") fail(name, `kernel is ${st.kernel.name}, not gonb`);
  // Run > Run All Cells, as a user would.
  await clickMenuCommand(page, "runmenu:run-all");
  await page.waitForFunction(
    () => window.jupyterapp.shell.currentWidget.content.widgets.some((c) => c.model.type === "code" && (c.model.executionState === "running" || c.model.executionCount != null)),
    null,
    { timeout: 60_000 },
  );
  // Wait for the kernel to go idle with no cell queued or running.
  await page.waitForFunction(
    () => {
      const w = window.jupyterapp.shell.currentWidget;
      const busy = w.content.widgets.some((c) => c.model.type === "code" && c.model.executionState === "running");
      return !busy && w.sessionContext.session?.kernel?.status === "idle";
    },
    null,
    { timeout: NOTEBOOK_TIMEOUT, polling: 1000 },
  );
  await page.waitForTimeout(1000); // outputs that arrive with the idle message
  const ran = ((Date.now() - t0) / 1000).toFixed(0);
  st = await page.evaluate(panelState);

  // What the page shows of each cell, in notebook order.
  const shown = await page.$$eval(".jp-NotebookPanel .jp-Notebook .jp-Cell", (els) =>
    els.map((el) => ({
      gonbErrors: [...el.querySelectorAll(".jp-OutputArea-output .gonb-err-location")].map((e) => e.closest(".jp-OutputArea-output").innerText),
      images: [...el.querySelectorAll(".jp-OutputArea-output img")].map((i) => ({ complete: i.complete, w: i.naturalWidth, h: i.naturalHeight })),
      svgs: [...el.querySelectorAll(".jp-OutputArea-output svg")].filter((s) => {
        const b = s.getBoundingClientRect();
        return b.width > 0 && b.height > 0;
      }).length,
      headings: [...el.querySelectorAll(".jp-RenderedMarkdown :is(h1, h2, h3, h4, h5, h6)")].map((h) => h.textContent),
    })),
  );
  if (st.cells.length !== nb.cells.length || shown.length !== nb.cells.length) {
    fail(name, `the page shows ${shown.length} cells (model: ${st.cells.length}), the notebook has ${nb.cells.length}`);
  }
  const first = (t) => String(t).trim().split("\n")[0];
  let images = 0;
  let codeCells = 0;
  nb.cells.forEach((c, i) => {
    const m = st.cells[i];
    const dom = shown[i];
    if (!m || !dom || c.cell_type !== "code") return;
    const where = `${name} cell ${i}`;
    if ([].concat(c.source).join("").trim() === "") return;
    if ((c.metadata?.tags || []).includes("exercise-check")) return; // a stub fails its tests: solveExercise checks these
    codeCells++;
    if (m.count == null) fail(where, "never ran");
    for (const o of m.outputs) {
      const text = [].concat(o.text ?? "").join("");
      const data = Object.entries(o.data || {})
        .filter(([k]) => k.startsWith("text/"))
        .map(([, v]) => [].concat(v).join(""))
        .join("\n");
      if (o.output_type === "error") fail(where, `error output ${o.ename}: ${first(o.evalue)}`);
      else if (o.output_type === "stream" && o.name === "stderr" && STDERR_BAD.test(text)) fail(where, `stderr: ${first(text)}`);
      else if (OUTPUT_BAD.test(text + "\n" + data)) {
        const all = text + "\n" + data;
        fail(where, `output looks like a failure: ${first(all.slice(all.search(OUTPUT_BAD)))}`);
      }
    }
    for (const e of dom.gonbErrors) fail(where, `GoNB error: ${first(e)}`);
    dom.images.forEach((im, k) => {
      if (!im.complete || im.w === 0 || im.h === 0) fail(where, `image ${k} is not loaded (naturalWidth ${im.w})`);
    });
    const n = dom.images.filter((im) => im.w > 0).length + dom.svgs;
    images += n;
    if ((c.metadata?.tags || []).includes("plot") && n === 0) fail(where, `tagged "plot" but shows no image`);
  });
  const rendered = new Set(shown.flatMap((c) => c.headings).map(norm));
  const expected = headingsOf(nb);
  for (const h of expected) if (!rendered.has(norm(h))) fail(name, `heading ${JSON.stringify(h)} is not rendered`);
  log(`${name}: ${codeCells} code cells ran in ${ran}s; ${images} images loaded; ${expected.length} headings rendered`);

  const cjk = await checkGlyphs(page, cdp, name, ".jp-NotebookPanel .jp-Notebook");
  if (cjk.runs > 0) log(`${name}: ${cjk.chars} Chinese characters in ${cjk.runs} text runs drawn with ${cjk.fonts.join(", ")}`);
  if (path.basename(path.dirname(file)) === "zh-CN" && cjk.runs === 0) fail(name, "the Chinese edition shows no Chinese text");

  if (probeCompletion) await checkCompletion(page, name, names);
  await checkExplore(page, name);
  await solveExercise(page, name, nb, st);
  await checkTablesFit(page, name);

  await screenshot(page, name);
}

// checkExplore moves the slider of each explorable allocator history (package
// explore) the notebook shows, as a user would — focus it, press Home — and
// checks that the view follows: its script ran (the slider shows), and the
// event line, the segment map and the curve's cursor all change. It
// screenshots the first view after the move to build/e2e/NAME-explore.png.
async function checkExplore(page, name) {
  const views = page.locator(".jp-OutputArea-output .memlab-explore");
  const n = await views.count();
  for (let k = 0; k < n; k++) {
    const where = `${name} explorable view ${k}`;
    const view = views.nth(k);
    const slider = view.locator(".memlab-explore-slider");
    if (!(await slider.isVisible())) {
      fail(where, "its slider is not shown (the view's script did not run)");
      continue;
    }
    const state = () =>
      view.evaluate((v) => ({
        value: v.querySelector(".memlab-explore-slider").value,
        label: v.querySelector(".memlab-explore-label").textContent,
        map: v.querySelector(".memlab-explore-map").src,
        cursor: v.querySelector(".memlab-explore-cursor").style.left,
      }));
    const before = await state();
    await slider.scrollIntoViewIfNeeded();
    await slider.focus();
    await page.keyboard.press(before.value === "0" ? "End" : "Home");
    await page.waitForTimeout(200);
    const after = await state();
    if (after.value === before.value) fail(where, `the slider did not move from ${before.value}`);
    for (const part of ["label", "map", "cursor"]) {
      if (after[part] === before[part]) fail(where, `moving the slider from ${before.value} to ${after.value} left the ${part} as it was (${String(before[part]).slice(0, 60)})`);
    }
    log(`${where}: slider ${before.value} → ${after.value}: "${before.label}" → "${after.label}"`);
    if (k === 0) {
      // A view taller than the window is cut by the notebook's scroller: make
      // the window tall enough for it first.
      const vp = page.viewportSize();
      const box = await view.boundingBox();
      if (box && box.height + 250 > vp.height) await page.setViewportSize({ width: vp.width, height: Math.ceil(box.height) + 250 });
      await view.scrollIntoViewIfNeeded();
      await page.waitForTimeout(300);
      await view.screenshot({ path: path.join(OUT, `${name}-explore.png`) });
      await page.setViewportSize(vp);
    }
  }
}

// checkTablesFit opens the file browser beside the notebook, as a learner works,
// in a window 1280 px wide (the narrow end of a laptop's screen), and fails for
// every table or preformatted block a cell shows as HTML that is wider than its
// output area (memlab.OutputWidth is what the notebooks promise to fit). The
// view with the file browser open, scrolled to the cell with the most table
// columns, goes to build/e2e/NAME-tables.png.
async function checkTablesFit(page, name) {
  const vp = page.viewportSize();
  await page.setViewportSize({ width: 1280, height: vp.height });
  await page.evaluate(() => window.jupyterapp.commands.execute("filebrowser:activate"));
  await page.waitForTimeout(1000); // the layout settles
  const r = await page.evaluate(() => {
    const cells = [...document.querySelectorAll(".jp-NotebookPanel .jp-Notebook .jp-Cell")];
    const shown = [];
    cells.forEach((c, i) => {
      // HTML outputs (an output element is itself .jp-RenderedHTMLCommon); not the
      // <pre> of printed text, which wraps
      for (const t of c.querySelectorAll(".jp-OutputArea-output:is(.jp-RenderedHTMLCommon, :has(> .jp-RenderedHTMLCommon)) :is(table, pre)")) {
        const area = t.closest(".jp-OutputArea-output").getBoundingClientRect();
        const b = t.getBoundingClientRect();
        shown.push({ cell: i, tag: t.tagName.toLowerCase(), width: Math.round(Math.max(b.width, t.scrollWidth)), room: Math.round(area.right - b.left), columns: t.rows?.[0]?.cells.length || 0 });
      }
    });
    const left = document.querySelector("#jp-left-stack");
    return { browser: left && !left.classList.contains("lm-mod-hidden") ? Math.round(left.getBoundingClientRect().width) : 0, shown };
  });
  if (r.browser === 0) fail(name, "the file browser did not open beside the notebook");
  // Every table the outputs hold is measured (no selector missed them).
  const inModel = (await page.evaluate(panelState)).cells.flatMap((c) => c.outputs).map((o) => [].concat(o.data?.["text/html"] ?? "").join("")).join("").split("<table").length - 1;
  const measured = r.shown.filter((t) => t.tag === "table").length;
  if (measured !== inModel) fail(name, `${inModel} HTML tables in the outputs, ${measured} measured on the page`);
  for (const t of r.shown) if (t.width > t.room) fail(`${name} cell ${t.cell}`, `a ${t.tag} ${t.width} px wide in an output area of ${t.room} px (1280-px window, file browser open)`);
  const widest = r.shown.filter((t) => t.tag === "table").sort((a, b) => b.columns - a.columns)[0];
  if (widest) {
    await page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").nth(widest.cell).evaluate((el) => el.scrollIntoView({ block: "start" }));
    await page.waitForTimeout(300);
    await page.screenshot({ path: path.join(OUT, `${name}-tables.png`) });
  }
  log(`${name}: ${r.shown.length} tables and preformatted blocks fit beside the file browser (${r.browser} px) in a 1280-px window${widest ? `; build/e2e/${name}-tables.png shows cell ${widest.cell}` : ""}`);
  await page.evaluate(() => window.jupyterapp.shell.collapseLeft());
  await page.setViewportSize(vp);
}

// solveExercise checks a notebook's exercise cells (a "%%writefile
// ${MEMLAB_WORKBOOK}/exercises/…" cell holding the learner's code, then a cell tagged
// "exercise-check" running the official tests on it): after Run All each check
// shows a verdict, the untouched stub's being TODO with no error beside it. Then it solves exercise 17 as
// a learner would: the reference solution goes into the code cell's editor, the
// two cells run, and the check must say PASS. The notebook on disk is not saved.
async function solveExercise(page, name, nb, st) {
  const src = (c) => [].concat(c.source).join("");
  const checks = nb.cells.map((c, i) => i).filter((i) => (nb.cells[i].metadata?.tags || []).includes("exercise-check"));
  if (checks.length === 0) return;
  const text = (outputs) => outputs.map((o) => [].concat(o.text ?? "").join("") + Object.values(o.data || {}).map((v) => [].concat(v).join("")).join("")).join("");
  for (const i of checks) {
    const shown = text(st.cells[i]?.outputs || []);
    if (!/^TODO  (exercise \d+ is not started|练习 \d+ 还没有开始)/m.test(shown)) fail(`${name} cell ${i}`, `the stub's check does not say TODO: ${shown.trim().split("\n").pop()}`);
    // Not started is calm: no error box (exit status) beside the TODO.
    if (/exit status/.test(shown) || (st.cells[i]?.outputs || []).some((o) => o.output_type === "error")) fail(`${name} cell ${i}`, "the stub's check shows an error (exit status) beside its TODO");
  }
  const code = nb.cells.findIndex((c) => src(c).startsWith("%%writefile ${MEMLAB_WORKBOOK}/exercises/17-inplace-block/block.go"));
  if (code < 0 || !checks.includes(code + 1)) return fail(name, "no code cell and check cell for exercise 17");
  const solution = fs.readFileSync(path.join(REPO, "exercises", "17-inplace-block", "block_solution.go"), "utf8").replace(/^\/\/go:build solution\n\n/, "");
  const cell = src(nb.cells[code]).split("\n")[0] + "\n" + solution;
  await page.evaluate(async ([i, source]) => {
    const w = window.jupyterapp.shell.currentWidget;
    w.content.widgets[i].model.sharedModel.setSource(source);
    w.content.activeCellIndex = i;
    await window.jupyterapp.commands.execute("notebook:run-cell-and-select-next");
    await window.jupyterapp.commands.execute("notebook:run-cell-and-select-next");
  }, [code, cell]);
  await page.waitForFunction(
    ([i, before]) => {
      const w = window.jupyterapp.shell.currentWidget;
      const c = w.content.widgets[i].model;
      return c.executionCount > before && c.executionState !== "running" && w.sessionContext.session?.kernel?.status === "idle" && /(PASS|TODO|FAIL|REJECTED)  /.test(JSON.stringify(c.outputs.toJSON()));
    },
    [code + 1, st.cells[code + 1].count ?? 0],
    { timeout: NOTEBOOK_TIMEOUT, polling: 1000 },
  );
  const after = await page.evaluate(panelState);
  const verdict = text(after.cells[code + 1].outputs);
  if (!/^PASS  (all \d+ cases of exercise 17 pass|练习 17 的全部 \d+ 个用例通过)/m.test(verdict)) fail(`${name} cell ${code + 1}`, `exercise 17 solved in the cell does not pass: ${verdict.trim().split("\n").slice(-3).join(" | ")}`);
  else log(`${name}: exercise 17 solved in the notebook: ${verdict.match(/^PASS.*$/m)[0]}`);
  await page.screenshot({ path: path.join(OUT, `${name}-exercise-17.png`) });
}

// checkNoNews: the lab's settings (scripts/lab.sh lab_settings, as make lab ships
// them) turn JupyterLab's news pop-up and update check off.
async function checkNoNews(base, token, edition) {
  const s = await api(base, token, "GET", "/lab/api/settings/@jupyterlab/apputils-extension:notification");
  // Overrides change the schema's defaults; a learner's own settings would win.
  const value = (k) => (s.settings && k in s.settings ? s.settings[k] : s.schema?.properties?.[k]?.default);
  const c = { fetchNews: value("fetchNews"), checkForUpdates: value("checkForUpdates") };
  if (c.fetchNews !== "false" || c.checkForUpdates !== false)
    fail(`${edition} settings`, `JupyterLab's news pop-up is not off: fetchNews ${JSON.stringify(c.fetchNews)}, checkForUpdates ${JSON.stringify(c.checkForUpdates)}`);
  else log(`${edition}: JupyterLab's news pop-up and update check are off`);
}

// checkTooltip types `memlab.MustOpen` into the probe cell (a plain `%%` cell) and
// presses Shift-Tab: GoNB asks gopls, and the tooltip must show MustOpen's signature.
async function checkTooltip(page, name) {
  let tip = "";
  for (let attempt = 1; attempt <= 4 && !tip; attempt++) {
    await page.click(".jp-NotebookPanel .jp-Cell:last-child .cm-content");
    await page.keyboard.press("Control+A");
    await page.keyboard.insertText("%%\nl := memlab.MustOpen");
    await page.keyboard.press("Shift+Tab");
    try {
      await page.waitForSelector(".jp-Tooltip", { timeout: 20_000 });
      tip = await page.$eval(".jp-Tooltip", (e) => e.textContent.trim());
    } catch {
      log(`${name}: no Shift-Tab tooltip yet (attempt ${attempt}); asking again`);
    }
    await page.keyboard.press("Escape");
  }
  if (!/MustOpen/.test(tip)) fail(`${name} Shift-Tab`, `Shift-Tab on \`memlab.MustOpen\` showed ${tip ? `"${tip.slice(0, 80)}"` : "no tooltip"}`);
  else log(`${name}: Shift-Tab on \`memlab.MustOpen\` shows "${tip.split("\n")[0].slice(0, 70)}"`);
}

// checkCompletion adds a cell below the last one, types `memlab.` and presses Tab:
// GoNB asks gopls, and the completer must list memlab's exported names.
async function checkCompletion(page, name, names) {
  const where = `${name} completion`;
  await page.evaluate(async () => {
    const app = window.jupyterapp;
    const nb = app.shell.currentWidget.content;
    nb.activeCellIndex = nb.widgets.length - 1;
    await app.commands.execute("notebook:insert-cell-below");
    await app.commands.execute("notebook:change-cell-to-code");
    await app.commands.execute("notebook:enter-edit-mode");
  });
  await page.waitForSelector(".jp-NotebookPanel .jp-Cell:last-child .cm-content[contenteditable=true]");
  await page.click(".jp-NotebookPanel .jp-Cell:last-child .cm-content");
  let items = [];
  const deadline = Date.now() + 240_000; // gopls loads the workspace on first use
  for (let attempt = 1; Date.now() < deadline; attempt++) {
    // (Re)write the probe, so that a Tab taken as an indent leaves nothing behind.
    await page.keyboard.press("Control+A");
    await page.keyboard.insertText("%%\nfmt.Println(memlab.");
    await page.keyboard.press("Tab");
    try {
      await page.waitForSelector(".jp-Completer .jp-Completer-item", { timeout: 30_000 });
      items = await page.$$eval(".jp-Completer .jp-Completer-item", (els) =>
        els.map((e) => (e.querySelector(".jp-Completer-match")?.textContent || e.textContent).trim()),
      );
      break;
    } catch {
      log(`${name}: no completion yet (attempt ${attempt}); asking again`);
      await page.keyboard.press("Escape");
      await page.click(".jp-NotebookPanel .jp-Cell:last-child .cm-content");
    }
  }
  await page.screenshot({ path: path.join(OUT, `${name}-completion.png`) });
  await page.keyboard.press("Escape");
  if (items.length === 0) {
    fail(where, "Tab on `memlab.` offered nothing (is gopls installed in .venv/bin?)");
    return;
  }
  const foreign = items.filter((i) => !names.has(i));
  log(`${name}: Tab on \`memlab.\` offered ${items.length} names, e.g. ${items.slice(0, 6).join(", ")}`);
  if (items.length < 3) fail(where, `only ${items.length} completions: ${items.join(", ")}`);
  if (foreign.length > 0) fail(where, `completions that are not memlab's exported names: ${foreign.join(", ")}`);
  await checkTooltip(page, name);
  // Leave the probe cell out of the screenshot.
  await page.keyboard.press("Escape");
  await page.keyboard.press("d");
  await page.keyboard.press("d");
}

// A font family that has Chinese glyphs (fonts-noto-cjk, which e2e/run.sh
// installs, and the other common ones).
const CJK_FONT = /CJK|Source Han|WenQuanYi|Droid Sans Fallback|AR PL/i;

// checkGlyphs checks that the Chinese text under ROOT (a selector) is drawn with
// real glyphs: for up to MAX elements whose own text holds Chinese characters, the
// fonts Chromium used for that text (CSS.getPlatformFontsForNode) must include a
// CJK font drawing at least as many glyphs as the text has Chinese characters —
// a character no installed font has is drawn as a box by some other font. It
// returns how many runs and characters it checked and the fonts that drew them.
async function checkGlyphs(page, cdp, where, root, max = 40) {
  const n = await page.evaluate(
    ({ root, max, cjk }) => {
      const re = new RegExp(cjk, "u");
      document.querySelectorAll("[data-e2e-cjk]").forEach((e) => e.removeAttribute("data-e2e-cjk"));
      const els = new Set();
      for (const r of document.querySelectorAll(root)) {
        const walk = document.createTreeWalker(r, NodeFilter.SHOW_TEXT);
        for (let t = walk.nextNode(); t && els.size < max; t = walk.nextNode()) {
          const el = t.parentElement;
          // Text the page does not draw has no fonts to check: a collapsed
          // <details> answer (its summary shows) or anything else hidden.
          const hidden = (el.closest("details:not([open])") && !el.closest("summary")) || (el.checkVisibility && !el.checkVisibility());
          if (re.test(t.data) && el.getClientRects().length > 0 && !hidden) els.add(el);
        }
      }
      let k = 0;
      for (const el of els) el.setAttribute("data-e2e-cjk", String(k++));
      return k;
    },
    { root, max, cjk: CJK.source },
  );
  const out = { runs: 0, chars: 0, fonts: [] };
  if (n === 0) return out;
  const { root: doc } = await cdp.send("DOM.getDocument", { depth: -1 });
  const { nodeIds } = await cdp.send("DOM.querySelectorAll", { nodeId: doc.nodeId, selector: "[data-e2e-cjk]" });
  const fonts = new Set();
  const boxes = [];
  for (const nodeId of nodeIds) {
    const { attributes } = await cdp.send("DOM.getAttributes", { nodeId });
    const k = attributes[attributes.indexOf("data-e2e-cjk") + 1];
    const text = await page.evaluate(
      (k) => [...document.querySelector(`[data-e2e-cjk="${k}"]`).childNodes].filter((c) => c.nodeType === 3).map((c) => c.data).join(""),
      k,
    );
    const chars = (text.match(CJK) || []).length;
    const { fonts: used } = await cdp.send("CSS.getPlatformFontsForNode", { nodeId });
    const glyphs = used.filter((f) => CJK_FONT.test(f.familyName)).reduce((a, f) => a + f.glyphCount, 0);
    used.filter((f) => CJK_FONT.test(f.familyName)).forEach((f) => fonts.add(f.familyName));
    if (glyphs < chars)
      boxes.push(`${JSON.stringify(text.trim().slice(0, 40))}: ${chars} Chinese characters, ${glyphs} glyphs from a CJK font (fonts used: ${used.map((f) => `${f.familyName} ${f.glyphCount}`).join(", ")})`);
    out.runs++;
    out.chars += chars;
  }
  // The first three, and how many more: without a CJK font every run fails alike.
  for (const b of boxes.slice(0, 3)) fail(where, b);
  if (boxes.length > 3) fail(where, `${boxes.length - 3} more text runs of Chinese drawn without a CJK font (is fonts-noto-cjk installed?)`);
  out.fonts = [...fonts];
  return out;
}

// checkUI checks JupyterLab's own language: the zh-CN edition's menus are in
// Chinese (文件, drawn with CJK glyphs), the en edition's in English; it
// screenshots the File menu open to build/e2e/EDITION-menu.png.
async function checkUI(page, cdp, edition) {
  const where = `${edition} JupyterLab UI`;
  const labels = await page.$$eval(".lm-MenuBar-item", (els) => els.map((e) => e.textContent.trim()));
  const want = edition === "zh-CN" ? "文件" : "File";
  if (!labels.some((l) => l.startsWith(want))) fail(where, `the menu bar shows ${labels.join(", ")}: no ${want}`);
  else log(`${where}: menu bar ${labels.join(" ")}`);
  if (edition === "zh-CN") await checkGlyphs(page, cdp, where, ".lm-MenuBar");
  await page.locator(".lm-MenuBar-item").first().click();
  await page.waitForSelector(".lm-Menu .lm-Menu-item", { timeout: 10_000 });
  if (edition === "zh-CN") {
    const g = await checkGlyphs(page, cdp, `${where} (File menu)`, ".lm-Menu");
    if (g.runs === 0) fail(where, "the File menu shows no Chinese");
  }
  await page.screenshot({ path: path.join(OUT, `${edition}-menu.png`) });
  await page.keyboard.press("Escape");
}

// checkLearnerEdit does what a learner does: opens a working copy, types into
// its first code cell and saves with Ctrl+S. The copy must change on disk (it is
// what JupyterLab writes), a second `scripts/lab.sh sync` must keep the edit, and
// `git status --porcelain` must still read what it read before the test.
async function checkLearnerEdit(page, base, token, edition, rel, gitBefore) {
  const where = `${edition} learner's edit`;
  const file = path.join(WORKBOOK, rel);
  const before = fs.readFileSync(file, "utf8");
  await openNotebook(page, base, token, rel, `e2e-edit-${edition}`);
  const marker = `// a learner's edit, ${edition} ${randomBytes(4).toString("hex")}`;
  await page.locator(".jp-NotebookPanel .jp-CodeCell .cm-content").first().click();
  await page.keyboard.press("Control+End");
  await page.keyboard.insertText("\n" + marker);
  await page.keyboard.press("Control+s");
  let after = before;
  for (const deadline = Date.now() + 30_000; after === before && Date.now() < deadline; ) {
    await page.waitForTimeout(250);
    after = fs.readFileSync(file, "utf8");
  }
  const saved = () => JSON.parse(fs.readFileSync(file, "utf8")).cells.some((c) => [].concat(c.source).join("").includes(marker));
  if (after === before) return fail(where, `Ctrl+S did not change ${path.relative(REPO, file)}`);
  if (!saved()) return fail(where, `${path.relative(REPO, file)} changed, but not with the edit`);
  const sync = execFileSync(LAB_SH, ["sync"], { env: labEnv(edition), encoding: "utf8" });
  if (!saved()) fail(where, `scripts/lab.sh sync overwrote the edited ${path.relative(REPO, file)}`);
  if (!/edited by you/.test(sync)) fail(where, `scripts/lab.sh sync does not count the edit: ${sync.trim()}`);
  const git = gitStatus();
  if (git !== gitBefore) fail(where, `git status --porcelain changed:\n${git}`);
  log(`${where}: Ctrl+S wrote ${path.relative(REPO, file)}; sync kept it; git status --porcelain unchanged (${git === "" ? "empty" : git.trim().split("\n").length + " lines, as before"})`);
}

// screenshot grows the viewport to the notebook's whole height, so that one
// screenshot shows every cell (a notebook taller than MAX_SHOT pixels gets several,
// NAME-1.png, NAME-2.png, …), then restores it.
const MAX_SHOT = Number(process.env.E2E_MAX_SHOT || 15_000);
async function screenshot(page, name) {
  const vp = page.viewportSize();
  const scroller = ".jp-NotebookPanel .jp-WindowedPanel-outer";
  const { total, client } = await page.$eval(scroller, (el) => ({ total: el.scrollHeight, client: el.clientHeight }));
  const chrome = vp.height - client; // menus, toolbar and status bar around the notebook
  const shots = Math.ceil(total / MAX_SHOT);
  const per = Math.ceil(total / shots);
  await page.setViewportSize({ width: vp.width, height: per + chrome });
  await page.waitForTimeout(1000);
  const files = [];
  for (let k = 0; k < shots; k++) {
    await page.$eval(scroller, (el, top) => (el.scrollTop = top), k * per);
    await page.waitForTimeout(500);
    const file = shots === 1 ? `${name}.png` : `${name}-${k + 1}.png`;
    await page.screenshot({ path: path.join(OUT, file) });
    files.push(`build/e2e/${file}`);
  }
  await page.setViewportSize(vp);
  log(`${name}: screenshot${shots > 1 ? "s" : ""} ${files.join(", ")} (${vp.width}×${per + chrome})`);
}

// checkSlideshow opens one notebook as its RISE slideshow (jupyterlab-rise's own
// page, /rise/PATH: what the toolbar's slideshow button shows) and screenshots
// its first two slides, build/e2e/slides-NAME-1.png and -2.png: the Chinese
// edition of notebook 02 when the run has it. The slides must be those the
// generator's slide types make (one per "slide" cell), the first showing the
// notebook's title. all are the run's notebooks, served those the running
// server has: it does nothing unless the chosen one is served, so a loop over
// servers (one per edition) can call it for each. PATH is the notebook's path
// under notebooks/, as the server serves it.
async function checkSlideshow(page, base, token, served, all) {
  const pick =
    all.find((f) => f.endsWith(path.join("zh-CN", "02-memory-mechanics.ipynb"))) ||
    all.find((f) => f.endsWith("02-memory-mechanics.ipynb")) ||
    all[0];
  if (!served.includes(pick)) return;
  const name = shotName(pick);
  const where = `${name} slideshow`;
  try {
    const nb = JSON.parse(fs.readFileSync(pick, "utf8"));
    const want = nb.cells.filter((c) => c.metadata?.slideshow?.slide_type === "slide").length;
    const rel = path.relative(path.join(REPO, "notebooks"), pick).split(path.sep).map(encodeURIComponent).join("/");
    await page.goto(`${base}/rise/${rel}?token=${token}`);
    await page.waitForSelector(".reveal .slides > section", { timeout: 120_000 });
    await page.waitForTimeout(3000); // reveal.js lays the slides out and fades in
    const st = await page.evaluate(() => ({
      slides: document.querySelectorAll(".reveal .slides > section").length,
      title: document.querySelector(".reveal .slides section.present :is(h1, h2)")?.textContent || "",
    }));
    const title = headingsOf(nb)[0] || "";
    if (st.slides !== want) fail(where, `${st.slides} slides, the notebook has ${want} cells of slide type "slide"`);
    if (norm(st.title) !== norm(title)) fail(where, `the first slide shows ${JSON.stringify(st.title)}, not the title ${JSON.stringify(title)}`);
    const shots = [];
    for (let k = 1; k <= 2; k++) {
      const file = `slides-${name}-${k}.png`;
      await page.screenshot({ path: path.join(OUT, file) });
      shots.push(`build/e2e/${file}`);
      await page.keyboard.press("ArrowRight"); // the next slide
      await page.waitForTimeout(1500);
    }
    log(`${name}: slideshow of ${st.slides} slides; screenshots ${shots.join(", ")}`);
  } catch (e) {
    fail(where, e.message.split("\n")[0]);
    await page.screenshot({ path: path.join(OUT, `slides-${name}-failed.png`) }).catch(() => {});
  }
}

async function main() {
  fs.mkdirSync(OUT, { recursive: true });
  for (const f of fs.readdirSync(OUT)) if (f.endsWith(".png")) fs.rmSync(path.join(OUT, f)); // this run's only
  const files = (process.env.E2E_NOTEBOOKS || "")
    .split(/\s+/)
    .filter(Boolean)
    .map((f) => path.resolve(REPO, f));
  if (files.length === 0) {
    for (const ed of ["en", "zh-CN"]) {
      const dir = path.join(REPO, "notebooks", ed);
      if (!fs.existsSync(dir)) continue;
      for (const f of fs.readdirSync(dir).sort()) if (f.endsWith(".ipynb")) files.push(path.join(dir, f));
    }
  }
  if (files.length === 0) throw new Error("no notebooks/{en,zh-CN}/*.ipynb");
  for (const f of files)
    if (path.dirname(path.dirname(f)) !== path.join(REPO, "notebooks") || !EDITIONS.includes(path.basename(path.dirname(f))))
      throw new Error(`${path.relative(REPO, f)}: not a notebook of notebooks/en or notebooks/zh-CN`);
  const before = new Map(files.map((f) => [f, sha(f)]));
  const gitBefore = gitStatus();
  const probe = files.find((f) => fs.readFileSync(f, "utf8").includes("memlab.dev/memlab/memlab"));
  if (!probe) fail("completion", "no notebook imports memlab.dev/memlab/memlab");
  const names = memlabNames();

  // The test's own working copies, fresh, made as make lab makes them.
  fs.rmSync(WORKBOOK, { recursive: true, force: true });
  for (const l of execFileSync(LAB_SH, ["sync"], { env: labEnv("en"), encoding: "utf8" }).trim().split("\n")) log(l);
  for (const f of files) {
    const copy = path.join(WORKBOOK, path.relative(path.join(REPO, "notebooks"), f));
    if (!fs.existsSync(copy) || sha(copy) !== before.get(f)) fail(path.relative(REPO, copy), `sync did not copy ${path.relative(REPO, f)}`);
  }

  // Test-only JupyterLab settings: no autosave (the notebooks must stay as they
  // are), every cell in the DOM (no windowing), no news or update checks.
  const settings = path.join(OUT, "lab-settings");
  const workspaces = path.join(OUT, "lab-workspaces");
  fs.rmSync(workspaces, { recursive: true, force: true });
  const put = (plugin, value) => {
    const f = path.join(settings, plugin + ".jupyterlab-settings");
    fs.mkdirSync(path.dirname(f), { recursive: true });
    fs.writeFileSync(f, JSON.stringify(value));
  };
  put("@jupyterlab/docmanager-extension/plugin", { autosave: false });
  put("@jupyterlab/notebook-extension/tracker", { windowingMode: "none" });
  put("@jupyterlab/apputils-extension/notification", { fetchNews: "false", checkForUpdates: false });

  const token = randomBytes(16).toString("hex");
  let lab, browser;
  const cleanup = async () => {
    if (browser) await browser.close().catch(() => {});
    browser = null;
    await stopLab(lab);
    lab = null;
  };
  for (const sig of ["SIGINT", "SIGTERM"])
    process.on(sig, async () => {
      log(`${sig}: stopping`);
      await cleanup();
      process.exit(130);
    });
  try {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
      env: { ...process.env, E2E_MARK: MARK },
    });
    log(`Chromium ${browser.version()} (${CHROMIUM})`);
    // One server per edition, as `EDITION=… make lab` starts it.
    for (const edition of EDITIONS) {
      const mine = files.filter((f) => path.basename(path.dirname(f)) === edition);
      if (mine.length === 0) continue;
      lab = await startLab(edition, await freePort(), token, settings, workspaces);
      await checkNoNews(lab.base, token, edition);
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      page.on("pageerror", (e) => log(`page error: ${e.message}`));
      const cdp = await page.context().newCDPSession(page);
      await cdp.send("DOM.enable");
      await cdp.send("CSS.enable");
      for (const [i, f] of mine.entries()) {
        try {
          await runNotebook(page, cdp, lab.base, token, f, f === probe, names);
          if (i === 0) await checkUI(page, cdp, edition);
        } catch (e) {
          fail(path.basename(f), e.message.split("\n")[0]);
          await page.screenshot({ path: path.join(OUT, `${shotName(f)}-failed.png`) }).catch(() => {});
        }
        // Shut the notebook's kernel down before the next one.
        for (const s of await api(lab.base, token, "GET", "/api/sessions"))
          await api(lab.base, token, "DELETE", `/api/sessions/${s.id}`);
      }
      // Every working copy is as sync made it (autosave is off) until the learner's edit.
      for (const f of mine) {
        const copy = path.join(WORKBOOK, path.relative(path.join(REPO, "notebooks"), f));
        if (sha(copy) !== before.get(f)) fail(path.relative(REPO, copy), "running the notebook changed the working copy on disk (autosave is off)");
      }
      try {
        await checkLearnerEdit(page, lab.base, token, edition, path.relative(path.join(REPO, "notebooks"), mine[0]), gitBefore);
      } catch (e) {
        fail(`${edition} learner's edit`, e.message.split("\n")[0]);
        await page.screenshot({ path: path.join(OUT, `${edition}-edit-failed.png`) }).catch(() => {});
      }
      for (const s of await api(lab.base, token, "GET", "/api/sessions")) await api(lab.base, token, "DELETE", `/api/sessions/${s.id}`);
      await checkSlideshow(page, lab.base, token, mine, files);
      await page.close();
      await stopLab(lab);
      lab = null;
    }
  } finally {
    await cleanup();
  }
  for (const [f, h] of before) if (sha(f) !== h) fail(path.relative(REPO, f), "the browser test changed the notebook on disk");
  if (gitStatus() !== gitBefore) fail("git status", "the browser test changed what git status --porcelain shows");
  if (failures.length > 0) {
    console.log(`e2e: ${failures.length} failures`);
    process.exit(1);
  }
  log(`all ${files.length} notebooks passed`);
}

main().catch((e) => {
  console.error("e2e:", e.stack || e);
  process.exit(1);
});
