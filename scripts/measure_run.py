"""measure_run.py CMD [ARG...]: run one command, its output discarded, and print its wall
seconds, its CPU seconds (user + system) and its peak resident memory in KiB, on one line.
Run in a process of its own, so that the peak is the command's alone (getrusage of the
children); the GPU machine has no /usr/bin/time. Used by scripts/bench-real-snapshot.sh and
scripts/bench-big-snapshot.sh. A command that fails makes this fail with its stderr."""
import resource
import subprocess
import sys
import time

start = time.monotonic()
run = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
wall = time.monotonic() - start
use = resource.getrusage(resource.RUSAGE_CHILDREN)
if run.returncode != 0:
    sys.stderr.write(run.stderr.decode(errors="replace"))
    sys.exit(f"measure_run: {sys.argv[1]} exited with {run.returncode}")
print(f"{wall:.2f} {use.ru_utime + use.ru_stime:.2f} {use.ru_maxrss}")
