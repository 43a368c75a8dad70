package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/recording"
)

// fixture records the simulator's traffic (with an alive and an API response) into a
// file and returns its path and what was recorded.
func fixture(t *testing.T) (string, []feedtest.Sent) {
	t.Helper()
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	clk := clocktest.NewFake(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: []feed.Producer{lo}, Matches: 4, Rate: feedtest.Unlimited, Clock: clk, Seed: 3})
	require.NoError(t, err)
	require.NoError(t, sim.Publish(t.Context(), 200))
	require.NoError(t, sim.SendAlive(t.Context(), 1, true))
	path := filepath.Join(t.TempDir(), "feed.rec")
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := recording.NewWriter(f, recording.WriterOptions{BlockSize: 2 << 10})
	require.NoError(t, err)
	sent := sim.Sent()
	for i, s := range sent {
		require.NoError(t, w.Append(recording.Frame{Kind: recording.Delivery, At: clk.Now().Add(time.Duration(i) * time.Second), RoutingKey: s.Key.String(), Body: s.Body}))
	}
	require.NoError(t, w.Append(recording.Frame{Kind: recording.APIResponse, At: clk.Now(), Method: "GET", URL: "https://api/v1/users/whoami.xml", Status: 200, Body: []byte("<bookmaker_details/>")}))
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
	return path, sent
}

func cmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestInspectCountsWhatWasRecorded(t *testing.T) {
	path, sent := fixture(t)
	code, out, errOut := cmd(t, "inspect", "-json", path)
	require.Equal(t, 0, code, errOut)
	var s summary
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	byType := map[string]int64{}
	events := map[feed.URN]bool{}
	for _, m := range sent {
		byType[m.Key.Type.String()]++
		if !m.Key.Event.IsZero() {
			events[m.Key.Event] = true
		}
	}
	assert.Equal(t, int64(len(sent)+1), s.Frames)
	assert.Equal(t, int64(len(sent)), s.Deliveries)
	assert.Equal(t, int64(1), s.Responses)
	assert.Equal(t, byType, s.ByType)
	assert.Equal(t, map[string]int64{"200": 1}, s.ByStatus)
	assert.Equal(t, len(events), s.Events)
	assert.Empty(t, s.Torn)

	code, text, _ := cmd(t, "inspect", path)
	require.Equal(t, 0, code)
	assert.Contains(t, text, "frames        "+itoa(len(sent)+1)+" ("+itoa(len(sent))+" deliveries, 1 API responses)")
}

func itoa(n int) string { return strconv.Itoa(n) }

