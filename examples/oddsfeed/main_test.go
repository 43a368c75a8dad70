package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/pgtest"
	"github.com/feedkit/feedkit/internal/testenv"
)

func TestRunPrintsASummaryWithNothingLost(t *testing.T) {
	for _, threads := range []string{"10", "0"} {
		t.Run("threads="+threads, func(t *testing.T) { testRunSummary(t, threads) })
	}
}

// The run is scripted by the feed's events, not by a stopwatch, so the story below holds
// on a machine of any speed; the assertions hold however far the run got in its time.
func testRunSummary(t *testing.T, threads string) {
	var out bytes.Buffer
	err := run(t.Context(), []string{"-duration", "3s", "-outage", "1s", "-progress", "500ms", "-matches", "20", "-rate", "2000", "-threads", threads}, &out)
	require.NoError(t, err, out.String())
	text := out.String()
	assertHeaderFirst(t, text)
	assert.Contains(t, text, "\n  set up     from a token on the custom environment (the simulator's API); producers of the account: 1\n",
		"Open read the account's producers from the simulator's API: its one active producer")
	assert.Contains(t, text, "\n  outage     1s, a third of the way in: the producer's alives stop and the connection drops\n")
	// The story of the outage, in order: each step is printed before it is taken, and
	// the run ends only once the producer is up again after it.
	// The first up says FirstRecoveryCompleted, or ReturnedFromInactivity when a machine
	// so slow that an alive came late had the producer down before its first recovery
	// was over (a stress run).
	assert.Regexp(t, `(?s)recovery #\d+ requested for producer 1.*producer 1 up \((FirstRecoveryCompleted|ReturnedFromInactivity)\)`+
		`.*outage: alives stop and the connection drops for 1s.*producer 1 down \(\w+\)`+
		`.*outage over.*recovery #\d+ requested for producer 1.*producer 1 up \(ReturnedFromInactivity\), after processing \d+ replayed messages`, text)
	requested, completed := count(t, text, "recoveries requested"), count(t, text, "recoveries completed")
	assert.GreaterOrEqual(t, requested, 2, "the first recovery and the outage's")
	assert.GreaterOrEqual(t, completed, 2)
	assert.LessOrEqual(t, completed, requested)
	// Each up says how many replayed messages were processed before it: its recovery's,
	// not all so far, so that the ups' add up to no more than the summary's.
	ups := 0
	for _, m := range regexp.MustCompile(`producer 1 up \(\w+\), after processing (\d+) replayed messages?\n`).FindAllStringSubmatch(text, -1) {
		n, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		ups += n
	}
	assert.LessOrEqual(t, ups, count(t, text, "replayed by a recovery"))
	assert.GreaterOrEqual(t, count(t, text, "connections dropped"), 1)
	assert.GreaterOrEqual(t, count(t, text, "replayed by a recovery"), count(t, text, "not delivered live, recovered by replay"),
		"what the outage kept from the listener came back in a replay")
	if threads == "0" {
		assert.Contains(t, text, "serial delivery")
		assert.NotContains(t, text, "messages per worker")
	} else {
		assert.Contains(t, text, threads+" workers")
		assert.Regexp(t, `messages per worker\s+\d+–\d+\n`, text)
	}
	assertNothingLost(t, text)
}

// assertHeaderFirst checks that the run's header, which says what the run is, comes
// before the first line of what happens in it, though the SDK reports its first events
// while Open is still reading what the header shows.
func assertHeaderFirst(t *testing.T, text string) {
	t.Helper()
	require.True(t, strings.HasPrefix(text, "oddsfeed: the feedkit SDK on a simulated odds feed for "), "the first line says what the run is:\n%s", text)
	head := strings.Index(text, "\n  set up     from a token")
	require.Positive(t, head, "no header in:\n%s", text)
	event := regexp.MustCompile(`(?m)^\s+\d+\.\d\ds  `).FindStringIndex(text)
	require.NotNil(t, event, "no event line in:\n%s", text)
	assert.Less(t, head, event[0], "the header comes before the first event line:\n%s", text)
}

