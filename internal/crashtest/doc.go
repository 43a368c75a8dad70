// Package crashtest is the harness of feedkit's crash tests: the tests, built with
// -tags crash and named TestCrash..., that kill a durable component with SIGKILL at
// random moments under load, restart it, and account for everything at the end
// (scripts/test.sh crash runs them). It is test infrastructure, for feedkit's own tests.
//
// A component runs in a child process that is the test binary itself, run again with
// -test.run selecting one child test (the pattern of os/exec's own tests). The child
// test calls Child first, which skips it unless the environment names it (RoleVar), so
// that a plain run of the package's tests passes over it:
//
//	func TestCrashChildEngine(t *testing.T) {
//		ctx := crashtest.Child(t) // ends when the parent stops the child, or dies
//		... connect, then:
//		crashtest.Ready()
//		... work until ctx ends
//	}
//
// The parent test starts it with Start, and Chaos kills its children at random moments,
// each restarted at once; a seeded *rand.Rand (Rand) draws the moments and the victims,
// so that FEEDKIT_CRASH_SEED replays a run's schedule (its timing is the machine's).
// The parent waits on signals and state (Ready, Done, the store it checks), never on a
// fixed sleep; the random pauses between kills shape the load, they wait for nothing.
// To have every kill land under load on any machine, Chaos.Await ties each to the
// component's progress (a share of the work drawn at random, say) rather than to time.
// At the end it prints its counts with Counts.Print, one "crash: <component>: ..." line
// that the script's output shows.
//
// A child never outlives its parent: its stdin is a pipe from the parent, and Child's
// context ends when that pipe closes, which it does when the parent stops the child,
// and when the parent dies, whatever kills it.
package crashtest
