package jsonfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/jsonfile"
)

type item struct {
	ID   string `json:"id"`
	Size int    `json:"size"`
}

type doc struct {
	jsonfile.Header
	Items []item `json:"items"`
}

func file(t *testing.T) jsonfile.File {
	return jsonfile.File{Path: filepath.Join(t.TempDir(), "state.json"), Store: "test: file store", Version: 3}
}

func TestSaveThenLoad(t *testing.T) {
	f := file(t)
	require.NoError(t, f.Save(&doc{Items: []item{{"a", 1}, {"b", 2}}}))

	b, err := os.ReadFile(f.Path)
	require.NoError(t, err)
	assert.Equal(t, `{
  "version": 3,
  "items": [
    {
      "id": "a",
      "size": 1
    },
    {
      "id": "b",
      "size": 2
    }
  ]
}
`, string(b), "the version first, indented, a final newline")

	var got doc
	found, err := f.Load(&got)
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, doc{Header: jsonfile.Header{Version: 3}, Items: []item{{"a", 1}, {"b", 2}}}, got)
}

// Save writes its own version whatever the document says.
func TestSaveSetsTheVersion(t *testing.T) {
	f := file(t)
	require.NoError(t, f.Save(&doc{Header: jsonfile.Header{Version: 9}}))
	var got doc
	_, err := f.Load(&got)
	require.NoError(t, err)
	assert.Equal(t, 3, got.Version)
}

func TestLoadMissingFile(t *testing.T) {
	f := file(t)
	got := doc{Items: []item{{"kept", 1}}}
	found, err := f.Load(&got)
	require.NoError(t, err)
	assert.False(t, found)
	assert.Equal(t, doc{Items: []item{{"kept", 1}}}, got, "doc untouched")
}

func TestLoadRefuses(t *testing.T) {
	cases := map[string]struct{ content, want string }{
		"not JSON":      {`{"version":3,"items":[`, "unexpected end of JSON input"},
		"empty":         {``, "unexpected end of JSON input"},
		"no version":    {`{"items":[]}`, "version 0, want 3"},
		"later version": {`{"version":4,"items":[]}`, "version 4, want 3"},
		// The version is checked first: a later format that spells a member otherwise
		// is refused for its version.
		"later format": {`{"version":4,"items":{"a":1}}`, "version 4, want 3"},
		"bad member":   {`{"version":3,"items":{"a":1}}`, "cannot unmarshal object"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			f := file(t)
			require.NoError(t, os.WriteFile(f.Path, []byte(c.content), 0o600))
			var got doc
			_, err := f.Load(&got)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "test: file store "+f.Path+": ")
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// A file that cannot be read (here, a directory) is an error, not an empty store.
func TestLoadUnreadable(t *testing.T) {
	f := file(t)
	require.NoError(t, os.Mkdir(f.Path, 0o700))
	_, err := f.Load(&doc{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "test: file store: ")
	assert.Contains(t, err.Error(), f.Path)
}

func TestSaveFailureNamesTheFile(t *testing.T) {
	f := file(t)
	f.Path = filepath.Join(filepath.Dir(f.Path), "missing", "state.json")
	err := f.Save(&doc{})
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), "test: file store "+f.Path+": ")
}

func TestIndex(t *testing.T) {
	byID, err := jsonfile.Index("items", "id", []item{{"b", 2}, {"a", 1}}, func(it item) string { return it.ID })
	require.NoError(t, err)
	assert.Equal(t, map[string]item{"a": {"a", 1}, "b": {"b", 2}}, byID)

	_, err = jsonfile.Index("items", "id", []item{{"a", 1}, {"b", 2}, {"a", 3}}, func(it item) string { return it.ID })
	assert.EqualError(t, err, `items[2].id "a" appears twice`)

	_, err = jsonfile.Index("items", "size", []item{{"a", 1}, {"b", 1}}, func(it item) int { return it.Size })
	assert.EqualError(t, err, `items[1].size 1 appears twice`, "a number unquoted")

	empty, err := jsonfile.Index("items", "id", nil, func(it item) string { return it.ID })
	require.NoError(t, err)
	assert.NotNil(t, empty, "a map to add to")
	assert.Empty(t, empty)
}
