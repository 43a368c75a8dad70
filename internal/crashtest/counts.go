package crashtest

import (
	"fmt"
	"strings"
)

// Counts are a crash test's results, in the order they were set, printed as one line:
//
//	crash: workflow: processes=2000 finished=2000 kills=8 ...
//
// which scripts/test.sh crash gathers from the output.
type Counts struct {
	component string
	names     []string
	values    map[string]int
}

// NewCounts returns empty counts of component (e.g. "workflow").
func NewCounts(component string) *Counts {
	return &Counts{component: component, values: map[string]int{}}
}

// Set sets the count name (a word without spaces or "=").
func (c *Counts) Set(name string, n int) {
	if _, ok := c.values[name]; !ok {
		c.names = append(c.names, name)
	}
	c.values[name] = n
}

// Get returns the count name, 0 if not set.
func (c *Counts) Get(name string) int { return c.values[name] }

// String returns the line Print prints, without its newline.
func (c *Counts) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "crash: %s:", c.component)
	for _, name := range c.names {
		fmt.Fprintf(&b, " %s=%d", name, c.values[name])
	}
	return b.String()
}

// Print prints the counts to stdout, as a line of their own, so that the output of go
// test -v shows it at the start of a line whatever the test logs around it.
func (c *Counts) Print() {
	fmt.Println(c.String())
}