// assertNothingLost checks the summary's accounts: every event message sent was received,
// live or replayed, and each match's live messages in order.
func assertNothingLost(t *testing.T, text string) {
	t.Helper()
	assert.Contains(t, text, "\nsummary of the whole run")
	assertAccounts(t, text)
	assert.Equal(t, 0, count(t, text, "lost (never received)"))
	assert.Equal(t, 0, count(t, text, "live messages out of order (within a match)"))
	assert.Equal(t, 0, count(t, text, "unparsable messages"))
	sent := count(t, text, "event messages sent")
	assert.Positive(t, sent, "the feed flowed")
	assert.Regexp(t, `\n\nOK: every one of `+strconv.Itoa(sent)+` event messages sent was received`+
		`( live, each match's in order| \(\d+ of them recovered by replay\), each match's live messages in order)\n$`, text,
		"the last line is the verdict")
}

// assertAccounts checks that the summary's accounts add up: each message sent was
// received live, recovered by a replay, or lost; each received that was not lost
// arrived once, plus the copies counted as received more than once, which are explained.
func assertAccounts(t *testing.T, text string) {
	t.Helper()
	sent, lost := count(t, text, "event messages sent"), count(t, text, "lost (never received)")
	assert.Equal(t, sent, count(t, text, "received live")+count(t, text, "not delivered live, recovered by replay")+lost,
		"each message sent was received live, recovered by replay, or lost")
	assert.Equal(t, sent-lost+count(t, text, "received more than once"), count(t, text, "event messages received"),
		"each message received arrived once, and the copies are counted")
	assert.Contains(t, text, "listeners must be idempotent)\n", "the copies are explained")
}

// count returns the figure of a summary line.
func count(t *testing.T, text, label string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(label) + `\s+(\d+)$`).FindStringSubmatch(text)
	require.Len(t, m, 2, "no summary line %q in:\n%s", label, text)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}

// With -names the listener names every market and outcome it settles from the
// simulator's Sports API: none is missing, and the first settlements are printed by name.
// (How many matches a run settles depends on the machine's speed; what is asserted holds
// for any number.)
func TestRunNamesSettledMarkets(t *testing.T) {
	var out bytes.Buffer
	err := run(t.Context(), []string{"-names", "de", "-outage", "0", "-duration", "2s", "-progress", "500ms", "-matches", "10", "-rate", "2000"}, &out)
	require.NoError(t, err, out.String())
	text := out.String()
	assertHeaderFirst(t, text)
	assert.Equal(t, 0, count(t, text, "names not found"), text)
	if regexp.MustCompile(`(?m)^\s+bet_settlement\s+[1-9]`).MatchString(text) { // any settled
		assert.Positive(t, count(t, text, "names taken (de)"))
		assert.Regexp(t, `settled sr:match:\d+, named in de: won [^{}\n]+: [^{}\n]+\n`, text)
	}
	assertNothingLost(t, text)
}

func TestRunRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-duration", "0s"}, {"-matches", "0"}, {"-rate", "-1"}, {"-progress", "0s"}, {"-threads", "-1"}, {"-outage", "-1s"}, {"-outage", "100ms"}, {"-nope"}, {"-amqp", "http://x"}, {"-restart", "-1s"}, {"-stall", "0s"}, {"-state", "postgres://%zz"}, {"-names", "e/n"}} {
		var out bytes.Buffer
		assert.Error(t, run(t.Context(), args, &out), "%v", args)
	}
}

func TestRunOnRabbitMQ(t *testing.T) {
	url := testenv.AMQPVhost(t)
	var out bytes.Buffer
	err := run(t.Context(), []string{"-amqp", url, "-duration", "3s", "-outage", "1s", "-progress", "500ms", "-matches", "20", "-rate", "2000"}, &out)
	require.NoError(t, err, out.String())
	text := out.String()
	assertHeaderFirst(t, text)
	assert.Contains(t, text, "on RabbitMQ (exchange unifiedfeed)")
	assert.Contains(t, text, "\n  outage     1s, a third of the way in: the producer's alives stop (the connection stays up)\n")
	assert.Equal(t, 0, count(t, text, "connections dropped"))
	assert.Regexp(t, `(?s)outage: alives stop for 1s.*producer 1 down \(\w+\)`+
		`.*outage over.*producer 1 up \(ReturnedFromInactivity\)`, text)
	assertNothingLost(t, text)
}

