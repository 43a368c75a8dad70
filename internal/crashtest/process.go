package crashtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Spec describes a child process of the parent test.
type Spec struct {
	// Name labels the child in its output's prefix and in errors, e.g. "engine-1".
	Name string
	// Test is the child test the process runs, e.g. "TestCrashChildEngine": it is run
	// with -test.run=^Test$ and RoleVar=Test.
	Test string
	// Env is added to the parent's environment, as KEY=VALUE: the child's settings (a
	// database URL, its name among several).
	Env []string
	// Finishes says the child's work ends (a starter that starts its processes and
	// returns): an exit with status 0 that the parent did not cause is its end, and
	// Chaos kills it no more. Otherwise (a server) every exit the parent did not cause
	// fails the test.
	Finishes bool
	// Output receives the child's stdout and stderr, each line prefixed with
	// "[Name#start] "; nil logs the lines with t.Log.
	Output io.Writer
}

// Process is a child process of the parent test, started with Start: the current run of
// the child, and its restarts. Its methods are safe for concurrent use, but a Kill and
// a Restart of one Process are meant to come from one goroutine (Chaos, or the test).
type Process struct {
	t    testing.TB
	spec Spec

	mu       sync.Mutex
	run      *run
	kills    int
	finished bool
}

// run is one start of a child process.
type run struct {
	n     int
	cmd   *exec.Cmd
	stdin io.WriteCloser
	ready chan struct{} // closed when the child calls Ready
	done  chan struct{} // closed when the child has exited and its output is read
	// expected is set before the parent kills or stops the child: its exit then is no
	// failure.
	expected atomic.Bool
	state    *os.ProcessState // set before done is closed
	err      error            // Wait's, set before done is closed
}

// Start starts the child process spec describes, and has it killed when the test ends
// (if it is still running then). It fails the test if the process cannot be started,
// and later if the child exits when the parent did not cause it (see Spec.Finishes).
func Start(t testing.TB, spec Spec) *Process {
	t.Helper()
	if spec.Name == "" || spec.Test == "" {
		t.Fatalf("crashtest: Spec.Name %q and Spec.Test %q must not be empty", spec.Name, spec.Test)
	}
	p := &Process{t: t, spec: spec}
	if err := p.start(); err != nil {
		t.Fatalf("crashtest: %v", err)
	}
	t.Cleanup(func() {
		r := p.current()
		r.expected.Store(true)
		_ = r.cmd.Process.Kill()
		<-r.done
	})
	return p
}

// Name returns the child's name.
func (p *Process) Name() string { return p.spec.Name }

// Starts returns how many times the child was started: 1, and one more per Restart.
func (p *Process) Starts() int { return p.current().n }

// Kills returns how many times Kill killed the child.
func (p *Process) Kills() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.kills
}

// Finished reports whether the child's work ended: a child whose Spec says it
// Finishes exited with status 0 when the parent did not cause it.
func (p *Process) Finished() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.finished
}

// Ready returns a channel closed when the current run of the child calls Ready.
func (p *Process) Ready() <-chan struct{} { return p.current().ready }

// Done returns a channel closed when the current run of the child has exited.
func (p *Process) Done() <-chan struct{} { return p.current().done }

// Err returns how the current run of the child ended (nil: status 0; an
// *exec.ExitError otherwise), once Done is closed; nil before.
func (p *Process) Err() error {
	r := p.current()
	select {
	case <-r.done:
		return r.err
	default:
		return nil
	}
}

// Kill kills the current run of the child with SIGKILL and waits until it has exited,
// and reports whether the kill is what ended it: false for a child that had exited
// already (or exited on its own at that instant).
func (p *Process) Kill() bool {
	r := p.current()
	select {
	case <-r.done:
		return false
	default:
	}
	r.expected.Store(true)
	_ = r.cmd.Process.Kill() // an error says it has exited already: Wait tells
	<-r.done
	if r.state == nil || r.state.ExitCode() != -1 { // -1: ended by a signal
		if r.err == nil && p.spec.Finishes { // it ended its work at that instant
			p.mu.Lock()
			p.finished = true
			p.mu.Unlock()
		}
		return false
	}
	p.mu.Lock()
	p.kills++
	p.mu.Unlock()
	return true
}

