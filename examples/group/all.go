package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// errFailed is the error of a run whose verdict is FAILED: the verdict says why.
var errFailed = errors.New("the run failed")

// guard bounds each wait of -role all for something that only a broken run would not
// reach: the producer up again, a child's exit.
const guard = 2 * time.Minute

// child is a process -role all started: this program with another role.
type child struct {
	name string
	role string
	cmd  *exec.Cmd
	done chan struct{} // closed once it exited and its output is read
	err  error         // its exit's, once done

	// Kept by the supervisor, under its mu.
	stopping  bool     // the supervisor stopped it
	processed uint64   // a worker's last progress line
	ups       int      // a worker's producer ups
	up        bool     // a worker's last status
	summary   *summary // a worker's last line
}

// supervisor is -role all: it starts the children, reads their output, and keeps what
// the story needs of it.
type supervisor struct {
	o   options
	out *printer
	exe string

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced at every change
	children []*child
	api      string // the feed's API
	outage   bool   // the feed said the outage is over
	sent     int64  // the feed's count of live event messages sent; -1 before it ends
	active   string // the ingress that said last that it is active
	actives  int    // how many times an ingress became active
	width    int
}

func runAll(ctx context.Context, o options, out *printer) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	ingresses := 1
	if o.pg != "" {
		ingresses = 2
	}
	s := &supervisor{o: o, out: out, exe: exe, changed: make(chan struct{}), sent: -1, width: len("ingress-a")}
	for i := range o.workers {
		s.width = max(s.width, len("worker-"+shardList(shardsOf(o, i))))
	}
	store := "in memory"
	if o.pg != "" {
		store = "in PostgreSQL, with the ingresses' lease"
	}
	start := time.Now()
	ingressText := "1 ingress"
	if ingresses > 1 {
		ingressText = "2 ingresses (an active one and a standby)"
	}
	s.say("a group on RabbitMQ for %v: the feed (%.0f event messages/s), %s, %d workers on %d shards; recovery point %s",
		o.duration, o.rate, ingressText, o.workers, o.k, store)
	defer s.killAll() // whatever ends the run early

	outageAt := o.duration / 3
	feedProc, err := s.start("feed", roleFeed, "-listen", "127.0.0.1:0", "-rate", ftoa(o.rate), "-matches", strconv.Itoa(o.matches),
		"-seed", strconv.FormatUint(o.seed, 10), "-outage", o.outage.String(), "-outage-at", outageAt.String())
	if err != nil {
		return err
	}
	if !s.waitFor(ctx, guard, func() bool { return s.api != "" || isDone(feedProc) }) || s.api == "" {
		return s.fail(ctx, "the feed did not tell its API's address")
	}
	var ingress []*child
	for i := range ingresses {
		c, err := s.start("ingress-"+string(rune('a'+i)), roleIngress, "-api", s.api, "-shards", strconv.Itoa(o.k), "-pg="+o.pg)
		if err != nil {
			return err
		}
		ingress = append(ingress, c)
	}
	var workers []*child
	for i := range o.workers {
		shards := shardList(shardsOf(o, i))
		c, err := s.start("worker-"+shards, roleWorker, "-shards", shards, "-of", strconv.Itoa(o.k),
			"-threads", strconv.Itoa(o.threads), "-work", o.work.String())
		if err != nil {
			return err
		}
		workers = append(workers, c)
	}

	// The story, driven by what the children say: the outage a third of the way in (the
	// feed's own timer); two thirds in, once the producer is up again on every worker,
	// the fail-over; at -duration, once it is up again after both, the end.
	var (
		failoverDue <-chan time.Time
		failedOver  bool
		marks       map[*child]int // the workers' ups when the fail-over began
		interrupted bool
		gaveUp      string
	)
	if ingresses > 1 {
		failoverDue = time.After(2 * o.duration / 3)
	}
	finish := time.After(o.duration)
	var due, finishDue bool
	var giveUp <-chan time.Time
	upsAtOutage := map[*child]int{}
	upAgain := func(since map[*child]int) bool {
		for _, w := range workers {
			if s.is(func() bool { return w.ups <= since[w] || !w.up }) {
				return false
			}
		}
		return true
	}
	outageRecovered := func() bool {
		if o.outage == 0 {
			return upAgain(nil)
		}
		return s.is(func() bool { return s.outage }) && upAgain(upsAtOutage)
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
story:
	for {
		s.mu.Lock()
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-tick.C:
		case <-failoverDue:
			failoverDue, due = nil, true
		case <-finish:
			finish, finishDue = nil, true
			giveUp = time.After(guard)
		case <-giveUp:
			gaveUp = fmt.Sprintf("the producer was not up again on every worker within %v of -duration", guard)
			s.say("%s: stopping", gaveUp)
			break story
		case <-ctx.Done():
			interrupted = true
			s.say("interrupted: stopping the children in order, and counting")
			break story
		}
		if c := s.exitedEarly(); c != nil {
			gaveUp = fmt.Sprintf("%s exited early (%v)", c.name, c.err)
			s.say("%s: stopping", gaveUp)
			break story
		}
		s.mu.Lock()
		if s.outage && len(upsAtOutage) == 0 {
			// The workers' ups when the outage ended: it was down by then.
			for _, w := range workers {
				upsAtOutage[w] = w.ups
			}
		}
		s.mu.Unlock()
		if due && !failedOver && outageRecovered() {
			if active := s.find(get(s, func() string { return s.active })); active != nil {
				failedOver = true
				marks = map[*child]int{}
				s.mu.Lock()
				for _, w := range workers {
					marks[w] = w.ups
				}
				s.mu.Unlock()
				s.say("fail-over: stopping the active ingress, %s; the standby takes over from the recovery point it saved", active.name)
				s.stop(active)
			}
		}
		if finishDue && outageRecovered() && (failoverDue == nil && !due || failedOver && upAgain(marks)) {
			break story
		}
	}

	// The end: the feed stops and says what it sent; once the workers have processed it
	// (their counts stay still), the ingresses stop, then the workers, each printing
	// what it processed.
	s.say("stopping the feed")
	s.stop(feedProc)
	s.drain(ctx, workers)
	for _, c := range ingress {
		s.stop(c)
	}
	for _, c := range workers {
		s.stop(c)
	}
	return s.verdict(verdictInput{start: start, workers: workers, ingress: ingress, failover: failedOver,
		interrupted: interrupted, gaveUp: gaveUp})
}

