package carousel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel"
)

// reopening is a MetadataStore that opens its file afresh for every call, as a process
// restarted between any two calls would. The lock stands for the one process at a time
// that may use the file.
type reopening struct {
	path string
	mu   *sync.Mutex
}

func newReopening(path string) reopening { return reopening{path: path, mu: new(sync.Mutex)} }

func (r reopening) Load(ctx context.Context, id string) (carousel.CycleMetadata, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return carousel.NewFileStore(r.path).Load(ctx, id)
}

func (r reopening) Save(ctx context.Context, m carousel.CycleMetadata, gen carousel.Generation) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return carousel.NewFileStore(r.path).Save(ctx, m, gen)
}

func (r reopening) Delete(ctx context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return carousel.NewFileStore(r.path).Delete(ctx, id)
}

func metadata(id string) carousel.CycleMetadata {
	return carousel.CycleMetadata{
		CycleID: id,
		Config: carousel.CycleConfig{Name: id, Type: carousel.ThrottledWholeCollection, Origin: "o", Collection: "c",
			CoolDown: time.Minute, Throttle: time.Second},
		Iteration: 2,
		Completed: 5,
		Last:      carousel.Item{ID: "x5", Modified: time.Date(2024, 1, 2, 3, 4, 5, 6000, time.UTC)},
		Throttle:  time.Second,
		States:    []carousel.State{carousel.Running},
	}
}

// A file in publish-carousel's format (a completed count, no last item, no inProgress)
// reads as an iteration under way, resumed by count; one with inProgress reads as written.
func TestFileStoreReadsPublishCarouselsFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metadata.json")
	cfg := `"config":{"name":"%s","type":"ThrottledWholeCollection","origin":"o","collection":"c","coolDown":"1m","throttle":"1s"}`
	file := `{"version":1,"cycles":[
		{"cycleId":"seed",` + fmt.Sprintf(cfg, "seed") + `,"total":1000,"completed":300,"progress":0.3,"errors":0,"iteration":2,"currentUuid":"item-0299","states":["running"]},
		{"cycleId":"ended",` + fmt.Sprintf(cfg, "ended") + `,"total":1000,"completed":1000,"iteration":2,"inProgress":false,"states":["cooldown"]}]}`
	require.NoError(t, os.WriteFile(path, []byte(file), 0o644))
	s := carousel.NewFileStore(path)
	seed, ok, err := s.Load(context.Background(), "seed")
	require.NoError(t, err)
	require.True(t, ok)
	assert.True(t, seed.InProgress, "a completed count without inProgress")
	assert.Equal(t, 300, seed.Completed)
	assert.Equal(t, 1000, seed.Total)
	assert.Zero(t, seed.Last)
	ended, ok, err := s.Load(context.Background(), "ended")
	require.NoError(t, err)
	require.True(t, ok)
	assert.False(t, ended.InProgress, "inProgress as written")
	assert.Equal(t, 1000, ended.Completed)
}

func TestFileStoreSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "metadata.json")
	first := carousel.NewFileStore(path)
	require.NoError(t, first.Save(ctx, metadata("b"), 0))
	require.NoError(t, first.Save(ctx, metadata("a"), 0))
	require.NoError(t, first.Save(ctx, metadata("c"), 0))
	require.NoError(t, first.Delete(ctx, "c"))

	second := carousel.NewFileStore(path)
	got, ok, err := second.Load(ctx, "a")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, metadata("a"), got)
	_, ok, err = second.Load(ctx, "c")
	require.NoError(t, err)
	assert.False(t, ok, "a delete survives too")

	var file struct {
		Version int `json:"version"`
		Cycles  []struct {
			CycleID  string `json:"cycleId"`
			Throttle string `json:"throttle"`
		} `json:"cycles"`
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &file))
	assert.Equal(t, 1, file.Version)
	require.Len(t, file.Cycles, 2)
	assert.Equal(t, "a", file.Cycles[0].CycleID, "cycles are sorted by id")
	assert.Equal(t, "b", file.Cycles[1].CycleID)
	assert.Equal(t, "1s", file.Cycles[0].Throttle, "durations are readable")
}

// The file keeps each cycle's generation beside its metadata, for the next process to
// fence with; a file written before fencing has none, and its cycles any save replaces.
func TestFileStoreKeepsTheGenerations(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "metadata.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"version":1,"cycles":[{"cycleId":"a","iteration":4},{"cycleId":"b"}]}`), 0o644))
	first := carousel.NewFileStore(path)
	require.NoError(t, first.Save(ctx, metadata("a"), 7), "a file without generations: any save")
	require.NoError(t, first.Save(ctx, metadata("c"), 0))

	var file struct {
		Generations map[string]carousel.Generation `json:"generations"`
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &file))
	assert.Equal(t, map[string]carousel.Generation{"a": 7}, file.Generations, "generation 0 is not written")

	second := carousel.NewFileStore(path)
	require.ErrorIs(t, second.Save(ctx, metadata("a"), 6), carousel.ErrFenced, "the generation survives a restart")
	require.NoError(t, second.Save(ctx, metadata("b"), 1))
	require.NoError(t, second.Save(ctx, metadata("c"), 0))
}

