package workbook

import (
	"bytes"
	"context"
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

// Limits and isolation of one graded run. The zero value means the defaults.
type GradeOptions struct {
	Race      bool          // build the tests with -race (the submission still may not use cgo)
	Timeout   time.Duration // wall-clock limit of one submission's test run; 0 means DefaultTimeout
	MaxOutput int64         // bytes one test run may write (stdout and stderr together); 0 means DefaultMaxOutput
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

// ErrNoSandbox is returned (wrapped) when the sandbox Grade needs is not installed.
var ErrNoSandbox = errors.New("workbook: bubblewrap (bwrap) is not installed: apt-get install bubblewrap (make grader-deps), or grade with --sandbox none for code you trust")

// sandboxCommand returns the command that runs the test binary bin with args in
// the folder dir (inside the scratch module scratch), isolated as o says.
//
// With bubblewrap the binary runs in new user, mount, PID, network, IPC and UTS
// namespaces as uid/gid 65534 (nobody), in a new session, killed if the grader
// dies. Its file system holds the system's /usr, /lib, /lib64, /bin and /etc
// read-only (for -race builds, which link the C library), the scratch module
// read-only (the official tests, the binary), a fresh /dev and /proc (its own PID
// namespace: no grader process is visible) and an empty 64 MiB tmpfs /tmp as its
// TMPDIR and HOME. Nothing of the instructor's is mounted, nothing it can see is
// writable except that tmpfs, and there is no network.
func sandboxCommand(ctx context.Context, o GradeOptions, scratch, dir, bin string, args []string) (*exec.Cmd, error) {
	switch o.Sandbox {
	case "", "bwrap":
		bwrap, err := exec.LookPath("bwrap")
		if err != nil {
			return nil, ErrNoSandbox
		}
		a := []string{
			"--unshare-all", "--die-with-parent", "--new-session",
			"--uid", "65534", "--gid", "65534",
		}
		for _, d := range []string{"/usr", "/lib", "/lib64", "/lib32", "/bin", "/etc"} {
			a = append(a, "--ro-bind-try", d, d)
		}
		a = append(a,
			"--dev", "/dev", "--proc", "/proc",
			"--size", "67108864", "--tmpfs", "/tmp",
			"--ro-bind", scratch, scratch,
			"--chdir", dir,
			"--clearenv", "--setenv", "TMPDIR", "/tmp", "--setenv", "HOME", "/tmp",
			"--setenv", "PATH", "/usr/bin:/bin",
			"--", bin)
		cmd := exec.CommandContext(ctx, bwrap, append(a, args...)...)
		return cmd, nil
	case "none":
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = dir
		return cmd, nil
	}
	return nil, fmt.Errorf("workbook: unknown sandbox %q (want bwrap or none)", o.Sandbox)
}

// runResult is what one sandboxed test binary produced.
type runResult struct {
	stdout, stderr []byte
	exitCode       int    // -1 when it was killed
	stopped        string // why the grader stopped it ("" if it exited by itself)
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

// runSandboxed runs the test binary bin in dir under the sandbox and limits of o.
// The binary and everything it starts run in a process group of their own that is
// killed when the time or output limit is reached or ctx ends.
func runSandboxed(ctx context.Context, o GradeOptions, scratch, dir, bin string, args []string) (runResult, error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout())
	defer cancel()
	var whyMu sync.Mutex
	why := ""
	stop := func(reason string) {
		whyMu.Lock()
		if why == "" {
			why = reason
		}
		whyMu.Unlock()
		cancel()
	}
	cmd, err := sandboxCommand(ctx, o, scratch, dir, bin, args)
	if err != nil {
		return runResult{}, err
	}
	if o.Sandbox == "none" {
		cmd.Env = append(os.Environ(), "GOFLAGS=")
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
	over := func() { stop(fmt.Sprintf("it wrote more than the output limit of %d bytes", o.maxOutput())) }
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
		stop(fmt.Sprintf("it ran past the time limit of %v", o.timeout()))
	}
	whyMu.Lock()
	res.stopped = why
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
		return res, fmt.Errorf("workbook: running %s: %w", filepath.Base(bin), runErr)
	}
	if res.stopped == "" && ctx.Err() != nil {
		res.stopped = "the grader was interrupted"
	}
	return res, nil
}

// buildTest compiles the tests of the package pkg (such as "./03-view") of the
// scratch module into the binary out, without running anything of the
// student's. It returns the compiler's messages when the build fails.
func buildTest(ctx context.Context, o GradeOptions, scratch, pkg, out string) (ok bool, msgs []string, err error) {
	args := []string{"test", "-c", "-o", out}
	if o.Race {
		args = append(args, "-race")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkg)...)
	cmd.Dir = scratch
	env, err := goEnv(filepath.Dir(out))
	if err != nil {
		return false, nil, err
	}
	cmd.Env = append(env, "GOWORK=off", "GOFLAGS=")
	if o.Race {
		cmd.Env = append(cmd.Env, "CGO_ENABLED=1") // -race needs cgo, whatever the caller's environment says
	} else {
		cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
	}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	runErr := cmd.Run()
	var exitErr *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) {
		return false, nil, fmt.Errorf("workbook: building the tests of %s: %w (is the Go toolchain installed and on PATH?)", pkg, runErr)
	}
	for _, l := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		if l != "" && !strings.HasPrefix(l, "# ") {
			msgs = append(msgs, l)
		}
	}
	if runErr != nil {
		return false, msgs, nil
	}
	if _, err := os.Stat(out); err != nil {
		return false, append(msgs, "go test -c wrote no test binary (no test files?)"), nil
	}
	return true, nil, nil
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
