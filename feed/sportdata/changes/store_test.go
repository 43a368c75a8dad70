package changes_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/sportdata/changes"
	"github.com/feedkit/feedkit/feed/sportdata/changes/changestest"
)

func TestMemoryStoreConformance(t *testing.T) {
	changestest.TestStore(t, func(*testing.T) changes.Store { return changes.NewMemoryStore() })
	changestest.TestStore(t, func(*testing.T) changes.Store { return &changes.MemoryStore{} })
}

func TestFileStoreConformance(t *testing.T) {
	changestest.TestStore(t, func(t *testing.T) changes.Store {
		return changes.NewFileStore(filepath.Join(t.TempDir(), "changes.json"))
	})
}

func cursor(k changes.Kind, at time.Time, events ...string) changes.Cursor {
	c := changes.Cursor{Kind: k, At: at}
	for _, e := range events {
		c.Events = append(c.Events, feed.MustParseURN(e))
	}
	return c
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// A new store on the file, as a restarted process makes, loads what the last one saved;
// the file is versioned, its cursors in the order of their kinds, and its owner's only.
func TestFileStoreSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "changes.json")
	first := changes.NewFileStore(path)
	result := cursor(changes.ResultChange, t0, "sr:match:2", "sr:match:3")
	fixture := cursor(changes.FixtureChange, t0.Add(time.Second), "sr:match:1")
	require.NoError(t, first.Save(ctx, result))
	require.NoError(t, first.Save(ctx, fixture))

	got, err := changes.NewFileStore(path).Load(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, []changes.Cursor{fixture, result}, got)

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.JSONEq(t, `{"version":1,"cursors":[
		{"kind":"fixture","at":"2026-03-01T12:00:01Z","events":["sr:match:1"]},
		{"kind":"result","at":"2026-03-01T12:00:00Z","events":["sr:match:2","sr:match:3"]}]}`, string(b))
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	}
	tmp, err := filepath.Glob(filepath.Join(filepath.Dir(path), ".*.tmp"))
	require.NoError(t, err)
	assert.Empty(t, tmp, "no temporary file left behind")
}

// A file the store cannot read whole is refused, naming the file and what is wrong, and
// never overwritten; once repaired, it is read without a new store.
func TestFileStoreRefusesABadFile(t *testing.T) {
	for _, c := range []struct{ content, err string }{
		{`not json`, "invalid character"},
		{`{"version":2,"cursors":[]}`, "version 2, want 1"},
		{`{"version":1,"cursors":[{"kind":"fixture","at":"2026-03-01T12:00:00Z","events":[]},{"kind":"fixture","at":"2026-03-01T12:00:01Z","events":[]}]}`,
			"cursors[1].kind fixture appears twice"},
		{`{"version":1,"cursors":[{"kind":"odds","at":"2026-03-01T12:00:00Z","events":[]}]}`, `changes: unknown kind "odds"`},
		{`{"version":1,"cursors":[{"at":"2026-03-01T12:00:00Z","events":[]}]}`, "cursors[0].kind is missing"},
		{`{"version":1,"cursors":[{"kind":"result","at":"2026-03-01T12:00:00Z","events":["match:1"]}]}`, `"match:1"`},
	} {
		path := filepath.Join(t.TempDir(), "changes.json")
		require.NoError(t, os.WriteFile(path, []byte(c.content), 0o600))
		s := changes.NewFileStore(path)
		_, err := s.Load(context.Background())
		require.Error(t, err, c.content)
		assert.Contains(t, err.Error(), "changes: file store "+path+": ", c.content)
		assert.Contains(t, err.Error(), c.err, c.content)
		require.Error(t, s.Save(context.Background(), cursor(changes.FixtureChange, t0, "sr:match:1")), c.content)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, c.content, string(b), "not overwritten")

		require.NoError(t, os.WriteFile(path, []byte(`{"version":1,"cursors":[]}`), 0o600))
		require.NoError(t, s.Save(context.Background(), cursor(changes.FixtureChange, t0, "sr:match:1")), "repaired")
	}
}

// A save that cannot be written leaves the store as the file is.
func TestFileStoreFailedSaveChangesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "changes.json")
	s := changes.NewFileStore(path)
	first := cursor(changes.FixtureChange, t0, "sr:match:1")
	require.NoError(t, s.Save(ctx, first))
	require.NoError(t, os.Rename(dir, dir+".moved"))
	t.Cleanup(func() { _ = os.Rename(dir+".moved", dir) })

	require.Error(t, s.Save(ctx, cursor(changes.FixtureChange, t0.Add(time.Second), "sr:match:2")))
	require.Error(t, s.Save(ctx, cursor(changes.ResultChange, t0, "sr:match:3")))
	got, err := s.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, []changes.Cursor{first}, got)
}

// A MemoryStore outlives a manager, not the process: a new store is empty.
func TestMemoryStoreLastsAsLongAsTheProcess(t *testing.T) {
	ctx := context.Background()
	s := changes.NewMemoryStore()
	require.NoError(t, s.Save(ctx, cursor(changes.ResultChange, t0, "sr:match:1")))
	got, err := s.Load(ctx)
	require.NoError(t, err)
	assert.Len(t, got, 1)
	got, err = changes.NewMemoryStore().Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, got)
}
