package changes_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/sportdata/changes"
)

// listAPI serves each list's document as set, whatever the query, and records the paths
// asked for.
type listAPI struct {
	mu    sync.Mutex
	docs  map[string]string // by list: "fixtures", "results"
	paths []string
}

func (a *listAPI) Get(_ context.Context, path string, _ int64) ([]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.paths = append(a.paths, path)
	for list, doc := range a.docs {
		if strings.Contains(path, "/"+list+"/") {
			return []byte(doc), nil
		}
	}
	kind := "fixture"
	if strings.Contains(path, "/results/") {
		kind = "result"
	}
	return []byte("<" + kind + "_changes/>"), nil
}

func (a *listAPI) set(list, doc string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.docs == nil {
		a.docs = map[string]string{}
	}
	a.docs[list] = doc
}

func (a *listAPI) asked() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.paths...)
}

func fixtureList(entries ...string) string {
	var b strings.Builder
	b.WriteString(`<fixture_changes generated_at="2026-03-01T13:00:00+00:00">`)
	for i := 0; i < len(entries); i += 2 {
		fmt.Fprintf(&b, `<fixture_change sport_event_id="%s" update_time="%s"/>`, entries[i], entries[i+1])
	}
	b.WriteString(`</fixture_changes>`)
	return b.String()
}

// The first poll asks for a list whole; later ones from a second before the cursor, in
// UTC, with the sport and the language configured.
func TestListsAskedFromTheCursor(t *testing.T) {
	api := &listAPI{}
	rec := newRecorder(nil)
	clk := clocktest.NewFake(at("2026-03-01T12:00:10Z"))
	m, err := changes.New(api, changes.ListenerFunc(func(ctx context.Context, c changes.Change) error {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		rec.got = append(rec.got, c)
		return nil
	}), changes.Config{Language: "pt-BR", Sport: feed.MustParseURN("sr:sport:5"), Clock: clk})
	require.NoError(t, err)
	api.set("fixtures", fixtureList(
		"sr:match:3", "2026-03-01T12:00:07+00:00",
		"sr:match:2", "2026-03-01T13:00:05+01:00",
		"sr:match:1", "2026-03-01T12:00:05+00:00",
		"sr:match:3", "2026-03-01T12:00:07+00:00", // listed twice: one change
	))
	require.NoError(t, m.Poll(t.Context()))
	assert.Equal(t, []string{
		"v1/sports/pt-BR/fixtures/changes.xml?sportId=sr%3Asport%3A5",
		"v1/sports/pt-BR/results/changes.xml?sportId=sr%3Asport%3A5",
	}, api.asked())
	assert.Equal(t, []changes.Change{
		{Kind: changes.FixtureChange, Event: feed.MustParseURN("sr:match:1"), UpdatedAt: at("2026-03-01T12:00:05Z")},
		{Kind: changes.FixtureChange, Event: feed.MustParseURN("sr:match:2"), UpdatedAt: at("2026-03-01T12:00:05Z")},
		{Kind: changes.FixtureChange, Event: feed.MustParseURN("sr:match:3"), UpdatedAt: at("2026-03-01T12:00:07Z")},
	}, rec.changes(), "in the order of the times, then of the events")

	api.set("fixtures", fixtureList("sr:match:3", "2026-03-01T12:00:07+00:00", "sr:match:4", "2026-03-01T12:00:07.25+00:00"))
	require.NoError(t, m.Poll(t.Context()))
	assert.Equal(t, "v1/sports/pt-BR/fixtures/changes.xml?afterDateTime=2026-03-01T12%3A00%3A06Z&sportId=sr%3Asport%3A5", api.asked()[2])
	require.NoError(t, m.Poll(t.Context()))
	assert.Equal(t, "v1/sports/pt-BR/fixtures/changes.xml?afterDateTime=2026-03-01T12%3A00%3A06.25Z&sportId=sr%3Asport%3A5", api.asked()[4])
	assert.Len(t, rec.changes(), 4)
	assert.Equal(t, []changes.Cursor{{Kind: changes.FixtureChange, At: at("2026-03-01T12:00:07.25Z"), Events: []feed.URN{feed.MustParseURN("sr:match:4")}}}, m.Cursors())
	st := m.Stats()
	assert.Equal(t, uint64(4), st.Delivered)
	assert.Equal(t, uint64(3), st.AlreadyDelivered, "sr:match:3 at the second and third polls, sr:match:4 at the third")

	// A cursor older than the lists' reach, less an hour for the clocks: the list whole,
	// what is older than the cursor skipped.
	clk.Set(at("2026-03-02T11:00:07.25Z"))
	require.NoError(t, m.Poll(t.Context()))
	assert.Equal(t, "v1/sports/pt-BR/fixtures/changes.xml?afterDateTime=2026-03-01T12%3A00%3A06.25Z&sportId=sr%3Asport%3A5", api.asked()[6])
	clk.Advance(time.Nanosecond)
	require.NoError(t, m.Poll(t.Context()))
	assert.Equal(t, "v1/sports/pt-BR/fixtures/changes.xml?sportId=sr%3Asport%3A5", api.asked()[8])
	assert.Len(t, rec.changes(), 4)
}

// A list of the other kind where one was asked for (a proxy answering the wrong path)
// moves no cursor.
func TestListOfTheWrongKind(t *testing.T) {
	api := &listAPI{}
	var reported []error
	m, err := changes.New(api, changes.ListenerFunc(nop), changes.Config{OnError: func(err error) { reported = append(reported, err) }})
	require.NoError(t, err)
	api.set("results", fixtureList("sr:match:1", "2026-03-01T12:00:05+00:00"))
	err = m.Poll(t.Context())
	require.Error(t, err)
	require.Len(t, reported, 1)
	assert.EqualError(t, reported[0], "changes: GET v1/sports/en/results/changes.xml: changes: a list of fixture changes where result changes were asked for")
	assert.Empty(t, m.Cursors())
	assert.Equal(t, uint64(1), m.Stats().RequestErrors)
}
