package crashtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// modeVar tells TestCrashChildHarness what to do.
const modeVar = "FEEDKIT_CRASHTEST_MODE"

// TestCrashChildHarness is the child of this package's tests. In mode "serve" it says
// hello, calls Ready and works until stopped; "finish" returns at once; "fail" fails.
func TestCrashChildHarness(t *testing.T) {
	ctx := Child(t)
	fmt.Printf("hello start=%d\n", StartNumber())
	switch os.Getenv(modeVar) {
	case "finish":
		return
	case "fail":
		t.Fatal("failing as asked")
	}
	Ready()
	<-ctx.Done()
	fmt.Println("bye")
}

// lines is an io.Writer safe for concurrent use.
type lines struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// guard bounds a wait that only a hang would exceed.
func guard(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func wait(t *testing.T, ctx context.Context, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-ctx.Done():
		t.Fatalf("%s: %v", what, ctx.Err())
	}
}

func TestProcessKillRestartStop(t *testing.T) {
	ctx := guard(t)
	var out lines
	p := Start(t, Spec{Name: "echo", Test: "TestCrashChildHarness", Env: []string{modeVar + "=serve"}, Output: &out})
	wait(t, ctx, p.Ready(), "first start ready")
	first := p.Done()
	require.True(t, p.Kill(), "the kill ended it")
	wait(t, ctx, first, "killed")
	assert.False(t, p.Kill(), "a second kill finds it gone")
	assert.Equal(t, 1, p.Kills())
	assert.False(t, p.Finished())

	p.Restart()
	wait(t, ctx, p.Ready(), "second start ready")
	assert.Equal(t, 2, p.Starts())
	require.NoError(t, p.Stop(ctx), "a stopped child exits cleanly")
	assert.NoError(t, p.Err())
	assert.Equal(t, 1, p.Kills())

	got := out.String()
	assert.Contains(t, got, "[echo#1] hello start=1\n")
	assert.Contains(t, got, "[echo#2] hello start=2\n")
	assert.Contains(t, got, "[echo#2] bye\n", "Stop ends Child's context")
	assert.NotContains(t, got, "[echo#1] bye", "SIGKILL leaves no time for a goodbye")
	assert.NotContains(t, got, readyLine, "the ready line is the harness's, not forwarded")
}

// recorder is a testing.TB that records Errorf instead of failing the test.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

func TestProcessExitOnItsOwn(t *testing.T) {
	ctx := guard(t)
	for _, tc := range []struct {
		mode     string
		finishes bool
		finished bool
		failure  string
	}{
		{mode: "finish", finishes: true, finished: true},
		{mode: "finish", failure: "crashtest: child (start 1) exited on its own: status 0"},
		{mode: "fail", finishes: true, failure: "crashtest: child (start 1) exited on its own: exit status 1"},
	} {
		t.Run(fmt.Sprintf("%s/finishes=%v", tc.mode, tc.finishes), func(t *testing.T) {
			rec := &recorder{TB: t}
			var out lines
			p := Start(rec, Spec{Name: "child", Test: "TestCrashChildHarness", Env: []string{modeVar + "=" + tc.mode},
				Finishes: tc.finishes, Output: &out})
			wait(t, ctx, p.Done(), "exit")
			assert.Equal(t, tc.finished, p.Finished())
			n, err := Chaos{Kills: 3}.Run(ctx, rand.New(rand.NewPCG(1, 2)), p)
			assert.Zero(t, n)
			if tc.failure == "" {
				assert.Empty(t, rec.errors())
				assert.NoError(t, err, "a child whose work ended is killed no more")
				return
			}
			assert.Equal(t, []string{tc.failure}, rec.errors(), out.String())
			assert.ErrorIs(t, err, errExited)
			assert.ErrorContains(t, err, "child")
		})
	}
}

func TestChaosKillsAndRestarts(t *testing.T) {
	ctx := guard(t)
	var out lines
	procs := []*Process{
		Start(t, Spec{Name: "a", Test: "TestCrashChildHarness", Env: []string{modeVar + "=serve"}, Output: &out}),
		Start(t, Spec{Name: "b", Test: "TestCrashChildHarness", Env: []string{modeVar + "=serve"}, Output: &out}),
	}
	var events, victims int
	var awaited []int
	c := Chaos{Kills: 6, MaxDelay: 5 * time.Millisecond, AllAtOnce: 0.5,
		Await: func(ctx context.Context, kill int) error {
			awaited = append(awaited, kill)
			return nil
		},
		OnKill: func(v []*Process) {
			events++
			victims += len(v)
		}}
	n, err := c.Run(ctx, rand.New(rand.NewPCG(7, 7)), procs...)
	require.NoError(t, err)
	assert.Equal(t, 6, n)
	assert.Equal(t, 6, events)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5}, awaited, "Await before each kill, told which")
	killed := 0
	for _, p := range procs {
		killed += p.Kills()
		assert.Equal(t, p.Kills()+1, p.Starts(), "%s restarted after each kill", p.Name())
		wait(t, ctx, p.Ready(), p.Name()+" ready after its restart")
		require.NoError(t, p.Stop(ctx))
	}
	assert.Equal(t, victims, killed)
	assert.GreaterOrEqual(t, killed, 6)
	assert.LessOrEqual(t, killed, 12)
}

