package recording_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed/recording"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 123456789, time.UTC)

// frames makes n frames of both kinds, with bodies like the feed's.
func frames(n int) []recording.Frame {
	out := make([]recording.Frame, n)
	for i := range out {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		if i%10 == 9 {
			out[i] = recording.Frame{Kind: recording.APIResponse, At: at, Method: "POST", Status: 202,
				URL:  fmt.Sprintf("https://api.example/v1/liveodds/recovery/initiate_request?request_id=%d", i),
				Body: []byte(`<response response_code="ACCEPTED"><action>recovery</action><message>ok</message></response>`)}
			continue
		}
		out[i] = recording.Frame{Kind: recording.Delivery, At: at, Session: i % 3,
			RoutingKey: fmt.Sprintf("hi.-.live.odds_change.1.sr:match.%d.-", 1000+i%17),
			Body:       []byte(fmt.Sprintf(`<odds_change product="1" event_id="sr:match:%d" timestamp="%d"><odds><market id="1" status="1"><outcome id="1" odds="%d.%02d" active="1"/></market></odds></odds_change>`, 1000+i%17, at.UnixMilli(), 1+i%5, i%100))}
	}
	return out
}

func write(t *testing.T, fs []recording.Frame, opts recording.WriterOptions) ([]byte, []int64) {
	t.Helper()
	var buf bytes.Buffer
	w, err := recording.NewWriter(&buf, opts)
	require.NoError(t, err)
	var blockStarts []int64
	last := int64(buf.Len())
	for _, f := range fs {
		require.NoError(t, w.Append(f))
		if int64(buf.Len()) != last {
			blockStarts = append(blockStarts, last)
			last = int64(buf.Len())
		}
	}
	require.NoError(t, w.Close())
	if int64(buf.Len()) != last {
		blockStarts = append(blockStarts, last)
	}
	st := w.Stats()
	assert.Equal(t, int64(len(fs)), st.Frames)
	assert.Equal(t, int64(len(blockStarts)), st.Blocks)
	assert.Equal(t, int64(buf.Len()), st.WrittenBytes)
	return buf.Bytes(), blockStarts
}

func readAll(t *testing.T, b []byte) ([]recording.Frame, error) {
	t.Helper()
	r, err := recording.NewReader(bytes.NewReader(b))
	require.NoError(t, err)
	var out []recording.Frame
	for {
		f, err := r.Next()
		if err != nil {
			assert.Equal(t, int64(len(out)), r.Frames())
			return out, err
		}
		out = append(out, f)
	}
}

// Every frame written is read back, equal and in order, then io.EOF.
func TestRoundTrip(t *testing.T) {
	fs := frames(2000)
	b, blocks := write(t, fs, recording.WriterOptions{BlockSize: 16 << 10})
	require.Greater(t, len(blocks), 5, "several blocks")
	got, err := readAll(t, b)
	require.ErrorIs(t, err, io.EOF)
	assert.Equal(t, fs, got)
	raw := 0
	for _, f := range fs {
		raw += len(f.Body)
	}
	assert.Less(t, len(b), raw/4, "compressed: %d bytes on disk for %d of bodies", len(b), raw)
}

// A file cut anywhere in its last block gives every frame of the blocks before it, then
// a TornError that names that block and its offset.
func TestTornFileReadsEveryWholeBlock(t *testing.T) {
	fs := frames(600)
	b, blocks := write(t, fs, recording.WriterOptions{BlockSize: 8 << 10})
	require.GreaterOrEqual(t, len(blocks), 3)
	last := blocks[len(blocks)-1]
	whole, err := readAll(t, b[:last])
	require.ErrorIs(t, err, io.EOF, "a file cut at a block's boundary is whole")
	for cut := last + 1; cut < int64(len(b)); cut += max(1, (int64(len(b))-last)/97) {
		got, err := readAll(t, b[:cut])
		var torn *recording.TornError
		require.ErrorAs(t, err, &torn, "cut at %d", cut)
		assert.Equal(t, len(blocks)-1, torn.Block)
		assert.Equal(t, last, torn.Offset)
		assert.Equal(t, int64(len(whole)), torn.Frames)
		assert.Equal(t, whole, got, "cut at %d: every frame of the whole blocks", cut)
	}
	assert.Equal(t, fs[:len(whole)], whole)
}