// Restart starts the child again, as its next start (StartVar). The current run must
// have exited (Kill, Stop, or its own end); Restart fails the test otherwise.
func (p *Process) Restart() {
	p.t.Helper()
	select {
	case <-p.Done():
	default:
		p.t.Fatalf("crashtest: %s restarted while running", p.spec.Name)
	}
	p.mu.Lock()
	p.finished = false
	p.mu.Unlock()
	if err := p.start(); err != nil {
		p.t.Fatalf("crashtest: %v", err)
	}
}

// Stop asks the child to end (its stdin is closed, so Child's context ends) and waits
// until it has exited, or until ctx ends, when it kills it. It returns the child's exit
// error (nil for status 0), or ctx's error when it had to kill it.
func (p *Process) Stop(ctx context.Context) error {
	r := p.current()
	r.expected.Store(true)
	_ = r.stdin.Close()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		_ = r.cmd.Process.Kill()
		<-r.done
		return fmt.Errorf("crashtest: %s did not stop: %w", p.spec.Name, ctx.Err())
	}
}

func (p *Process) current() *run {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.run
}

// start starts a run of the child: the test binary, os.Args[0], running the child test
// alone, its stdin a pipe the parent holds, its stdout and stderr one pipe read line by
// line.
func (p *Process) start() error {
	p.mu.Lock()
	n := 1
	if p.run != nil {
		n = p.run.n + 1
	}
	p.mu.Unlock()

	cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(p.spec.Test)+"$", "-test.count=1")
	cmd.Env = childEnv(os.Environ(), append([]string{RoleVar + "=" + p.spec.Test, StartVar + "=" + strconv.Itoa(n)}, p.spec.Env...))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("%s: %w", p.spec.Name, err)
	}
	out, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("%s: %w", p.spec.Name, err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	err = cmd.Start()
	_ = w.Close() // the child holds its own copy: EOF when it exits
	if err != nil {
		_ = out.Close()
		return fmt.Errorf("start %s: %w", p.spec.Name, err)
	}
	r := &run{n: n, cmd: cmd, stdin: stdin, ready: make(chan struct{}), done: make(chan struct{})}
	p.mu.Lock()
	p.run = r
	p.mu.Unlock()
	go p.watch(r, out)
	return nil
}

// watch forwards the output of run r until the child exits, notes Ready, and then
// reaps it: an exit the parent did not cause fails the test, unless the child
// Finishes and exited with status 0.
func (p *Process) watch(r *run, out *os.File) {
	prefix := fmt.Sprintf("[%s#%d] ", p.spec.Name, r.n)
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	readied := false
	for sc.Scan() {
		line := sc.Text()
		if line == readyLine && !readied {
			readied = true
			close(r.ready)
			continue
		}
		p.forward(prefix + line)
	}
	if err := sc.Err(); err != nil {
		p.forward(prefix + "crashtest: reading the output: " + err.Error())
		_, _ = io.Copy(io.Discard, out) // keep the child from blocking on a full pipe
	}
	_ = out.Close()
	r.err = r.cmd.Wait()
	r.state = r.cmd.ProcessState
	if !r.expected.Load() {
		if r.err == nil && p.spec.Finishes {
			p.mu.Lock()
			p.finished = true
			p.mu.Unlock()
		} else {
			status := "status 0"
			if r.err != nil {
				status = r.err.Error()
			}
			p.t.Errorf("crashtest: %s (start %d) exited on its own: %s", p.spec.Name, r.n, status)
		}
	}
	close(r.done)
}

func (p *Process) forward(line string) {
	if p.spec.Output != nil {
		_, _ = io.WriteString(p.spec.Output, line+"\n")
		return
	}
	p.t.Log(line)
}

// childEnv returns env with the variables of add set, replacing any of the same name.
func childEnv(env, add []string) []string {
	names := make(map[string]bool, len(add))
	for _, kv := range add {
		name, _, _ := strings.Cut(kv, "=")
		names[name] = true
	}
	out := make([]string, 0, len(env)+len(add))
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); !names[name] {
			out = append(out, kv)
		}
	}
	return append(out, add...)
}

// errExited is Chaos's error for a child that exited when the parent did not cause it.
var errExited = errors.New("crashtest: a child exited on its own")