func TestFileStoreMissingFileIsEmpty(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "metadata.json")
	s := carousel.NewFileStore(path)
	_, ok, err := s.Load(ctx, "a")
	require.NoError(t, err)
	assert.False(t, ok)
	require.NoError(t, s.Delete(ctx, "a"))
	_, err = os.Stat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "neither Load nor a Delete of nothing writes")
}

// A file whose cycles or generations the store cannot read is refused, as every file
// store refuses a file that is not JSON, of another version or holding a key twice
// (tested in internal/jsonfile).
func TestFileStoreRefusesBadFiles(t *testing.T) {
	cases := map[string]struct{ content, want string }{
		"bad throttle": {`{"version":1,"cycles":[{"cycleId":"a","throttle":"fast"}]}`, `cycles[0]: throttle "fast" is not a duration`},
		"bad config duration": {`{"version":1,"cycles":[{"cycleId":"a","config":{"coolDown":"1 hour"}}]}`,
			`cycles[0]: config.coolDown "1 hour" is not a duration`},
		"generation of no cycle": {`{"version":1,"cycles":[{"cycleId":"a"}],"generations":{"b":3}}`,
			`generations["b"]: no such cycle in the file`},
		"negative generation": {`{"version":1,"cycles":[{"cycleId":"a"}],"generations":{"a":-3}}`, "generations"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "metadata.json")
			require.NoError(t, os.WriteFile(path, []byte(c.content), 0o644))
			s := carousel.NewFileStore(path)

			_, _, err := s.Load(ctx, "a")
			require.Error(t, err)
			assert.Contains(t, err.Error(), path)
			assert.Contains(t, err.Error(), c.want)

			require.Error(t, s.Save(ctx, metadata("a"), 0), "Save must not overwrite a file it could not read")
			require.Error(t, s.Delete(ctx, "a"))
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, c.content, string(b))

			// Once repaired, the same store reads it: a failed load is not remembered.
			require.NoError(t, os.WriteFile(path, []byte(`{"version":1,"cycles":[]}`), 0o644))
			_, ok, err := s.Load(ctx, "a")
			require.NoError(t, err)
			assert.False(t, ok)
		})
	}
}

// Metadata is progress: a saved config that validation refuses (here, incomplete) must not
// make the file unreadable at the next start.
func TestFileStoreKeepsConfigsValidationRefuses(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "metadata.json")
	m := carousel.CycleMetadata{CycleID: "odd", Config: carousel.CycleConfig{Name: "odd", Type: "Retired", Throttle: -time.Second}}
	require.Error(t, m.Config.Validate(), "the test's own premise")
	require.NoError(t, carousel.NewFileStore(path).Save(ctx, m, 0))

	got, ok, err := carousel.NewFileStore(path).Load(ctx, "odd")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, m, got)
}

func TestFileStoreRollsBackWhenTheWriteFails(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "state")
	require.NoError(t, os.Mkdir(dir, 0o755))
	path := filepath.Join(dir, "metadata.json")
	s := carousel.NewFileStore(path)
	require.NoError(t, s.Save(ctx, metadata("a"), 0))
	require.NoError(t, s.Save(ctx, metadata("b"), 0))

	require.NoError(t, os.RemoveAll(dir)) // every write fails now
	changed := metadata("a")
	changed.Iteration = 99
	err := s.Save(ctx, changed, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), path)
	require.Error(t, s.Save(ctx, metadata("new"), 0))
	require.Error(t, s.Delete(ctx, "b"))

	got, _, err := s.Load(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, 2, got.Iteration, "a failed save changes nothing")
	_, ok, err := s.Load(ctx, "new")
	require.NoError(t, err)
	assert.False(t, ok, "a failed save of a new cycle leaves none")
	_, ok, err = s.Load(ctx, "b")
	require.NoError(t, err)
	assert.True(t, ok, "a failed delete keeps the cycle")

	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, s.Save(ctx, metadata("c"), 0))
	restarted := carousel.NewFileStore(path)
	for id, want := range map[string]bool{"a": true, "b": true, "c": true, "new": false} {
		_, ok, err := restarted.Load(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, want, ok, id)
	}
}
