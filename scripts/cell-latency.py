#!/usr/bin/env python3
"""cell-latency measures how long notebook cells take in a real GoNB kernel.

It drives the checkout's own GoNB kernel (.venv, `make lab-deps`) through
jupyter_client, as JupyterLab does, and prints, with the date, the machine and its
load:

  first    a fresh kernel's first cells of notebook 00 (what a learner runs first
           after `make lab`); with --cold, in empty Go build and gopls caches,
           after the set-up's warm-up (`scripts/lab.sh warm`) unless --no-warm;
  runall   Run All of notebook 02 in a fresh kernel: every code cell in order, each
           one's time and the total;
  trivial  in that same kernel, a trivial cell (`%%` + fmt.Println(N)), 3 times;
  tryit    in that same kernel, a "Try it" re-run: one constant of one cell edited,
           the cell run again (--tryit CELL_TEXT=>EDIT names the edit);
  all      Run All of every other notebook (notebooks/en/*.ipynb), each in a fresh
           kernel, every code cell timed; with runall, every cell of every notebook.
           Cells over 3 s (issue 30's goal) are listed at the end; a notebook's
           exercise files go to a temporary MEMLAB_WORKBOOK.

With --phases the kernel logs (klog -v=2 to a file) and each cell's time is split
into GoNB's steps: parse (merging the cell with the declarations of earlier
cells into main.go), goimports, go get, go build, run (the program, and the
reply reaching the client).

Run it as `make cell-latency` (or .venv/bin/python scripts/cell-latency.py).
Time is wall-clock seconds from the execute request to the kernel's idle status.
The goals (issues 18 and 30, on a 2-core machine) are checked and printed.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.environ.get("MEMLAB_VENV", os.path.join(REPO, ".venv"))

GOALS = {
    "ordinary": 1.5,  # an ordinary cell, seconds (and at most 2x the trivial cell)
    "tryit": 3.0,  # a Try-it re-run
    "first": 6.0,  # the first cell after make lab
    "runall": 40.0,  # Run All of notebook 02
    "cell": 3.0,  # any cell of any notebook (issue 30), unless it says how long it takes
}


def die(msg):
    sys.exit("cell-latency: " + msg)


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    osname = platform.system()
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    osname = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return "%s, %d cores (%s)" % (osname, os.cpu_count() or 0, cpu)


def load():
    return "%.2f %.2f %.2f" % os.getloadavg()


def commit():
    try:
        out = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True)
        return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except OSError:
        return "?"


def notebooks():
    """The English notebooks' file names, in order."""
    d = os.path.join(REPO, "notebooks", "en")
    return sorted(f for f in os.listdir(d) if f.endswith(".ipynb"))


def code_cells(nb, baseline=False):
    """The code cells of notebooks/en/nb; with baseline, without GoNB's %noautoget."""
    path = os.path.join(REPO, "notebooks", "en", nb)
    try:
        with open(path, encoding="utf-8") as f:
            cells = json.load(f)["cells"]
    except (OSError, ValueError, KeyError) as e:
        die("reading %s: %s" % (path, e))
    out = ["".join(c["source"]) for c in cells if c.get("cell_type") == "code"]
    if baseline:
        out = [re.sub(r"(?m)^%noautoget\n", "", c) for c in out]
    return out


def kind(src):
    first = src.lstrip().split("\n", 1)[0]
    if "import (" in src and not first.startswith("%%"):
        return "imports"
    if first.startswith("%%"):
        return "exp"
    return "decl"


def announced(src):
    """The seconds a cell says up front it takes on the simulator ("about 15 s on the
    simulator" in its first comment lines), or None."""
    for line in src.split("\n")[:3]:
        m = re.search(r"about (\d+(?:\.\d+)?) s on the simulator", line)
        if m:
            return float(m.group(1))
    return None


def label(src):
    """A short name for a cell: its first line that says something."""
    for line in src.split("\n"):
        s = line.strip()
        if not s or s == "%%" or s.startswith("%env") or s.startswith("//") and len(s) < 4:
            continue
        if s.startswith("l := memlab.MustOpen") or s == "defer l.Close()" or s.startswith("import"):
            continue
        return s[:48]
    return src.strip().split("\n")[0][:48]