// A process stopped for longer than the 10 minutes a process that knows nothing recovers
// (-restart 15m: the feed goes on for a second, then its clock jumps over the rest of the
// stop) recovers from its last record when the records are kept (-state: a file, or
// PostgreSQL): the recovery reaches back past those 10 minutes, to the record, and
// nothing the feed sent during the stop is lost.
func TestRestartAfterALongStopRecoversFromTheLastRecord(t *testing.T) {
	for _, store := range []string{"file", "postgres"} {
		t.Run(store, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "producers.json")
			if store == "postgres" {
				state = pgtest.URL(t)
			}
			var out bytes.Buffer
			err := run(t.Context(), []string{"-state", state, "-restart", "15m", "-outage", "0", "-duration", "3s", "-progress", "500ms", "-matches", "20", "-rate", "2000"}, &out)
			require.NoError(t, err, out.String())
			text := out.String()
			assertHeaderFirst(t, text)
			assert.Contains(t, text, "\n  restart    two thirds of the way in, the process stops for 15m0s of the feed's time\n")
			stopped, record, started, from := restartStory(t, text, `record of producer 1: \w+, to recover from (\S+) \(.*\)`)
			assert.Equal(t, record, from, "the restarted process recovers from its last record")
			assert.False(t, record.After(stopped), "the record was written before the stop")
			assert.GreaterOrEqual(t, started.Sub(from), 15*time.Minute, "the recovery reaches back over the whole stop, past the 10 minutes assumed without a record")
			assertBothProcessesSummed(t, text)
			assertNothingLost(t, text)
		})
	}
}

// With the records in memory, the restarted process knows nothing and recovers the last
// 10 minutes only: what the feed sent early in the 15-minute stop is never seen, and the
// run says so and fails. (What the warning at Open is about.)
func TestRestartWithRecordsInMemoryRecoversTheAssumedDowntimeOnly(t *testing.T) {
	var out, errOut bytes.Buffer
	// -stall: the messages sent early in the stop will not come, and the test need not
	// wait a minute to be sure of it.
	code := command([]string{"-restart", "15m", "-stall", "5s", "-outage", "0", "-duration", "3s", "-progress", "500ms", "-matches", "20", "-rate", "2000"}, &out, &errOut)
	text := out.String()
	require.Equal(t, 1, code, "the run failed:\n%s\n%s", text, errOut.String())
	assert.Empty(t, errOut.String(), "the verdict, on stdout, says why")
	stopped, _, started, from := restartStory(t, text, `(no record): the process kept it in memory; the new one will recover the last 10m0s only`)
	assert.False(t, from.Before(started.Add(-10*time.Minute)), "recovered from the assumed downtime, asked for after the start")
	assert.Greater(t, from.Sub(stopped), 4*time.Minute, "the recovery misses the start of the stop")
	assertBothProcessesSummed(t, text)
	lost := count(t, text, "lost (never received)")
	assert.Positive(t, lost, "what the feed sent in the stop's first second is lost")
	assertAccounts(t, text)
	// The end of the run says that it waits for what is still on its way, for how long,
	// and that it gave up on what is then counted as lost.
	m := regexp.MustCompile(`the feed has stopped: waiting for \d+ messages? still on the way \(giving up once none has arrived for 5s\)\.\.\.\n` +
		`(?:.*\n)*?\s+\d+\.\d\ds  gave up after \d+\.\ds: (\d+) messages? still missing\n`).FindStringSubmatch(text)
	require.Len(t, m, 2, "no wait at the end in:\n%s", text)
	assert.Equal(t, strconv.Itoa(lost), m[1], "what it gave up on is what the summary counts as lost")
	if lost > maxLostShown {
		assert.Regexp(t, `lost \(never received\)\s+\d+\n      the first 5 of them:\n(        sr:match:\d+ \w+ stamped \S+, published \d+\.\d+s in\n){5}`, text,
			"the first lost are named")
	}
	assert.Regexp(t, `\n\nFAILED: `+strconv.Itoa(lost)+` of `+strconv.Itoa(count(t, text, "event messages sent"))+` event messages sent were lost \(never received\)\n$`, text,
		"the last line is the verdict")
}

