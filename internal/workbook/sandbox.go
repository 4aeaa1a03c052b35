package workbook

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// GradeOptions are the limits and isolation of one graded submission. The zero
// value means the defaults.
type GradeOptions struct {
	Race      bool          // build the tests with -race (the submission still may not use cgo)
	Timeout   time.Duration // wall-clock limit of one submission's build, and of its test run; 0 means DefaultTimeout
	MaxOutput int64         // bytes one build or test run may write (stdout and stderr together); 0 means DefaultMaxOutput
	// Memory limits each process of a submission's build and test run: its
	// data (heap) and the size of any file it writes, in bytes (prlimit's
	// RLIMIT_DATA and RLIMIT_FSIZE); 0 means DefaultMemory.
	Memory int64
	// Sandbox is "bwrap" (the default: bubblewrap, Debian package bubblewrap) or
	// "none", which runs the submission with the grader's own rights and is only
	// for code the instructor trusts.
	Sandbox string
	// SkipSourceCheck turns off CheckSubmission. It exists so that tests can show
	// the sandbox and the result channel hold on their own; never grade with it.
	SkipSourceCheck bool
}

// Defaults of GradeOptions.
const (
	DefaultTimeout   = 2 * time.Minute
	DefaultMaxOutput = 8 << 20
	DefaultMemory    = 1 << 30
)

func (o GradeOptions) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

func (o GradeOptions) maxOutput() int64 {
	if o.MaxOutput > 0 {
		return o.MaxOutput
	}
	return DefaultMaxOutput
}

func (o GradeOptions) memory() int64 {
	if o.Memory > 0 {
		return o.Memory
	}
	return DefaultMemory
}

// ErrNoSandbox is returned (wrapped) when the sandbox Grade needs is not installed.
var ErrNoSandbox = errors.New("workbook: bubblewrap (bwrap) is not installed: apt-get install bubblewrap (make grader-deps), or grade with --sandbox none for code you trust")

// mount is a host folder made visible in the sandbox at the path at.
type mount struct {
	host, at string
	rw       bool // writable; read-only otherwise
}

// job is one command the grader runs for a submission: its build or its test
// run.
type job struct {
	what    string   // "the build" or "the test run", for the reasons in reports
	argv    []string // the command, with paths as the sandbox sees them
	env     []string // its whole environment
	dir     string   // its working folder, as the sandbox sees it
	mounts  []mount  // what it sees of the host besides the system folders
	timeout time.Duration
	memory  int64 // RLIMIT_DATA and RLIMIT_FSIZE of each of its processes; 0: none
}

// command returns the command that runs j isolated as o says.
//
// With bubblewrap the job runs in new user, mount, PID, network, IPC and UTS
// namespaces as uid/gid 65534 (nobody), in a new session, killed if the grader
// dies. Its file system holds the system's /usr, /lib, /lib64, /bin and /etc
// read-only (for -race builds, which link the C library), j's mounts, a fresh
// /dev and /proc (its own PID namespace: no grader process is visible) and an
// empty 64 MiB tmpfs /tmp. Nothing of the instructor's is writable unless a
// mount says so, and there is no network. prlimit sets the memory limits
// before bubblewrap starts, so every process of the job inherits them.
func command(ctx context.Context, o GradeOptions, j job) (*exec.Cmd, error) {
	var argv []string
	if j.memory > 0 {
		argv = append(argv, "prlimit", fmt.Sprintf("--data=%d", j.memory), fmt.Sprintf("--fsize=%d", j.memory), "--")
	}
	switch o.Sandbox {
	case "", "bwrap":
		bwrap, err := exec.LookPath("bwrap")
		if err != nil {
			return nil, ErrNoSandbox
		}
		a := []string{bwrap,
			"--unshare-all", "--die-with-parent", "--new-session",
			"--uid", "65534", "--gid", "65534",
		}
		for _, d := range []string{"/usr", "/lib", "/lib64", "/lib32", "/bin", "/etc"} {
			a = append(a, "--ro-bind-try", d, d)
		}
		a = append(a, "--dev", "/dev", "--proc", "/proc", "--size", "67108864", "--tmpfs", "/tmp")
		for _, m := range j.mounts {
			if m.rw {
				a = append(a, "--bind", m.host, m.at)
			} else {
				a = append(a, "--ro-bind", m.host, m.at)
			}
		}
		a = append(a, "--chdir", j.dir, "--clearenv")
		for _, kv := range j.env {
			k, v, _ := strings.Cut(kv, "=")
			a = append(a, "--setenv", k, v)
		}
		argv = append(argv, append(append(a, "--"), j.argv...)...)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		return cmd, nil
	case "none":
		argv = append(argv, j.argv...)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir = j.dir
		cmd.Env = j.env
		return cmd, nil
	}
	return nil, fmt.Errorf("workbook: unknown sandbox %q (want bwrap or none)", o.Sandbox)
}

// runResult is what one sandboxed test binary produced.
type runResult struct {
	stdout, stderr []byte
	exitCode       int    // -1 when it was killed
	stopped        string // why the grader stopped it ("" if it exited by itself)
	limit          string // the limit it went over: "time limit", "memory limit", "output limit" or ""
}