class Kernel:
    """A GoNB kernel started as JupyterLab starts it, in the notebook's folder."""

    def __init__(self, cwd, env, spec_dir=None):
        from jupyter_client.manager import KernelManager

        kw = {"kernel_name": "gonb"}
        self.km = KernelManager(**kw)
        if spec_dir:
            from jupyter_client.kernelspec import KernelSpecManager

            self.km.kernel_spec_manager = KernelSpecManager(kernel_dirs=[spec_dir])
        t0 = time.monotonic()
        self.km.start_kernel(cwd=cwd, env=env)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)
        self.ready_s = time.monotonic() - t0

    def cpu(self):
        """CPU seconds the kernel and the processes it waited for (goimports, go
        build and its compiler and linker, the cell's program) have used so far;
        gopls, which runs as long as the kernel, is not counted."""
        pid = getattr(self.km.provisioner, "pid", None)
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, TypeError):
            return float("nan")
        return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")

    def run(self, code, timeout=900):
        """Runs code; returns (seconds, error text or "", t_sent as epoch seconds, CPU seconds)."""
        cpu0 = self.cpu()
        sent = time.time()
        t0 = time.monotonic()
        msg_id = self.kc.execute(code, store_history=True)
        err = ""
        deadline = t0 + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                die("a cell ran past %ds: %s" % (timeout, label(code)))
            try:
                m = self.kc.get_iopub_msg(timeout=min(left, 5))
            except Exception:  # queue.Empty
                if not self.km.is_alive():
                    die("the kernel died running: %s" % label(code))
                continue
            if m["parent_header"].get("msg_id") != msg_id:
                continue
            t, c = m["msg_type"], m["content"]
            if t == "error":
                err = (c.get("ename", "") + ": " + c.get("evalue", "")).strip()
            elif t == "stream" and c.get("name") == "stderr" and "panic" in c.get("text", ""):
                err = c["text"].strip()[:200]
            elif t == "display_data" and "text/html" in c.get("data", {}) and "gonb-cell-error" in c["data"]["text/html"]:
                err = err or "compile error"
            elif t == "status" and c.get("execution_state") == "idle":
                break
        reply = self.kc.get_shell_msg(timeout=60)
        if reply["content"].get("status") == "error" and not err:
            err = reply["content"].get("ename", "error")
        secs = time.monotonic() - t0
        return secs, err, sent, self.cpu() - cpu0

    def close(self):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=False)


def kernel_env(extra):
    env = dict(os.environ)
    env.update(extra)
    return env


def make_spec(tmp, logfile, baseline):
    """A copy of the registered gonb kernelspec: with logfile, GoNB logs its steps
    (klog -v=2) there; with baseline, gonb runs as it was registered before issue 18
    (directly, without scripts/gonb-kernel: cells linked with DWARF)."""
    src = os.path.join(VENV, "share", "jupyter", "kernels", "gonb", "kernel.json")
    with open(src) as f:
        k = json.load(f)
    argv = list(k["argv"])
    env = k.setdefault("env", {})
    if logfile:
        argv = ["-v=2" if a.startswith("-v=") else a for a in argv]
        env["MEMLAB_KERNEL_LOG"] = logfile
    if baseline:
        argv[0] = os.path.join(VENV, "bin", "gonb")
        log = env.get("MEMLAB_KERNEL_LOG")
        if logfile:
            # GoNB sends klog's INFO output to -extra_log (without it, nowhere).
            argv += ["-log_file=" + log, "-extra_log=" + log]
    k["argv"] = argv
    d = os.path.join(tmp, "kernels", "gonb")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "kernel.json"), "w") as f:
        json.dump(k, f)
    return os.path.join(tmp, "kernels")


KLOG = re.compile(r"^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+)\s+\d+ \S+\] (?:\x1b\[[0-9;]*m)?(?:\[[0-9a-f]+\])?(?:\x1b\[[0-9;]*m)? ?(.*)$")


def read_klog(path):
    """Yields (epoch seconds, message) from a klog file (local time)."""
    year = datetime.datetime.now().year
    try:
        f = open(path, encoding="utf-8", errors="replace")
    except OSError:
        return
    with f:
        for line in f:
            m = KLOG.match(line)
            if not m:
                continue
            mo, d, h, mi, s, us, msg = m.groups()
            t = datetime.datetime(year, int(mo), int(d), int(h), int(mi), int(s), int(us[:6].ljust(6, "0"))).timestamp()
            yield t, msg


