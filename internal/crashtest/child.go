package crashtest

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"
)

// Variables of the environment a child runs in.
const (
	// RoleVar holds the name of the child test a child process runs; a child test
	// that does not find its own name there skips.
	RoleVar = "FEEDKIT_CRASH_ROLE"
	// StartVar holds which start of its Process a child is: 1 for the first, 2 after
	// the first restart, and so on.
	StartVar = "FEEDKIT_CRASH_START"
)

// readyLine is the line a child writes to its stdout to tell its parent it is at work.
const readyLine = "crashtest: ready"

// Child is called first by a child test. Unless RoleVar names the test, it skips it (a
// plain run of the package's tests, or a crash run, passes over the children). For the
// child it returns a context that ends when the parent stops the child (Process.Stop)
// or goes away, or when the test ends: the child's work runs until then and returns,
// so that a stopped child exits cleanly.
func Child(t *testing.T) context.Context {
	t.Helper()
	if os.Getenv(RoleVar) != t.Name() {
		t.Skipf("crashtest: a child process of a crash test, run by its parent (with %s=%s)", RoleVar, t.Name())
	}
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	go func() {
		// The parent holds the other end: EOF means it stopped the child, or died.
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	return ctx
}

// Ready tells the parent that the child is at work (connected, its tables ready), so
// that the parent's next kill lands under load; Process.Ready is closed when it does.
func Ready() {
	fmt.Fprintln(os.Stdout, readyLine)
}

// StartNumber returns which start of its Process the child is (StartVar): 1 for the
// first, 2 after the first restart. A child may put it in what it records, to tell
// what each of its lives did.
func StartNumber() int {
	n, _ := strconv.Atoi(os.Getenv(StartVar))
	return n
}
