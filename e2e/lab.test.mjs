// lab.test.mjs: memlab's browser test. It starts JupyterLab (the checkout's own, from
// .venv) on a free loopback port with the project's GoNB kernel, drives Debian's
// Chromium headless through playwright-core, and for every notebooks/{en,zh-CN}/*.ipynb: opens
// it, runs all cells, waits for the kernel to go idle, then asserts that
//   - every code cell ran (a failing cell stops Run All) and none shows an error
//     output, a Go panic, a GoNB compile error or an error line on stderr;
//   - every image in the outputs is loaded (naturalWidth > 0), and every cell tagged
//     "plot" in the notebook shows one;
//   - every heading of the notebook's own markdown is rendered;
// and, in the first notebook that imports memlab.dev/memlab/memlab, that Tab
// completion on `memlab.` offers memlab's exported names (gopls works). A full-page
// screenshot of each executed notebook goes to build/e2e/NAME.png. Notebooks are
// never written: autosave is off, and their bytes are compared before and after.
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

async function startLab(port, token, settings, workspaces) {
  const env = {
    ...process.env,
    E2E_MARK: MARK,
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
  const logFile = path.join(OUT, "jupyterlab.log");
  const fd = fs.openSync(logFile, "w");
  const child = spawn(path.join(REPO, "scripts", "lab.sh"), args, {
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
  const version = execFileSync(path.join(REPO, "scripts", "lab.sh"), ["exec", "lab", "--version"], {
    encoding: "utf8",
  }).trim();
  log(`JupyterLab ${version} on ${base} (log: build/e2e/jupyterlab.log)`);
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

// runNotebook opens one notebook, runs all its cells and checks what it shows.
async function runNotebook(page, base, token, file, probeCompletion, names) {
  const rel = path.relative(path.join(REPO, "notebooks"), file); // en/02-….ipynb: the server's root is notebooks/
  const name = shotName(file);
  const nb = JSON.parse(fs.readFileSync(file, "utf8"));
  const t0 = Date.now();
  await page.goto(`${base}/lab/workspaces/e2e-${name}/tree/${rel.split(path.sep).map(encodeURIComponent).join("/")}?reset&token=${token}`);
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
    path.basename(file),
    { timeout: 120_000 },
  );
  let st = await page.evaluate(panelState);
  if (st.kernel.name !== "gonb") fail(name, `kernel is ${st.kernel.name}, not gonb`);
  // Run > Run All Cells, as a user would.
  await page.click('.lm-MenuBar-item:has-text("Run")');
  await page.getByRole("menuitem", { name: "Run All Cells", exact: true }).click();
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

  if (probeCompletion) await checkCompletion(page, name, names);
  await solveExercise(page, name, nb, st);

  await screenshot(page, name);
}

// solveExercise checks a notebook's exercise cells (a "%%writefile
// ../../workbook/exercises/…" cell holding the learner's code, then a cell tagged
// "exercise-check" running the official tests on it): after Run All each check
// shows a verdict, the untouched stub's being TODO. Then it solves exercise 17 as
// a learner would: the reference solution goes into the code cell's editor, the
// two cells run, and the check must say PASS. The notebook on disk is not saved.
async function solveExercise(page, name, nb, st) {
  const src = (c) => [].concat(c.source).join("");
  const checks = nb.cells.map((c, i) => i).filter((i) => (nb.cells[i].metadata?.tags || []).includes("exercise-check"));
  if (checks.length === 0) return;
  const text = (outputs) => outputs.map((o) => [].concat(o.text ?? "").join("") + Object.values(o.data || {}).map((v) => [].concat(v).join("")).join("")).join("");
  for (const i of checks) {
    const shown = text(st.cells[i]?.outputs || []);
    if (!/^TODO  exercise \d+ is not started/m.test(shown)) fail(`${name} cell ${i}`, `the stub's check does not say TODO: ${shown.trim().split("\n").pop()}`);
  }
  const code = nb.cells.findIndex((c) => src(c).startsWith("%%writefile ../../workbook/exercises/17-inplace-block/block.go"));
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
  if (!/^PASS  all \d+ cases of exercise 17 pass/m.test(verdict)) fail(`${name} cell ${code + 1}`, `exercise 17 solved in the cell does not pass: ${verdict.trim().split("\n").slice(-3).join(" | ")}`);
  else log(`${name}: exercise 17 solved in the notebook: ${verdict.match(/^PASS.*$/m)[0]}`);
  await page.screenshot({ path: path.join(OUT, `${name}-exercise-17.png`) });
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
  // Leave the probe cell out of the screenshot.
  await page.keyboard.press("Escape");
  await page.keyboard.press("d");
  await page.keyboard.press("d");
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
  const before = new Map(files.map((f) => [f, sha(f)]));
  const probe = files.find((f) => fs.readFileSync(f, "utf8").includes("memlab.dev/memlab/memlab"));
  if (!probe) fail("completion", "no notebook imports memlab.dev/memlab/memlab");
  const names = memlabNames();

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
  const port = await freePort();
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
    lab = await startLab(port, token, settings, workspaces);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
      env: { ...process.env, E2E_MARK: MARK },
    });
    log(`Chromium ${browser.version()} (${CHROMIUM})`);
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.on("pageerror", (e) => log(`page error: ${e.message}`));
    for (const f of files) {
      try {
        await runNotebook(page, lab.base, token, f, f === probe, names);
      } catch (e) {
        fail(path.basename(f), e.message.split("\n")[0]);
        await page.screenshot({ path: path.join(OUT, `${shotName(f)}-failed.png`) }).catch(() => {});
      }
      // Shut the notebook's kernel down before the next one.
      for (const s of await api(lab.base, token, "GET", "/api/sessions"))
        await api(lab.base, token, "DELETE", `/api/sessions/${s.id}`);
    }
  } finally {
    await cleanup();
  }
  for (const [f, h] of before) if (sha(f) !== h) fail(path.relative(REPO, f), "the browser test changed the notebook on disk");
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