def phases(log, sent, total):
    """Splits one cell (sent at epoch `sent`, `total` seconds) into GoNB's steps from its log."""
    marks = {}
    end = sent + total
    for t, msg in read_klog(log):
        if t < sent - 0.01 or t > end + 0.01:
            continue
        if msg.startswith("ExecuteCell: \"") or msg.startswith("ExecuteCell: ["):
            marks.setdefault("start", t)
        elif msg.startswith("ExecuteCell: after s.parseLinesAndComposeMain"):
            marks.setdefault("parsed", t)
        elif msg.startswith("Executing") and "goimports" in msg:
            marks.setdefault("goimports", t)
        elif msg.startswith("Executing") and msg.endswith(" get"):
            marks.setdefault("goget", t)
        elif msg.startswith("ExecuteCell: after s.GoImports"):
            marks.setdefault("imported", t)
        elif msg.startswith("ExecuteCell: after s.Compile"):
            marks.setdefault("compiled", t)
    if not {"start", "parsed", "goimports", "imported", "compiled"} <= marks.keys():
        return None
    gi_end = marks.get("goget", marks["imported"])
    if not marks["start"] <= marks["parsed"] <= marks["goimports"] <= gi_end <= marks["imported"] <= marks["compiled"] <= end + 0.01:
        return None  # the log's marks out of order: no split rather than a wrong one
    return {
        "parse": marks["parsed"] - sent,
        "goimports": gi_end - marks["goimports"],
        "goget": marks["imported"] - marks["goget"] if "goget" in marks else 0.0,
        "build": marks["compiled"] - marks["imported"],
        "run": end - marks["compiled"],
    }


PHASES = ("parse", "goimports", "goget", "build", "run")


class Report:
    def __init__(self, args):
        self.args = args
        self.log = None
        self.lines = []
        self.verdicts = []

    def out(self, s=""):
        print(s, flush=True)

    def cell_row(self, i, src, secs, err, ph, cpu):
        row = "| %s | %s | `%s` | %.2f | %.2f |" % (i, kind(src), label(src).replace("|", "\\|"), secs, cpu)
        if self.args.phases:
            row += " " + " | ".join("%.2f" % ph[p] if ph else "?" for p in PHASES) + " |"
        if err:
            row += " ERROR: " + err.replace("\n", " ")[:120]
        self.out(row)

    def header(self, title):
        self.out()
        self.out("### " + title)
        self.out()
        cols = "| cell | kind | first line | s | CPU s |"
        sep = "|---|---|---|---|---|"
        if self.args.phases:
            cols += " " + " | ".join(PHASES) + " |"
            sep += "---|" * len(PHASES)
        self.out(cols)
        self.out(sep)

    def verdict(self, what, value, goal, ok):
        self.verdicts.append("%s %s: %s (goal %s)" % ("MET " if ok else "MISSED", what, value, goal))


def run_cells(k, cells, rep, phase_log, names=None):
    times, cpus, errs = [], [], 0
    for i, src in enumerate(cells):
        secs, err, sent, cpu = k.run(src)
        ph = phases(phase_log, sent, secs) if phase_log else None
        rep.cell_row(names[i] if names else i + 1, src, secs, err, ph, cpu)
        times.append(secs)
        cpus.append(cpu)
        errs += bool(err)
    return times, errs, cpus


