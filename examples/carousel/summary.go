package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/feedkit/feedkit/carousel"
)

// printSummary writes every cycle's progress and what the local notifier received.
func printSummary(out io.Writer, st carousel.Status, got receipt, local bool) {
	fmt.Fprintf(out, "\nscheduler: started=%v active=%v generation=%d\n", st.Started, st.Active, st.Generation)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "cycle\ttype\titeration\tcompleted\terrors\tthrottle\tstates")
	for _, c := range st.Cycles {
		m := c.Metadata
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d/%d\t%d\t%v\t%v\n", c.ID, c.Config.Type, m.Iteration, m.Completed, m.Total, m.Errors, m.Throttle, m.States)
	}
	tw.Flush()
	if !local {
		return
	}
	fmt.Fprintf(out, "notifier: %d publications of %d distinct items, %d refused\n", got.total, got.distinct, got.bad)
	fmt.Fprintf(out, "  %d received again in the same iteration (after a restart or a failover)\n", got.repeated)
	for _, o := range slices.Sorted(maps.Keys(got.byOrigin)) {
		fmt.Fprintf(out, "  %s: %d\n", o, got.byOrigin[o])
	}
}

// printProgress writes one line: how long the run has gone on, and how many items each
// cycle has republished since it started.
func printProgress(out io.Writer, elapsed time.Duration, st carousel.Status, republished map[string]int) {
	total, parts := 0, make([]string, 0, len(st.Cycles))
	for _, c := range st.Cycles {
		n := republished[c.ID]
		total += n
		parts = append(parts, fmt.Sprintf("%s %d", c.ID, n))
	}
	line := fmt.Sprintf("after %v: %s republished so far (%s)", forPeople(elapsed), items(total), strings.Join(parts, ", "))
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