func TestChaosPick(t *testing.T) {
	ctx := guard(t)
	var out lines
	a := Start(t, Spec{Name: "a", Test: "TestCrashChildHarness", Env: []string{modeVar + "=serve"}, Output: &out})
	b := Start(t, Spec{Name: "b", Test: "TestCrashChildHarness", Env: []string{modeVar + "=serve"}, Output: &out})
	var offered []int
	n, err := Chaos{Kills: 4, Pick: func(live []*Process) *Process {
		offered = append(offered, len(live))
		return live[len(live)-1]
	}}.Run(ctx, rand.New(rand.NewPCG(3, 3)), a, b)
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	assert.Equal(t, []int{2, 2, 2, 2}, offered, "Pick is offered every child at work, once per kill")
	assert.Zero(t, a.Kills(), "never picked")
	assert.Equal(t, 4, b.Kills(), "the pick is the victim")
	for _, p := range []*Process{a, b} {
		wait(t, ctx, p.Ready(), p.Name()+" ready")
		require.NoError(t, p.Stop(ctx))
	}
}

func TestChaosAwaitEndsRun(t *testing.T) {
	ctx := guard(t)
	var out lines
	p := Start(t, Spec{Name: "a", Test: "TestCrashChildHarness", Env: []string{modeVar + "=serve"}, Output: &out})
	stop := errors.New("stop")
	n, err := Chaos{Kills: 3, Await: func(ctx context.Context, kill int) error {
		if kill == 1 {
			return stop
		}
		return nil
	}}.Run(ctx, rand.New(rand.NewPCG(1, 1)), p)
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, 1, n)
	assert.Equal(t, 1, p.Kills())
	wait(t, ctx, p.Ready(), "ready after its restart")
	require.NoError(t, p.Stop(ctx))
}

func TestChaosSameSeedSameSchedule(t *testing.T) {
	// The schedule is the draws: the same seed draws the same pauses and victims.
	draw := func(seed uint64) []string {
		r := rand.New(rand.NewPCG(seed, seed))
		var s []string
		for range 20 {
			s = append(s, fmt.Sprint(Between(r, time.Millisecond, time.Second), r.Float64() < 0.25, r.IntN(3)))
		}
		return s
	}
	assert.Equal(t, draw(42), draw(42))
	assert.NotEqual(t, draw(42), draw(43))
}

func TestBetween(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for range 1000 {
		d := Between(r, 10*time.Millisecond, 20*time.Millisecond)
		require.GreaterOrEqual(t, d, 10*time.Millisecond)
		require.Less(t, d, 20*time.Millisecond)
	}
	assert.Equal(t, 5*time.Millisecond, Between(r, 5*time.Millisecond, 5*time.Millisecond))
}

func TestPauseEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, Pause(ctx, time.Hour), context.Canceled)
	assert.NoError(t, Pause(t.Context(), 0))
}

func TestInt(t *testing.T) {
	t.Setenv("FEEDKIT_CRASHTEST_N", "")
	assert.Equal(t, 8, Int(t, "FEEDKIT_CRASHTEST_N", 8))
	t.Setenv("FEEDKIT_CRASHTEST_N", "12")
	assert.Equal(t, 12, Int(t, "FEEDKIT_CRASHTEST_N", 8))
	for _, bad := range []string{"0", "-1", "x"} {
		t.Setenv("FEEDKIT_CRASHTEST_N", bad)
		rec := &fatalRecorder{TB: t}
		func() {
			defer func() { _ = recover() }()
			Int(rec, "FEEDKIT_CRASHTEST_N", 8)
		}()
		assert.Contains(t, rec.msg, `FEEDKIT_CRASHTEST_N="`+bad+`" must be a positive integer`)
	}
}

// fatalRecorder records Fatalf's message and panics to stop the caller, as FailNow's
// Goexit would.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	panic(errors.New(r.msg))
}

func TestRandReplaysItsSeed(t *testing.T) {
	t.Setenv(SeedVar, "1234")
	a, b := Rand(t, "test"), Rand(t, "test")
	assert.Equal(t, a.Uint64(), b.Uint64())
	t.Setenv(SeedVar, "nope")
	rec := &fatalRecorder{TB: t}
	func() {
		defer func() { _ = recover() }()
		Rand(rec, "test")
	}()
	assert.Contains(t, rec.msg, SeedVar)
}

func TestCounts(t *testing.T) {
	c := NewCounts("workflow")
	c.Set("processes", 2000)
	c.Set("kills", 3)
	c.Set("processes", 2001)
	assert.Equal(t, "crash: workflow: processes=2001 kills=3", c.String())
	assert.Equal(t, 3, c.Get("kills"))
	assert.Zero(t, c.Get("none"))
}

func TestChildEnvReplaces(t *testing.T) {
	got := childEnv([]string{"A=1", RoleVar + "=old", "B=2"}, []string{RoleVar + "=new", "C=3"})
	assert.Equal(t, []string{"A=1", "B=2", RoleVar + "=new", "C=3"}, got)
	assert.False(t, strings.Contains(strings.Join(got, " "), "old"))
}