// A damaged byte in a block stops the reading there, with every frame before it.
func TestCorruptBlockIsRefused(t *testing.T) {
	fs := frames(600)
	b, blocks := write(t, fs, recording.WriterOptions{BlockSize: 8 << 10})
	require.GreaterOrEqual(t, len(blocks), 3)
	bad := bytes.Clone(b)
	bad[blocks[1]+30] ^= 0x40 // inside block 1's compressed bytes
	got, err := readAll(t, bad)
	var torn *recording.TornError
	require.ErrorAs(t, err, &torn)
	assert.Equal(t, 1, torn.Block)
	assert.Equal(t, blocks[1], torn.Offset)
	assert.Contains(t, torn.Error(), "checksum does not match")
	whole, _ := readAll(t, b[:blocks[1]])
	assert.Equal(t, whole, got)
}

// A file of another kind, or of a later version, is refused at once, saying so.
func TestForeignFilesAreRefused(t *testing.T) {
	for _, c := range []struct{ name, doc, want string }{
		{"empty", "", "shorter than the header"},
		{"xml", `<?xml version="1.0"?><odds_change/>`, `it starts "<?xml version=`},
		{"later", "FEEDKIT-RECORDING\n\x07", "version 7 of the format"},
	} {
		_, err := recording.NewReader(bytes.NewReader([]byte(c.doc)))
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
		if c.name != "later" {
			assert.ErrorIs(t, err, recording.ErrNotRecording, c.name)
		}
	}
}

// Sessions append from their own goroutines: every frame is recorded once, each
// session's in the order it appended them.
func TestConcurrentAppends(t *testing.T) {
	var buf bytes.Buffer
	w, err := recording.NewWriter(&buf, recording.WriterOptions{BlockSize: 4 << 10})
	require.NoError(t, err)
	const sessions, each = 4, 500
	var wg sync.WaitGroup
	for s := range sessions {
		wg.Go(func() {
			for i := range each {
				assert.NoError(t, w.Append(recording.Frame{Kind: recording.Delivery, At: t0, Session: s, RoutingKey: fmt.Sprint(i), Body: []byte("x")}))
			}
		})
	}
	wg.Wait()
	require.NoError(t, w.Close())
	got, err := readAll(t, buf.Bytes())
	require.ErrorIs(t, err, io.EOF)
	require.Len(t, got, sessions*each)
	next := make([]int, sessions)
	for _, f := range got {
		assert.Equal(t, fmt.Sprint(next[f.Session]), f.RoutingKey, "session %d in order", f.Session)
		next[f.Session]++
	}
}

// After a failed write the Writer records nothing more and says why.
func TestWriteErrorStopsTheRecording(t *testing.T) {
	fw := &failingWriter{after: 1}
	w, err := recording.NewWriter(fw, recording.WriterOptions{BlockSize: 1})
	require.NoError(t, err)
	err = w.Append(frames(1)[0])
	require.ErrorIs(t, err, errDiskFull)
	assert.ErrorIs(t, w.Append(frames(1)[0]), errDiskFull)
	assert.Equal(t, int64(0), w.Stats().Blocks)
	_, err = recording.NewWriter(&bytes.Buffer{}, recording.WriterOptions{BlockSize: -1})
	assert.ErrorContains(t, err, "WriterOptions.BlockSize -1")
}

var errDiskFull = errors.New("disk full")

type failingWriter struct{ after int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.after == 0 {
		return 0, errDiskFull
	}
	f.after--
	return len(p), nil
}