// assertBothProcessesSummed checks that the summary of a run with -restart covers both
// processes: each requested a recovery and completed it (the run goes on only once the
// first process's producer is up, and ends once the second's is), and the summary counts
// both. (Without -outage, one recovery each.)
func assertBothProcessesSummed(t *testing.T, text string) {
	t.Helper()
	assert.Contains(t, text, "\nsummary of the whole run, both processes\n")
	assert.GreaterOrEqual(t, count(t, text, "recoveries requested"), 2, "the first process's recovery and the second's")
	assert.GreaterOrEqual(t, count(t, text, "recoveries completed"), 2, "the first process's recovery and the second's")
}

// restartStory finds the restart in a run's output, in order: the stop, the record
// (record matches its line; its group is the record's time, or no time), the new start,
// and the new process's recovery and its up; it returns the times printed. The up's reason
// is any of the three: a message the feed stamped just before its clock jumped over the
// stop and delivered after it is 15 minutes late, so the new process may come up once its
// processing is in time again (ProcessingQueueDelayStabilized) rather than as its
// recovery completes.
func restartStory(t *testing.T, text, record string) (stopped, recorded, started, from time.Time) {
	t.Helper()
	m := regexp.MustCompile(`(?s)restart: the process stops for 15m0s of the feed's time, at (\S+)\n.*restart: ` + record +
		`\n.*restart: the process starts again at (\S+)\n.*recovery #\d+ requested for producer 1, from (\S+)\n.*producer 1 up \((?:FirstRecoveryCompleted|ReturnedFromInactivity|ProcessingQueueDelayStabilized)\)`).FindStringSubmatch(text)
	require.Len(t, m, 5, "no restart story in:\n%s", text)
	at := func(s string) time.Time {
		v, err := time.Parse("15:04:05.000", s)
		if err != nil {
			return time.Time{}
		}
		return v
	}
	stopped, recorded, started, from = at(m[1]), at(m[2]), at(m[3]), at(m[4])
	// Times of day: one that crossed midnight since the stop is a day later.
	for _, v := range []*time.Time{&recorded, &started, &from} {
		if !v.IsZero() && v.Before(stopped.Add(-time.Hour)) {
			*v = v.Add(24 * time.Hour)
		}
	}
	return stopped, recorded, started, from
}

// The verdict is the run's last line: OK when every message sent was received and each
// match's live messages in order, else FAILED and why, with errFailed, which command
// turns into exit status 1 without another word.
func TestVerdict(t *testing.T) {
	for _, c := range []struct {
		acc  accounts
		want string
	}{
		{accounts{sent: 10, live: 7, recovered: 3}, "OK: every one of 10 event messages sent was received (3 of them recovered by replay), each match's live messages in order"},
		{accounts{sent: 10, live: 10, duplicates: 2}, "OK: every one of 10 event messages sent was received live, each match's in order"},
		{accounts{sent: 10, live: 7, lost: 3}, "FAILED: 3 of 10 event messages sent were lost (never received)"},
		{accounts{sent: 10, live: 10, reordered: 2}, "FAILED: 2 live messages arrived out of order within their match"},
		{accounts{sent: 10, live: 9, lost: 1, reordered: 2}, "FAILED: 1 of 10 event messages sent were lost (never received); 2 live messages arrived out of order within their match"},
	} {
		var out bytes.Buffer
		err := verdict(&out, c.acc)
		assert.Equal(t, "\n"+c.want+"\n", out.String())
		if strings.HasPrefix(c.want, "OK") {
			assert.NoError(t, err)
		} else {
			assert.ErrorIs(t, err, errFailed)
		}
	}
}
