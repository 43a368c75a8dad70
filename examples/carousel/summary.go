package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"

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