// One event's messages, in order, decoded.
func TestInspectAnEvent(t *testing.T) {
	path, sent := fixture(t)
	event := sent[0].Key.Event
	var want []string
	for _, s := range sent {
		if s.Key.Event == event {
			want = append(want, s.Key.Type.String())
		}
	}
	code, out, errOut := cmd(t, "inspect", "-json", "-event", event.String(), path)
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, len(want))
	for i, l := range lines {
		var m struct {
			Type    string          `json:"type"`
			Message json.RawMessage `json:"message"`
			Error   string          `json:"error"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		assert.Equal(t, want[i], m.Type)
		assert.Empty(t, m.Error)
		assert.Contains(t, string(m.Message), event.String())
	}
}

// A cut keeps one event (with the system messages and API responses), and its inspect
// says so; a time range keeps what was received in it.
func TestCut(t *testing.T) {
	path, sent := fixture(t)
	event := sent[0].Key.Event
	out := filepath.Join(t.TempDir(), "cut.rec")
	code, text, errOut := cmd(t, "cut", "-o", out, "-event", event.String(), path)
	require.Equal(t, 0, code, errOut)
	want := 1 // the API response
	for _, s := range sent {
		if s.Key.Event == event || s.Key.Type.IsSystem() {
			want++
		}
	}
	assert.Equal(t, itoa(want)+" of "+itoa(len(sent)+1)+" frames into "+out+"\n", text)
	code, js, _ := cmd(t, "inspect", "-json", out)
	require.Equal(t, 0, code)
	var s summary
	require.NoError(t, json.Unmarshal([]byte(js), &s))
	assert.Equal(t, int64(want), s.Frames)
	assert.Equal(t, 1, s.Events)

	ranged := filepath.Join(t.TempDir(), "range.rec")
	code, text, errOut = cmd(t, "cut", "-o", ranged, "-from", "2026-11-29T12:00:10Z", "-to", "2026-11-29T12:00:20Z", path)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "10 of "+itoa(len(sent)+1)+" frames into "+ranged+"\n", text, "seconds 10 to 19")

	code, _, errOut = cmd(t, "cut", "-o", ranged, path)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "file exists", "a cut never overwrites")
}

// A replay calls the listener once for each event message recorded.
func TestReplayPrintsEveryCall(t *testing.T) {
	path, sent := fixture(t)
	code, out, errOut := cmd(t, "replay", path)
	require.Equal(t, 0, code, errOut)
	events := 0
	for _, s := range sent {
		if !s.Key.Type.IsSystem() {
			events++
		}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, events+1)
	assert.Equal(t, "played "+itoa(len(sent))+" of "+itoa(len(sent)+1)+" frames", lines[len(lines)-1])
	assert.Contains(t, lines[0], sent[0].Key.Event.String())
}

// A torn file is read to its last whole block and the command says where it stopped; a
// file that is no recording is refused; a bad command line is a usage error.
func TestBadFilesAndCommandLines(t *testing.T) {
	path, _ := fixture(t)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	torn := filepath.Join(t.TempDir(), "torn.rec")
	require.NoError(t, os.WriteFile(torn, b[:len(b)-5], 0o644))
	code, out, errOut := cmd(t, "inspect", torn)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "torn          recording: torn at block")
	assert.Contains(t, errOut, "feedkit: recording: torn at block")

	foreign := filepath.Join(t.TempDir(), "x.xml")
	require.NoError(t, os.WriteFile(foreign, []byte("<odds_change/>"), 0o644))
	code, _, errOut = cmd(t, "replay", foreign)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "not a feedkit recording")

	for _, args := range [][]string{{}, {"frobnicate"}, {"inspect"}, {"cut", path}, {"inspect", "-event", "nope", path}} {
		code, _, _ := cmd(t, args...)
		assert.Equal(t, 2, code, "%q", args)
	}
}

// record -sim records an in-process simulator's messages through the SDK, and its API's
// answers: every event message once.
func TestRecordTheSimulator(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.rec")
	code, out, errOut := cmd(t, "record", "-o", path, "-sim", "300")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "into "+path)
	code, js, errOut := cmd(t, "inspect", "-json", path)
	require.Equal(t, 0, code, errOut)
	var s summary
	require.NoError(t, json.Unmarshal([]byte(js), &s))
	events := int64(0)
	for typ, n := range s.ByType {
		if typ != "alive" && typ != "snapshot_complete" {
			events += n
		}
	}
	assert.Equal(t, int64(300), events, "every event message once: %v", s.ByType)
	assert.Positive(t, s.Responses, "the API's answers: the account, the producers, the recovery")
	assert.Positive(t, s.ByStatus["200"])

	code, _, _ = cmd(t, "record", "-o", path, "-sim", "1")
	assert.Equal(t, 1, code, "never over an existing file")
	code, _, _ = cmd(t, "record", "-o", filepath.Join(t.TempDir(), "x.rec"))
	assert.Equal(t, 2, code, "no feed named")
}

// A directory of a recording.Dir's files is inspected as one recording.
func TestInspectADirectory(t *testing.T) {
	dir := t.TempDir()
	d, err := recording.OpenDir(dir, recording.DirOptions{MaxFileBytes: 4 << 10, Writer: recording.WriterOptions{BlockSize: 1 << 10}})
	require.NoError(t, err)
	for i := range 400 {
		require.NoError(t, d.Append(recording.Frame{Kind: recording.Delivery, At: time.Unix(int64(i), 0),
			RoutingKey: "-.-.-.alive.-.-.-.-", Body: []byte(`<alive product="1" timestamp="` + strconv.Itoa(i) + `" subscribed="1"/>`)}))
	}
	require.NoError(t, d.Close())
	files, err := recording.Files(dir)
	require.NoError(t, err)
	require.Greater(t, len(files), 1)
	code, js, errOut := cmd(t, "inspect", "-json", dir)
	require.Equal(t, 0, code, errOut)
	var s summary
	require.NoError(t, json.Unmarshal([]byte(js), &s))
	assert.Equal(t, int64(400), s.Frames)
	assert.Equal(t, map[string]int64{"alive": 400}, s.ByType)

	code, _, errOut = cmd(t, "inspect", t.TempDir())
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "no recording files")
}
