// Package testenv gives integration tests the addresses of the RabbitMQ
// broker and PostgreSQL server that scripts/test.sh starts, and a way to
// control that broker.
//
// scripts/test.sh exports FEEDKIT_AMQP_URL, FEEDKIT_PG_URL and
// FEEDKIT_RABBITMQCTL before it runs go test. A plain "go test ./..." on a
// developer's machine has none of them, so a test that needs a service is
// skipped there with a message that says how to run it. Under CI (CI=true)
// a missing variable fails the test instead: CI must never go green because
// every integration test quietly skipped.
package testenv

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Names of the environment variables this package reads.
const (
	// AMQPURLVar holds the AMQP URL of the test broker,
	// e.g. amqp://guest:guest@127.0.0.1:5673/.
	AMQPURLVar = "FEEDKIT_AMQP_URL"
	// PGURLVar holds the PostgreSQL connection URL of the test database,
	// e.g. postgres://postgres@127.0.0.1:5433/postgres?sslmode=disable.
	PGURLVar = "FEEDKIT_PG_URL"
	// RabbitMQCtlVar holds a command line that runs rabbitmqctl against the
	// test broker's node. It is split on white space (no shell quoting).
	RabbitMQCtlVar = "FEEDKIT_RABBITMQCTL"
	// CIVar is the variable that marks a CI run when it equals "true".
	CIVar = "CI"
)

// rabbitMQCtlTimeout bounds one rabbitmqctl call, so that a wedged broker
// fails the test instead of hanging it until go test's own -timeout.
const rabbitMQCtlTimeout = 2 * time.Minute

// AMQPURL returns the AMQP URL of the test broker from FEEDKIT_AMQP_URL.
// When the variable is unset or empty it skips the test, or fails it when
// CI=true.
func AMQPURL(t testing.TB) string {
	t.Helper()
	return fromEnv(t, AMQPURLVar)
}

// PGURL returns the PostgreSQL URL of the test database from FEEDKIT_PG_URL.
// When the variable is unset or empty it skips the test, or fails it when
// CI=true.
func PGURL(t testing.TB) string {
	t.Helper()
	return fromEnv(t, PGURLVar)
}

// RabbitMQCtl runs the rabbitmqctl command line in FEEDKIT_RABBITMQCTL with
// args appended, e.g. RabbitMQCtl(t, "close_all_connections", "test") or
// RabbitMQCtl(t, "stop_app"), and returns its combined output. It fails the
// test, showing that output, when the command fails or takes longer than two
// minutes. It may be called from a t.Cleanup function, e.g. to run
// start_app after a test that stopped the broker. When the variable is unset or empty it skips the test, or fails
// it when CI=true.
func RabbitMQCtl(t testing.TB, args ...string) string {
	t.Helper()
	argv := strings.Fields(fromEnv(t, RabbitMQCtlVar))
	if len(argv) == 0 {
		// Only reachable with a fake testing.TB whose Skipf returns.
		return ""
	}
	// Not t.Context(): that is canceled before Cleanup functions run, and
	// t.Cleanup(func() { RabbitMQCtl(t, "start_app") }) must work.
	ctx, cancel := context.WithTimeout(context.Background(), rabbitMQCtlTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], append(argv[1:], args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("rabbitmqctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// verdict is what a test should do about one environment variable.
type verdict int

const (
	// use: the variable is set; the test goes on with its value.
	use verdict = iota
	// skip: the variable is missing outside CI; the test is skipped.
	skip
	// fail: the variable is missing under CI; the test fails.
	fail
)

// decide says what to do about the variable name, given a lookup function
// such as os.LookupEnv and whether this is a CI run. An empty value counts
// as missing (so does one of only white space): "FEEDKIT_PG_URL= go test"
// should not reach a real connect.
// The returned message explains a skip or a failure.
func decide(name string, lookup func(string) (string, bool), ci bool) (value string, v verdict, msg string) {
	if value, ok := lookup(name); ok && strings.TrimSpace(value) != "" {
		return value, use, ""
	}
	if ci {
		return "", fail, name + " is not set; under CI=true an integration test may not skip: run ./scripts/test.sh"
	}
	return "", skip, name + " is not set: skipping integration test (run ./scripts/test.sh, which starts the services and sets it)"
}

// isCI reports whether lookup says this is a CI run.
func isCI(lookup func(string) (string, bool)) bool {
	v, _ := lookup(CIVar)
	return v == "true"
}

// fromEnv returns the value of the environment variable name, or skips or
// fails t as decide says.
func fromEnv(t testing.TB, name string) string {
	t.Helper()
	return fromLookup(t, name, os.LookupEnv)
}

// fromLookup is fromEnv with the environment given as a lookup function.
func fromLookup(t testing.TB, name string, lookup func(string) (string, bool)) string {
	t.Helper()
	value, v, msg := decide(name, lookup, isCI(lookup))
	switch v {
	case skip:
		t.Skipf("%s", msg)
	case fail:
		t.Fatalf("%s", msg)
	}
	return value
}