// capped is a writer that keeps at most the bytes left in a budget shared with
// its sibling and calls over() once, when the budget is exceeded.
type capped struct {
	mu   *sync.Mutex
	left *int64
	buf  bytes.Buffer
	over func()
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := int64(len(p))
	if n > *c.left {
		c.buf.Write(p[:*c.left])
		*c.left = 0
		if c.over != nil {
			c.over()
			c.over = nil
		}
		return 0, errors.New("output limit exceeded")
	}
	*c.left -= n
	c.buf.Write(p)
	return len(p), nil
}

// runJob runs j under the sandbox of o and j's limits. The command and
// everything it starts run in a process group of their own that is killed
// when the time or output limit is reached or ctx ends.
func runJob(ctx context.Context, o GradeOptions, j job) (runResult, error) {
	ctx, cancel := context.WithTimeout(ctx, j.timeout)
	defer cancel()
	var whyMu sync.Mutex
	why, limit := "", ""
	stop := func(reason, lim string) {
		whyMu.Lock()
		if why == "" {
			why, limit = reason, lim
		}
		whyMu.Unlock()
		cancel()
	}
	cmd, err := command(ctx, o, j)
	if err != nil {
		return runResult{}, err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 5 * time.Second
	var mu sync.Mutex
	left := o.maxOutput()
	over := func() {
		stop(fmt.Sprintf("%s wrote more than the output limit of %d bytes", j.what, o.maxOutput()), "output limit")
	}
	stdout := &capped{mu: &mu, left: &left, over: over}
	stderr := &capped{mu: &mu, left: &left, over: over}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	runErr := cmd.Run()
	// Whatever happened, nothing of the group may outlive the run.
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	res := runResult{stdout: stdout.buf.Bytes(), stderr: stderr.buf.Bytes()}
	if ctx.Err() == context.DeadlineExceeded {
		stop(fmt.Sprintf("%s ran past the time limit of %v", j.what, j.timeout), "time limit")
	}
	whyMu.Lock()
	res.stopped, res.limit = why, limit
	whyMu.Unlock()
	var exitErr *exec.ExitError
	switch {
	case runErr == nil:
		res.exitCode = 0
	case errors.As(runErr, &exitErr):
		res.exitCode = exitErr.ExitCode()
	case res.stopped != "":
		res.exitCode = -1
	default:
		return res, fmt.Errorf("workbook: running %s: %w", j.what, runErr)
	}
	if res.stopped == "" && ctx.Err() != nil {
		res.stopped = "the grader was interrupted"
	}
	if res.stopped == "" && res.exitCode != 0 && j.memory > 0 {
		if m := overMemory(res.stdout, res.stderr, runErr); m != "" {
			res.stopped = fmt.Sprintf("%s went over the memory limit of %s (%s)", j.what, byteSize(j.memory), m)
			res.limit = "memory limit"
		}
	}
	return res, nil
}

// memorySigns are what a process that reached RLIMIT_DATA or RLIMIT_FSIZE
// prints: the Go runtime, the compiler and the linker.
var memorySigns = []string{"runtime: out of memory", "cannot allocate memory", "file too large", "file size limit exceeded"}

// overMemory returns the sign, in the output of a failed job or its exit
// signal, that it went over its memory limit, or "".
func overMemory(stdout, stderr []byte, runErr error) string {
	var exitErr *exec.ExitError
	if errors.As(runErr, &exitErr) {
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGXFSZ {
			return "file size limit exceeded"
		}
	}
	for _, out := range [][]byte{stderr, stdout} {
		low := bytes.ToLower(out)
		for _, s := range memorySigns {
			if bytes.Contains(low, []byte(s)) {
				return s
			}
		}
	}
	return ""
}

// staticData returns the bytes the ELF executable at path needs in memory
// for its writable segments (data and bss), which the kernel maps before the
// program runs: a binary whose static data is over the memory limit cannot
// start, and the grader says so instead of running it.
func staticData(path string) (int64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, fmt.Errorf("workbook: reading the test binary: %w", err)
	}
	defer f.Close()
	var n int64
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_W != 0 {
			n += int64(p.Memsz)
		}
	}
	return n, nil
}

// byteSize writes n bytes in the largest binary unit that keeps it at least 1.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.3g GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.3g MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// toEvents converts the output of a test binary run with -test.v=test2json into
// go test -json events, with go tool test2json, for parseEvents.
func toEvents(ctx context.Context, tmp, importPath string, stdout []byte) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", "tool", "test2json", "-p", importPath)
	cmd.Stdin = bytes.NewReader(stdout)
	env, err := goEnv(tmp)
	if err != nil {
		return nil, err
	}
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("workbook: go tool test2json: %w: %s", err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}

// goEnv is the environment of the go commands Grade runs: the local toolchain,
// and the go command's own work folder (GOTMPDIR) inside the grader's
// temporary folder tmp, so that it is removed with it even when an interrupt
// kills the go command.
func goEnv(tmp string) ([]string, error) {
	gotmp := filepath.Join(tmp, "gotmp")
	if err := os.MkdirAll(gotmp, 0o755); err != nil {
		return nil, fmt.Errorf("workbook: %w", err)
	}
	return append(os.Environ(), "GOTOOLCHAIN=local", "GOTMPDIR="+gotmp), nil
}
