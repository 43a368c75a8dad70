package recording_test

import (
	"bytes"
	"io"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed/recording"
)

// Recordings written one after the other read as one.
func TestConcatenatedRecordingsReadAsOne(t *testing.T) {
	fs := frames(300)
	a, _ := write(t, fs[:100], recording.WriterOptions{BlockSize: 2 << 10})
	b, _ := write(t, fs[100:], recording.WriterOptions{BlockSize: 2 << 10})
	got, err := readAll(t, append(bytes.Clone(a), b...))
	require.ErrorIs(t, err, io.EOF)
	assert.Equal(t, fs, got)
}

// A Dir starts a new file by size and by age; its files, read together, are every frame
// in order; a crash that cut the last file loses only that file's last block.
func TestDirRotatesAndReadsAsOne(t *testing.T) {
	dir := t.TempDir()
	clk := clocktest.NewFake(t0)
	d, err := recording.OpenDir(dir, recording.DirOptions{MaxFileBytes: 8 << 10, MaxFileAge: time.Hour,
		Writer: recording.WriterOptions{BlockSize: 2 << 10}, Clock: clk})
	require.NoError(t, err)
	fs := frames(1500)
	for i, f := range fs {
		if i == 1000 {
			clk.Advance(time.Hour) // the next frame starts a file by age
		}
		require.NoError(t, d.Append(f))
	}
	require.NoError(t, d.Close())
	require.NoError(t, d.Err())

	files, err := recording.Files(dir)
	require.NoError(t, err)
	require.Greater(t, len(files), 3, "rotated by size")
	for _, name := range files[:len(files)-1] {
		st, err := os.Stat(name)
		require.NoError(t, err)
		assert.Less(t, st.Size(), int64(8<<10+4<<10), "%s: about MaxFileBytes, a block at most over", name)
	}
	r, err := recording.OpenFiles(files)
	require.NoError(t, err)
	all, err := io.ReadAll(r)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	got, err := readAll(t, all)
	require.ErrorIs(t, err, io.EOF)
	assert.Equal(t, fs, got)

	// A crash: the last file cut short. Every whole block of every file is read.
	last := files[len(files)-1]
	st, err := os.Stat(last)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(last, st.Size()-3))
	r, err = recording.OpenFiles(files)
	require.NoError(t, err)
	all, err = io.ReadAll(r)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	got, err = readAll(t, all)
	var torn *recording.TornError
	require.ErrorAs(t, err, &torn)
	assert.Equal(t, fs[:len(got)], got, "every frame before the cut block, in order")
	assert.Less(t, len(got), len(fs))
	assert.GreaterOrEqual(t, len(got), len(fs)-20, "no more than a block lost")
}

// The directory's first file is started at once, and a bad option is refused.
func TestOpenDir(t *testing.T) {
	dir := t.TempDir()
	d, err := recording.OpenDir(dir, recording.DirOptions{})
	require.NoError(t, err)
	require.NoError(t, d.Close())
	files, err := recording.Files(dir)
	require.NoError(t, err)
	require.Len(t, files, 1)

	// By age alone: a frame an hour after the file began starts the next.
	aged := t.TempDir()
	clk := clocktest.NewFake(t0)
	d, err = recording.OpenDir(aged, recording.DirOptions{Clock: clk})
	require.NoError(t, err)
	require.NoError(t, d.Append(frames(1)[0]))
	clk.Advance(59 * time.Minute)
	require.NoError(t, d.Append(frames(1)[0]))
	clk.Advance(time.Minute)
	require.NoError(t, d.Append(frames(1)[0]))
	require.NoError(t, d.Close())
	files, err = recording.Files(aged)
	require.NoError(t, err)
	assert.Len(t, files, 2)

	_, err = recording.OpenDir(dir, recording.DirOptions{MaxFileAge: -time.Second})
	assert.ErrorContains(t, err, "DirOptions.MaxFileBytes 0 and MaxFileAge -1s")
	_, err = recording.OpenDir(t.TempDir()+"/missing", recording.DirOptions{})
	assert.Error(t, err)
}
