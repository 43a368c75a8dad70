package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// ChromiumVar holds the Chromium (or Chrome) binary that browser tests run, a path or a
// name on PATH; unset, they run "chromium" from PATH. scripts/test.sh sets it.
const ChromiumVar = "FEEDKIT_CHROMIUM"

// Chromium returns the path of the Chromium binary for a browser test: FEEDKIT_CHROMIUM,
// or "chromium" from PATH. When there is none it skips the test, or fails it when
// CI=true; a FEEDKIT_CHROMIUM that names no program fails it always, since someone meant
// the test to run.
func Chromium(t testing.TB) string {
	t.Helper()
	path, v, msg := findChromium(os.LookupEnv, exec.LookPath)
	switch v {
	case skip:
		t.Skipf("%s", msg)
	case fail:
		t.Fatalf("%s", msg)
	}
	return path
}

// findChromium is Chromium with the environment and exec.LookPath given, so that every
// case is testable: it returns the path, or what to do and why.
func findChromium(lookup func(string) (string, bool), lookPath func(string) (string, error)) (string, verdict, string) {
	if name, ok := lookup(ChromiumVar); ok && strings.TrimSpace(name) != "" {
		path, err := lookPath(strings.TrimSpace(name))
		if err != nil {
			return "", fail, fmt.Sprintf("%s=%s: %v", ChromiumVar, name, err)
		}
		return path, use, ""
	}
	path, err := lookPath("chromium")
	switch {
	case err == nil:
		return path, use, ""
	case isCI(lookup):
		return "", fail, fmt.Sprintf("no chromium on PATH (%v); under CI=true a browser test may not skip: "+
			"apt-get install chromium, or run ./scripts/test.sh as root", err)
	}
	return "", skip, fmt.Sprintf("no chromium on PATH: skipping browser test (apt-get install chromium, or set %s)", ChromiumVar)
}