def sync_workbook(wb):
    """Make the learner's working copies in workbook wb as make lab does
    (scripts/lab.sh: scripts/workbook sync, notebooks and exercises)."""
    subprocess.run(["go", "run", "./scripts/workbook", "-notebooks", "notebooks", "-workbook", wb,
                    "-exercises", "exercises", "sync"], cwd=REPO, check=True,
                   stdout=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="first,runall,trivial,tryit,all", help="which measurements, comma-separated")
    ap.add_argument("--phases", action="store_true", help="split each cell's time into GoNB's steps (klog -v=2)")
    ap.add_argument("--cold", action="store_true", help="first: empty Go build and gopls caches (XDG_CACHE_HOME in a temporary folder)")
    ap.add_argument("--no-warm", action="store_true", help="with --cold: skip the set-up's warm-up (scripts/lab.sh warm)")
    ap.add_argument("--tryit", default="const layers = 4=>const layers = 6", help="TEXT=>EDIT: the Try-it edit, in the 02 cell that has TEXT")
    ap.add_argument("--baseline", action="store_true", help="GoNB as registered before issue 18: gonb directly (DWARF), `go get` before every cell (no %%noautoget)")
    ap.add_argument("--notebook", default="02-memory-mechanics.ipynb")
    args = ap.parse_args()
    only = set(args.only.split(","))
    unknown = only - {"first", "runall", "trivial", "tryit", "all"}
    if unknown:
        die("--only: unknown %s (want first, runall, trivial, tryit, all)" % ",".join(sorted(unknown)))
    if "=>" not in args.tryit:
        die("--tryit wants TEXT=>EDIT, got %r" % args.tryit)

    spec = os.path.join(VENV, "share", "jupyter", "kernels", "gonb", "kernel.json")
    if not os.path.exists(spec):
        die("no GoNB kernel at %s: run make lab-deps" % spec)
    os.environ["JUPYTER_DATA_DIR"] = os.path.join(VENV, "share", "jupyter")
    os.environ.setdefault("MEMLAB_REPO", REPO)
    tmp = tempfile.mkdtemp(prefix="memlab-cell-latency-")
    # As make lab runs kernels (scripts/lab.sh): a workbook whose exercises are the
    # learner's working copies, as make lab makes them (scripts/workbook ... sync), so
    # that progress.Show, which ends every notebook, meets what a learner's does.
    if "MEMLAB_WORKBOOK" not in os.environ:
        os.environ["MEMLAB_WORKBOOK"] = os.path.join(tmp, "workbook")
        sync_workbook(os.environ["MEMLAB_WORKBOOK"])
    os.environ["JUPYTER_CONFIG_DIR"] = os.path.join(tmp, "jupyter-config")
    phase_log = os.path.join(tmp, "gonb.log") if args.phases else None
    spec_dir = make_spec(tmp, phase_log, args.baseline) if args.phases or args.baseline else None
    cwd = os.path.join(REPO, "notebooks", "en")

    rep = Report(args)
    slow = []  # (notebook, cell, seconds, CPU seconds, first line) over GOALS["cell"]
    rep.out("## cell-latency: %s" % " ".join(["scripts/cell-latency.py"] + sys.argv[1:]))
    rep.out()
    rep.out("- date: %s" % datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    rep.out("- machine: %s; commit %s" % (machine(), commit()))
    rep.out("- load average at the start: %s" % load())
    rep.out("- GoNB kernel: %s%s; GOFLAGS=%r" % (spec, " as before issue 18 (--baseline: gonb directly, `go get` before every cell)" if args.baseline else "", os.environ.get("GOFLAGS", "")))
    try:
        if "first" in only:
            env = {}
            title = "first cells of 00 in a fresh kernel (Go caches as they are)"
            if args.cold:
                cache = os.path.join(tmp, "cache")
                os.makedirs(cache)
                env = {"XDG_CACHE_HOME": cache, "GOCACHE": os.path.join(cache, "go-build")}
                title = "first cells of 00 in a fresh kernel, empty Go build and gopls caches"
                if not args.no_warm:
                    t0 = time.monotonic()
                    p = subprocess.run([os.path.join(REPO, "scripts", "lab.sh"), "warm"], env=kernel_env(env))
                    if p.returncode != 0:
                        die("scripts/lab.sh warm failed")
                    title += ", after the set-up's warm-up (%.0f s)" % (time.monotonic() - t0)
            k = Kernel(os.path.join(REPO, "notebooks", "en"), kernel_env(env), spec_dir)
            rep.header(title + "; kernel ready in %.1f s" % k.ready_s)
            cells = code_cells("00-setup-and-tour.ipynb", args.baseline)[:2]
            times, errs, _ = run_cells(k, cells, rep, phase_log)
            k.close()
            worst = max(times)
            rep.verdict("first cell after make lab (worst of 00's first two)", "%.1f s" % worst, "<= %.0f s" % GOALS["first"], worst <= GOALS["first"] and not errs)

        need_k = only & {"runall", "trivial", "tryit"}
        if need_k:
            cells = code_cells(args.notebook, args.baseline)
            k = Kernel(cwd, kernel_env({}), spec_dir)
            t0 = time.monotonic()
            rep.header("Run All of %s in a fresh kernel (kernel ready in %.1f s)" % (args.notebook, k.ready_s))
            times, errs, cpus = run_cells(k, cells, rep, phase_log)
            total = time.monotonic() - t0
            slow += [(args.notebook, i + 1, t, u, label(c), announced(c)) for i, (t, u, c) in enumerate(zip(times, cpus, cells)) if t > GOALS["cell"]]
            rep.out()
            rep.out("Run All: %.1f s (%.1f CPU s) for %d code cells, %d with errors; median cell %.2f s, slowest %.2f s" % (total, sum(cpus), len(cells), errs, statistics.median(times), max(times)))
            if "runall" in only:
                rep.verdict("Run All of 02", "%.1f s (%.1f CPU s)" % (total, sum(cpus)), "<= %.0f s" % GOALS["runall"], total <= GOALS["runall"] and not errs)
            trivial = None
            if "trivial" in only or "runall" in only:
                # Each a new program (as a learner's cell is): the same one twice
                # would skip the link, which go build does when the binary is current.
                rep.header("a trivial cell in the same kernel, 3 runs (each a new program)")
                t, _, tc = run_cells(k, ["%%%%\nfmt.Println(%d)" % i for i in (1, 2, 3)], rep, phase_log, names=["t1", "t2", "t3"])
                trivial = statistics.median(t)
                rep.out()
                rep.out("trivial cell: median %.2f s (%.2f CPU s)" % (trivial, statistics.median(tc)))
                ordinary = [s for s, src in zip(times, cells) if kind(src) != "imports"]
                rep.out("ordinary cells: median %.2f s (%.2f CPU s)" % (statistics.median(ordinary), statistics.median([c for c, src in zip(cpus, cells) if kind(src) != "imports"])))
                worst = max(ordinary)
                over = sum(1 for s in ordinary if s > GOALS["ordinary"] or s > 2 * trivial)
                rep.verdict("ordinary cells of 02 (Run All)", "median %.2f s, slowest %.2f s, %d of %d over the goal" % (statistics.median(ordinary), worst, over, len(ordinary)),
                            "<= %.1f s and <= 2x trivial (%.2f s)" % (GOALS["ordinary"], 2 * trivial), over == 0)
            if "tryit" in only:
                text, edit = args.tryit.split("=>", 1)
                hits = [c for c in cells if text in c]
                if len(hits) != 1:
                    die("--tryit: %d cells of %s have %r (want 1)" % (len(hits), args.notebook, text))
                rep.header("Try it: `%s` edited to `%s`, re-run in the same kernel" % (text, edit))
                t, errs, tc = run_cells(k, [hits[0].replace(text, edit), hits[0]], rep, phase_log, names=["edited", "back"])
                rep.verdict("Try-it re-run", "%.2f s (%.2f CPU s)" % (t[0], tc[0]), "<= %.0f s" % GOALS["tryit"], t[0] <= GOALS["tryit"] and not errs)
            k.close()

        if "all" in only:
            # Each notebook in a fresh kernel, as a learner's Run All; 06 writes the
            # exercises' working copies, here into a temporary workbook.
            sync_workbook(os.path.join(tmp, "workbook-all"))
            env = kernel_env({"MEMLAB_WORKBOOK": os.path.join(tmp, "workbook-all")})
            for nb in notebooks():
                if nb == args.notebook and need_k:
                    continue  # measured above
                cells = code_cells(nb, args.baseline)
                k = Kernel(cwd, env, spec_dir)
                t0 = time.monotonic()
                rep.header("Run All of %s in a fresh kernel (kernel ready in %.1f s)" % (nb, k.ready_s))
                times, errs, cpus = run_cells(k, cells, rep, phase_log)
                total = time.monotonic() - t0
                k.close()
                rep.out()
                rep.out("Run All: %.1f s (%.1f CPU s) for %d code cells, %d with errors; median cell %.2f s, slowest %.2f s" % (total, sum(cpus), len(cells), errs, statistics.median(times), max(times)))
                slow += [(nb, i + 1, t, u, label(c), announced(c)) for i, (t, u, c) in enumerate(zip(times, cpus, cells)) if t > GOALS["cell"]]
            rep.out()
            rep.out("### cells over %.0f s (wall; the CPU s do not grow with other jobs' load)" % GOALS["cell"])
            rep.out()
            unannounced = 0
            for nb, i, t, u, what, said in slow:
                # a cell that says up front how long it takes keeps to it within half again
                kept = said is not None and t <= 1.5 * said
                unannounced += not kept
                note = ("; says about %.0f s up front" % said) if said is not None else "; says nothing up front"
                rep.out("- %s cell %d: %.1f s (%.1f CPU s) `%s`%s" % (nb, i, t, u, what.replace("`", "'"), note))
            if not slow:
                rep.out("- none")
            rep.verdict("cells of every notebook", "%d over %.0f s, %d of them not announced (or slower than announced × 1.5)" % (len(slow), GOALS["cell"], unannounced),
                        "none over %.0f s, or say up front how long and show progress" % GOALS["cell"], unannounced == 0)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rep.out()
    rep.out("Goals (issues 18 and 30, 2-core machine):")
    for v in rep.verdicts:
        rep.out("- " + v)
    rep.out("- load average at the end: %s" % load())


if __name__ == "__main__":
    main()
