package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/feedkit/feedkit/carousel"
)

// outcome is what a run did, as its summary tells it.
type outcome struct {
	status      carousel.Status
	republished map[string]int // items each cycle republished in this run
	failed      int            // publications that failed in this run
	got         receipt        // what the local notifier received
	local       bool           // the notifier is the local one, so got is the whole story
	leased      bool           // a lease decides which instance is active (-pg)
	notifierURL string
	err         error // the run's own failure, if any
}

// printSummary writes where every cycle stopped, what the local notifier received, and
// last the verdict, which it returns as an error when the run failed.
func printSummary(out io.Writer, o outcome) error {
	st := o.status
	fmt.Fprintln(out)
	switch {
	case !o.leased:
		fmt.Fprintln(out, "The run is over: the cycles stopped and saved their progress.")
	case st.Active:
		fmt.Fprintf(out, "The run is over: this instance held the lease (generation %d); the cycles stopped and saved their progress.\n", st.Generation)
	default:
		fmt.Fprintln(out, "The run is over: this instance was passive at the end (another instance holds the lease).")
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "cycle\ttype\titeration\tdone in iteration\tfailed\tinterval\tsource")
	var failing []string
	for _, c := range st.Cycles {
		m := c.Metadata
		source := "ok"
		if m.Has(carousel.Unhealthy) {
			source = "failing"
			failing = append(failing, fmt.Sprintf("  %s: %s", c.ID, m.LastError))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d/%d\t%d\t%v\t%s\n", c.ID, c.Config.Type, m.Iteration, m.Completed, m.Total, m.Errors,
			forPeople(m.Throttle), source)
	}
	tw.Flush()
	fmt.Fprintln(out, "(done: items republished or failed in the current iteration, of its total; failed: those that failed to republish; "+
		"interval: the time between two republications; source: whether reading the collection works)")
	for _, f := range failing {
		fmt.Fprintln(out, f)
	}
	got := o.got
	if o.local {
		fmt.Fprintf(out, "The local notifier received %s (%d distinct) and refused %s.\n", items(got.total), got.distinct, requests(got.bad))
		byOrigin := make([]string, 0, len(got.byOrigin))
		for _, origin := range slices.Sorted(maps.Keys(got.byOrigin)) {
			byOrigin = append(byOrigin, fmt.Sprintf("%s %d", origin, got.byOrigin[origin]))
		}
		if len(byOrigin) > 0 {
			fmt.Fprintf(out, "  by origin: %s\n", strings.Join(byOrigin, ", "))
		}
		fmt.Fprintf(out, "  %s received again in the same iteration of their cycle (what a restart or a failover republishes)\n", items(got.repeated))
	}

	total := 0
	for _, n := range o.republished {
		total += n
	}
	var failure error
	switch {
	case o.err != nil:
		failure = o.err
	case o.local && got.bad > 0:
		failure = fmt.Errorf("the notifier refused %s", requests(got.bad))
	case o.leased && !st.Active && total == 0:
		fmt.Fprintln(out, "OK: this instance stayed passive while another held the lease, so it republished nothing")
		return nil
	case total == 0 && o.failed > 0:
		failure = fmt.Errorf("nothing was republished; %s failed to republish (the warnings say why)", items(o.failed))
	case total == 0:
		failure = errors.New("nothing was republished")
	}
	if failure != nil {
		fmt.Fprintf(out, "FAILED: %v\n", failure)
		return reported{failure}
	}
	to := "the local notifier, which accepted every one"
	if !o.local {
		to = o.notifierURL
	}
	if o.failed > 0 {
		to += fmt.Sprintf("; %d failed to republish (the warnings say why)", o.failed)
	}
	fmt.Fprintf(out, "OK: %s republished to %s\n", items(total), to)
	return nil
}

// reported is a run's failure that its verdict has printed already.
type reported struct{ error }

func (r reported) Unwrap() error { return r.error }

// requests is "1 request" or "n requests".
func requests(n int) string {
	if n == 1 {
		return "1 request"
	}
	return fmt.Sprintf("%d requests", n)
}

// printProgress writes one line: how long the run has gone on, how many items each
// cycle has republished since it started, and how many failed.
func printProgress(out io.Writer, elapsed time.Duration, st carousel.Status, republished map[string]int, failed int) {
	total, parts := 0, make([]string, 0, len(st.Cycles))
	for _, c := range st.Cycles {
		n := republished[c.ID]
		total += n
		parts = append(parts, fmt.Sprintf("%s %d", c.ID, n))
	}
	line := fmt.Sprintf("after %v: %s republished so far (%s)", forPeople(elapsed), items(total), strings.Join(parts, ", "))
	if failed > 0 {
		line += fmt.Sprintf("; %d failed to republish", failed)
	}
	if !st.Active {
		line += "; passive: another instance holds the lease"
	}
	fmt.Fprintln(out, line)
}

// items is "1 item" or "n items".
func items(n int) string {
	if n == 1 {
		return "1 item"
	}
	return fmt.Sprintf("%d items", n)
}

// forPeople rounds d as a person reads it: to the second from a minute up, to a tenth of
// a second from a second up, to the millisecond below.
func forPeople(d time.Duration) time.Duration {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	default:
		return d.Round(time.Millisecond)
	}
}