// shardsOf returns the shards of worker i of -workers: K split into runs, as even as
// can be.
func shardsOf(o options, i int) []int {
	var list []int
	for n := i * o.k / o.workers; n < (i+1)*o.k/o.workers; n++ {
		list = append(list, n)
	}
	return list
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// start starts this program with role and args, its output printed and read.
func (s *supervisor) start(name, role string, args ...string) (*child, error) {
	args = append([]string{"-role", role, "-amqp", s.o.amqpURL, "-group-amqp", s.o.groupAMQP, "-exchange", s.o.exchange,
		"-prefix", s.o.prefix, "-progress", s.o.progress.String()}, args...)
	cmd := exec.Command(s.exe, args...)
	cmd.Env = os.Environ()
	ownGroup(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	c := &child{name: name, role: role, cmd: cmd, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	s.mu.Lock()
	s.children = append(s.children, c)
	s.width = max(s.width, len(name))
	s.mu.Unlock()
	var reading sync.WaitGroup
	reading.Go(func() { s.read(c, stdout, "|") })
	reading.Go(func() { s.read(c, stderr, "!") })
	go func() {
		reading.Wait()
		err := cmd.Wait()
		s.mu.Lock()
		c.err = err
		close(c.done)
		s.notifyLocked()
		s.mu.Unlock()
	}()
	return c, nil
}

// read prints c's lines, prefixed by its name, and keeps what they say.
func (s *supervisor) read(c *child, r io.Reader, mark string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		s.mu.Lock()
		w := s.width
		s.mu.Unlock()
		s.out.printf("%-*s %s %s", w, c.name, mark, line)
		s.observe(c, line)
	}
}

// observe keeps what a line of c's says.
func (s *supervisor) observe(c *child, line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch c.role {
	case roleFeed:
		switch {
		case strings.HasPrefix(line, apiPrefix):
			s.api = strings.TrimPrefix(line, apiPrefix)
		case strings.HasPrefix(line, outageOver):
			s.outage = true
		case strings.HasPrefix(line, sentPrefix):
			if n, ok := leadingNumber(strings.TrimPrefix(line, sentPrefix)); ok {
				s.sent = int64(n)
			}
		}
	case roleIngress:
		switch {
		case strings.HasPrefix(line, activeLine):
			s.active = c.name
			s.actives++
		case strings.HasPrefix(line, passiveLine) && s.active == c.name:
			s.active = ""
		}
	case roleWorker:
		switch {
		case strings.HasPrefix(line, processedPrefix):
			if n, ok := leadingNumber(strings.TrimPrefix(line, processedPrefix)); ok {
				c.processed = n
			}
		case strings.HasPrefix(line, statusPrefix) && strings.Contains(line, upMarker):
			c.ups++
			c.up = true
		case strings.HasPrefix(line, statusPrefix) && strings.Contains(line, downMarker):
			c.up = false
		case strings.HasPrefix(line, summaryPrefix):
			var sum summary
			if json.Unmarshal([]byte(strings.TrimPrefix(line, summaryPrefix)), &sum) == nil {
				c.summary = &sum
				c.processed = sum.Processed
			}
		}
	}
	s.notifyLocked()
}

// leadingNumber reads the number that text starts with, up to a space.
func leadingNumber(text string) (uint64, bool) {
	word, _, _ := strings.Cut(text, " ")
	n, err := strconv.ParseUint(word, 10, 64)
	return n, err == nil
}

func (s *supervisor) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// get reads what f returns under the supervisor's lock.
func get[T any](s *supervisor, f func() T) T {
	s.mu.Lock()
	defer s.mu.Unlock()
	return f()
}

func (s *supervisor) is(f func() bool) bool { return get(s, f) }

// waitFor waits until cond holds, or ctx ends or bound passes: it reports whether cond
// holds.
func (s *supervisor) waitFor(ctx context.Context, bound time.Duration, cond func() bool) bool {
	timeout := time.After(bound)
	for {
		s.mu.Lock()
		ok, changed := cond(), s.changed
		s.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-changed:
		case <-timeout:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

func isDone(c *child) bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// find returns the child named name, nil for none.
func (s *supervisor) find(name string) *child {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.children {
		if c.name == name && name != "" {
			return c
		}
	}
	return nil
}

// exitedEarly returns a child that exited before it was stopped.
func (s *supervisor) exitedEarly() *child {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.children {
		if !c.stopping && isDone(c) {
			return c
		}
	}
	return nil
}

// stop asks c to stop (SIGTERM) and waits for its exit, killing it after guard.
func (s *supervisor) stop(c *child) {
	s.mu.Lock()
	c.stopping = true
	s.mu.Unlock()
	if !isDone(c) {
		_ = terminate(c.cmd.Process)
	}
	select {
	case <-c.done:
	case <-time.After(guard):
		s.say("%s did not stop within %v: killing it", c.name, guard)
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// terminate asks p to stop, as Ctrl-C would; where signals are not, it kills it.
func terminate(p *os.Process) error {
	if err := p.Signal(syscall.SIGTERM); err != nil {
		return p.Kill()
	}
	return nil
}

// killAll kills the children still running: the run ended early.
func (s *supervisor) killAll() {
	s.mu.Lock()
	children := append([]*child(nil), s.children...)
	s.mu.Unlock()
	for _, c := range children {
		if !isDone(c) {
			_ = c.cmd.Process.Kill()
			<-c.done
		}
	}
}

// fail stops every child and says why the run could not go on.
func (s *supervisor) fail(ctx context.Context, why string) error {
	if ctx.Err() != nil {
		return nil // interrupted before the story began: nothing to tell
	}
	s.killAll()
	s.out.printf("\nFAILED: %s", why)
	return errFailed
}

// say prints a line of the supervisor's own.
func (s *supervisor) say(format string, args ...any) {
	s.mu.Lock()
	w := s.width
	s.mu.Unlock()
	s.out.printf("%-*s | %s", w, "all", fmt.Sprintf(format, args...))
}

// drain waits, once the feed has stopped, until the workers have processed at least
// what it sent and their counts have stayed still for two progress lines (a recovery's
// replay comes on top of the live messages), or -drain passes.
func (s *supervisor) drain(ctx context.Context, workers []*child) {
	sent := get(s, func() int64 { return s.sent })
	if sent < 0 {
		return // the feed did not say: the verdict says so
	}
	s.say("the feed sent %d live event messages: waiting for the workers to process them (at most %v)", sent, s.o.drain)
	total := func() uint64 {
		var n uint64
		for _, w := range workers {
			n += w.processed
		}
		return n
	}
	deadline := time.After(s.o.drain)
	tick := time.NewTicker(s.o.progress)
	defer tick.Stop()
	last, still := get(s, total), 0
	for {
		select {
		case <-tick.C:
		case <-deadline:
			s.say("gave up waiting after %v: the workers processed %d", s.o.drain, get(s, total))
			return
		case <-ctx.Done():
			return
		}
		n := get(s, total)
		if n == last {
			still++
		} else {
			last, still = n, 0
		}
		if n >= uint64(sent) && still >= 2 {
			return
		}
	}
}

type verdictInput struct {
	start       time.Time
	workers     []*child
	ingress     []*child
	failover    bool
	interrupted bool
	gaveUp      string
}

// verdict prints the run's summary and its last line, OK or FAILED, and returns
// errFailed for FAILED.
func (s *supervisor) verdict(in verdictInput) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := func(format string, args ...any) { s.out.printf(format, args...) }
	out("\nsummary after %.1fs", time.Since(in.start).Seconds())
	line := func(label, text string) { out("  %-*s  %s", max(s.width, 10), label, text) }
	var problems []string
	if s.sent >= 0 {
		line("feed", fmt.Sprintf("sent %d live event messages", s.sent))
	} else {
		problems = append(problems, "the feed did not say how many messages it sent")
	}
	var processed, replayed uint64
	byType := map[string]uint64{}
	minUps := -1
	for _, w := range in.workers {
		sum := w.summary
		if sum == nil {
			problems = append(problems, w.name+" printed no summary")
			continue
		}
		processed += sum.Processed
		replayed += sum.Replayed
		for k, v := range sum.ByType {
			byType[k] += v
		}
		if minUps < 0 || sum.Ups < minUps {
			minUps = sum.Ups
		}
		line(w.name, fmt.Sprintf("processed %d (%d of them replayed); producer up %d times, down %d", sum.Processed, sum.Replayed, sum.Ups, sum.Downs))
		if sum.Ups == 0 {
			problems = append(problems, w.name+" never saw the producer up")
		}
	}
	line("workers", fmt.Sprintf("processed %d: %s", processed, byTypeLine(byType)))
	line("ingresses", fmt.Sprintf("%d activations", s.actives))
	for _, c := range s.children {
		if c.err != nil {
			problems = append(problems, fmt.Sprintf("%s exited with %v", c.name, c.err))
		}
	}
	if s.sent >= 0 && processed < uint64(s.sent) {
		problems = append(problems, fmt.Sprintf("the workers processed %d messages, fewer than the %d the feed sent live", processed, s.sent))
	}
	if in.failover && s.actives < 2 {
		problems = append(problems, "no standby ingress took over")
	}
	if in.gaveUp != "" {
		problems = append(problems, in.gaveUp)
	}
	if len(problems) > 0 {
		out("\nFAILED: %s", strings.Join(problems, "; "))
		return errFailed
	}
	story := "the first recovery"
	if s.o.outage > 0 {
		story += ", the outage's"
	}
	if in.failover {
		story += " and the fail-over's"
	}
	if in.interrupted {
		story = "what the run got to before it was interrupted"
	}
	out("\nOK: %d workers processed %d messages (%d replayed) for the %d live event messages the feed sent; each saw the producer up after %s (at least %d ups)",
		len(in.workers), processed, replayed, s.sent, story, minUps)
	return nil
}
