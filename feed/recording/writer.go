package recording

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// DefaultBlockSize is the raw bytes a Writer gathers before it writes a block: a few
// hundred feed messages, so that a crash loses little and a block compresses well.
const DefaultBlockSize = 256 << 10

// WriterOptions tunes a Writer. The zero value is the defaults.
type WriterOptions struct {
	// BlockSize is the raw bytes gathered into one block; 0 means DefaultBlockSize.
	// What a crash loses is at most one block: a smaller one loses less and compresses
	// worse.
	BlockSize int
}

// WriterStats counts what a Writer wrote.
type WriterStats struct {
	Frames       int64 `json:"frames"`        // frames appended
	Blocks       int64 `json:"blocks"`        // blocks written
	RawBytes     int64 `json:"raw_bytes"`     // frames' encoded bytes, before compression
	WrittenBytes int64 `json:"written_bytes"` // bytes written, header and block headers included
}

// A Writer appends frames to a recording. It is safe for concurrent use: the sessions'
// goroutines append to one Writer. Frames are written in blocks; Flush writes the block
// being gathered, and Close flushes (it does not close the underlying writer).
type Writer struct {
	mu    sync.Mutex
	w     io.Writer
	size  int
	enc   *zstd.Encoder
	raw   []byte // the block being gathered
	n     int    // its frames
	out   []byte // a block's header and compressed bytes, reused
	stats WriterStats
	err   error // the first write error: the recording stops there
}

// NewWriter starts a recording on w, writing its header.
func NewWriter(w io.Writer, opts WriterOptions) (*Writer, error) {
	if opts.BlockSize < 0 || opts.BlockSize > maxBlock/2 {
		return nil, fmt.Errorf("recording: WriterOptions.BlockSize %d must be 0 to %d", opts.BlockSize, maxBlock/2)
	}
	if opts.BlockSize == 0 {
		opts.BlockSize = DefaultBlockSize
	}
	// One goroutine, the fastest level: feed messages compress tenfold and more at it,
	// and the recording must not slow the feed (see BENCHMARKS.md).
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	header := append([]byte(fileMagic), fileVersion)
	if _, err := w.Write(header); err != nil {
		return nil, fmt.Errorf("recording: write the header: %w", err)
	}
	rw := &Writer{w: w, size: opts.BlockSize, enc: enc, raw: make([]byte, 0, opts.BlockSize+4096)}
	rw.stats.WrittenBytes = int64(len(header))
	return rw, nil
}

// Append adds f to the recording; it is written with its block. After a write error,
// Append returns that error and records nothing more.
func (w *Writer) Append(f Frame) error {
	if f.Kind != Delivery && f.Kind != APIResponse {
		return fmt.Errorf("recording: Append: a frame of unknown kind %d", f.Kind)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.raw = appendFrame(w.raw, &f)
	w.n++
	w.stats.Frames++
	if len(w.raw) >= w.size {
		return w.flushLocked()
	}
	return nil
}

// Flush writes the block being gathered, if it has frames.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

// Close writes the last block. The underlying writer is the caller's to close.
func (w *Writer) Close() error { return w.Flush() }

// Stats returns the Writer's counts.
func (w *Writer) Stats() WriterStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

func (w *Writer) flushLocked() error {
	if w.err != nil || w.n == 0 {
		return w.err
	}
	out := append(w.out[:0], blockMagic...)
	out = binary.AppendUvarint(out, uint64(w.n))
	out = binary.AppendUvarint(out, uint64(len(w.raw)))
	// The compressed length and checksum follow the compressed bytes' size, which is
	// known only once compressed: compress after a fixed-size gap and fill it in.
	gap := len(out)
	out = append(out, make([]byte, binary.MaxVarintLen64+4)...)
	out = w.enc.EncodeAll(w.raw, out)
	comp := out[gap+binary.MaxVarintLen64+4:]
	head := binary.AppendUvarint(out[gap:gap], uint64(len(comp)))
	head = binary.LittleEndian.AppendUint32(head, crc32.Checksum(comp, castagnoli))
	// Close the gap the shorter varint left.
	n := copy(out[gap+len(head):], comp)
	out = out[:gap+len(head)+n]
	w.out = out
	if _, err := w.w.Write(out); err != nil {
		w.err = fmt.Errorf("recording: write block %d: %w", w.stats.Blocks, err)
		return w.err
	}
	w.stats.Blocks++
	w.stats.RawBytes += int64(len(w.raw))
	w.stats.WrittenBytes += int64(len(out))
	w.raw, w.n = w.raw[:0], 0
	return nil
}
