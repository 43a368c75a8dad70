//go:build crash

package group_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedkit/feedkit/internal/crashtest"
)

// crashLife is one life of a child: its name and start number.
type crashLife struct {
	name  string
	start int
}

func (l crashLife) String() string { return fmt.Sprintf("%s#%d", l.name, l.start) }

// crashLifeOf returns the life p runs now.
func crashLifeOf(p *crashtest.Process) crashLife { return crashLife{p.Name(), p.Starts()} }

// crashLine is a line a child told the parent (see crash_child_test.go).
type crashLine struct {
	life  crashLife
	words []string
	at    time.Time
}

func (l crashLine) is(words ...string) bool {
	if len(l.words) < len(words) {
		return false
	}
	for i, w := range words {
		if l.words[i] != w {
			return false
		}
	}
	return true
}

// arg returns the line's word i as an integer, -1 if it is none.
func (l crashLine) arg(i int) int64 {
	if i >= len(l.words) {
		return -1
	}
	n, err := strconv.ParseInt(l.words[i], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// crashLog is the children's Output: it keeps their "crashgroup:" lines, in the order
// they came, and logs the others. Waiters are woken at every line kept.
type crashLog struct {
	t *testing.T
	// diagnose, when set, describes the state of what the children run, for a
	// failure.
	diagnose func() string

	mu      sync.Mutex
	lines   []crashLine
	changed chan struct{} // closed and replaced at every line
	errors  int
	lost    map[string]bool // the worker lives that lost their connection
}

func newCrashLog(t *testing.T) *crashLog { return &crashLog{t: t, changed: make(chan struct{})} }

// Write takes the lines crashtest forwards, each "[name#start] text".
func (l *crashLog) Write(p []byte) (int, error) {
	for line := range strings.SplitSeq(strings.TrimRight(string(p), "\n"), "\n") {
		l.take(line)
	}
	return len(p), nil
}

func (l *crashLog) take(line string) {
	var life crashLife
	rest, ok := "", false
	if head, tail, found := strings.Cut(line, "] "); found && strings.HasPrefix(head, "[") {
		name, start, _ := strings.Cut(head[1:], "#")
		n, err := strconv.Atoi(start)
		life, rest, ok = crashLife{name, n}, tail, err == nil
	}
	text, kept := strings.CutPrefix(rest, "crashgroup: ")
	if !ok || !kept {
		l.t.Log(line)
		return
	}
	words := strings.Fields(text)
	if len(words) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if words[0] == "error" {
		l.errors++
		l.t.Log(line)
		if strings.Contains(text, "worker lost its connection") {
			if l.lost == nil {
				l.lost = map[string]bool{}
			}
			l.lost[life.String()] = true
		}
	}
	l.lines = append(l.lines, crashLine{life: life, words: words, at: time.Now()})
	close(l.changed)
	l.changed = make(chan struct{})
}

// mark returns the number of lines kept so far: a wait for what comes next looks
// from there.
func (l *crashLog) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

// await waits until cond, called under the log's lock with the lines so far, holds:
// woken by every line, for at most crashGuard.
func (l *crashLog) await(ctx context.Context, what string, cond func(lines []crashLine) bool) error {
	ctx, cancel := context.WithTimeout(ctx, crashGuard)
	defer cancel()
	for {
		l.mu.Lock()
		ok, changed := cond(l.lines), l.changed
		l.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		}
	}
}

// find returns the index of the first line from from on that match accepts, -1 if none.
func crashFind(lines []crashLine, from int, match func(crashLine) bool) int {
	for i := max(from, 0); i < len(lines); i++ {
		if match(lines[i]) {
			return i
		}
	}
	return -1
}

// activeIngress returns the ingress of procs whose life now last said it is active, and
// the epoch, or nil.
func (l *crashLog) activeIngress(procs []*crashtest.Process) (*crashtest.Process, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range procs {
		life := crashLifeOf(p)
		active, epoch := false, int64(0)
		for _, line := range l.lines {
			if line.life == life && (line.is("active") || line.is("passive")) {
				active, epoch = line.is("active"), line.arg(1)
			}
		}
		if active {
			return p, epoch
		}
	}
	return nil, 0
}

// activeWorker returns the worker of procs whose life now last said it is the active
// consumer of its shard, or nil.
func (l *crashLog) activeWorker(procs []*crashtest.Process) *crashtest.Process {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range procs {
		life, active := crashLifeOf(p), false
		for _, line := range l.lines {
			if line.life == life && line.is("active") {
				active = line.arg(1) == 1
			}
		}
		if active {
			return p
		}
	}
	return nil
}

// diagnosis returns the last lines the children told, and what diagnose says.
func (l *crashLog) diagnosis() string {
	var b strings.Builder
	l.mu.Lock()
	b.WriteString("the children's last lines (but the replays' progress):\n")
	var shown []crashLine
	for _, line := range l.lines {
		if !line.is("replaying") || line.arg(2) == 1 {
			shown = append(shown, line)
		}
	}
	for _, line := range shown[max(0, len(shown)-80):] {
		fmt.Fprintf(&b, "%s %s %s\n", line.at.Format(time.StampMicro), line.life, strings.Join(line.words, " "))
	}
	l.mu.Unlock()
	if l.diagnose != nil {
		b.WriteString(l.diagnose())
	}
	return b.String()
}

// must fails the test at once on err, with the diagnosis.
func (l *crashLog) must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%v\n%s", err, l.diagnosis())
	}
}

// linksLost returns the worker lives that told of a lost connection: the broker gave
// what they held unacknowledged to another consumer, as after a kill.
func (l *crashLog) linksLost() map[string]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]bool{}
	for life := range l.lost {
		out[life] = true
	}
	return out
}
