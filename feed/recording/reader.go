package recording

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/zstd"
)

// A TornError ends the reading of a recording that stops inside a block, or whose block
// is damaged: the writer crashed while writing it, or the file was cut or corrupted.
// Every frame of the blocks before it has been read.
type TornError struct {
	// Offset is the byte offset of the block that could not be read, Block its index.
	Offset int64
	Block  int
	// Frames is how many frames were read before it.
	Frames int64
	// Reason says what is wrong with the block.
	Reason string
}

func (e *TornError) Error() string {
	return fmt.Sprintf("recording: torn at block %d (byte %d), after %d frames: %s", e.Block, e.Offset, e.Frames, e.Reason)
}

// A Reader reads a recording's frames in order.
type Reader struct {
	r      *bufio.Reader
	dec    *zstd.Decoder
	off    int64 // of the next block
	cur    int64 // of the block being read
	block  int   // index of the next block
	frames int64
	comp   []byte
	raw    []byte
	d      decoder
	left   int // frames left in the current block
	err    error
}

// NewReader reads the header of the recording r and returns a Reader of its frames. A
// file that is not a recording is refused with ErrNotRecording; one of a later version
// with an error that says so.
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head := make([]byte, len(fileMagic)+1)
	if n, err := io.ReadFull(br, head); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: %d bytes, shorter than the header", ErrNotRecording, n)
		}
		return nil, fmt.Errorf("recording: read the header: %w", err)
	}
	if string(head[:len(fileMagic)]) != fileMagic {
		return nil, fmt.Errorf("%w: it starts %q", ErrNotRecording, head[:min(len(head), 16)])
	}
	if v := head[len(fileMagic)]; v != fileVersion {
		return nil, fmt.Errorf("recording: version %d of the format, this kit reads version %d", v, fileVersion)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxBlock))
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	return &Reader{r: br, dec: dec, off: int64(len(head))}, nil
}

// Next returns the next frame: io.EOF after the last one of a whole recording, a
// *TornError after the last whole block of a torn one. The frame's Body is its own.
func (r *Reader) Next() (Frame, error) {
	for r.left == 0 {
		if r.err != nil {
			return Frame{}, r.err
		}
		if r.err = r.readBlock(); r.err != nil {
			return Frame{}, r.err
		}
	}
	f := r.d.frame()
	if r.d.err != nil {
		r.left = 0
		r.err = r.torn(r.cur, r.block-1, r.d.err.Error())
		return Frame{}, r.err
	}
	f.Body = bytes.Clone(f.Body)
	r.left--
	r.frames++
	if r.left == 0 && len(r.d.b) != 0 {
		r.err = r.torn(r.cur, r.block-1, fmt.Sprintf("%d bytes after its last frame", len(r.d.b)))
	}
	return f, nil
}

// Frames returns how many frames have been read.
func (r *Reader) Frames() int64 { return r.frames }

func (r *Reader) torn(off int64, block int, reason string) error {
	return &TornError{Offset: off, Block: block, Frames: r.frames, Reason: reason}
}

// readBlock reads, checks and decompresses the next block.
func (r *Reader) readBlock() error {
	start := r.off
	magic := make([]byte, len(blockMagic))
	n, err := io.ReadFull(r.r, magic)
	if err == io.EOF {
		return io.EOF
	}
	if err != nil {
		return r.torn(start, r.block, fmt.Sprintf("%d bytes of a block's header (%v)", n, err))
	}
	if string(magic) == fileMagic[:len(blockMagic)] {
		// Another recording's header: recordings concatenated (a directory's files read
		// one after the other) are one recording.
		if err := r.skipHeader(start); err != nil {
			return err
		}
		return r.readBlock()
	}
	if string(magic) != blockMagic {
		return r.torn(start, r.block, fmt.Sprintf("no block starts here (%q)", magic))
	}
	read := int64(len(magic))
	field := func() (uint64, bool) {
		v, err := binary.ReadUvarint(&countingReader{r.r, &read})
		return v, err == nil
	}
	frames, ok1 := field()
	rawLen, ok2 := field()
	compLen, ok3 := field()
	if !ok1 || !ok2 || !ok3 {
		return r.torn(start, r.block, "the block's header is cut short")
	}
	if rawLen > maxBlock || compLen > maxBlock || frames == 0 || frames > rawLen {
		return r.torn(start, r.block, fmt.Sprintf("a block's header of %d frames, %d raw and %d compressed bytes", frames, rawLen, compLen))
	}
	var sum [4]byte
	if _, err := io.ReadFull(r.r, sum[:]); err != nil {
		return r.torn(start, r.block, "the block's checksum is cut short")
	}
	r.comp = grow(r.comp, int(compLen))
	if n, err := io.ReadFull(r.r, r.comp); err != nil {
		return r.torn(start, r.block, fmt.Sprintf("%d of its %d compressed bytes", n, compLen))
	}
	if crc32.Checksum(r.comp, castagnoli) != binary.LittleEndian.Uint32(sum[:]) {
		return r.torn(start, r.block, "its checksum does not match")
	}
	raw, err := r.dec.DecodeAll(r.comp, r.raw[:0])
	if err != nil || uint64(len(raw)) != rawLen {
		return r.torn(start, r.block, fmt.Sprintf("it does not decompress to its %d bytes", rawLen))
	}
	r.raw = raw
	r.d = decoder{b: raw}
	r.left = int(frames)
	r.cur, r.off = start, start+read+4+int64(compLen)
	r.block++
	return nil
}

// skipHeader reads the rest of a recording's header that follows another recording,
// whose first bytes readBlock has read.
func (r *Reader) skipHeader(start int64) error {
	rest := make([]byte, len(fileMagic)+1-len(blockMagic))
	if _, err := io.ReadFull(r.r, rest); err != nil {
		return r.torn(start, r.block, "a recording's header is cut short")
	}
	if string(rest[:len(rest)-1]) != fileMagic[len(blockMagic):] {
		return r.torn(start, r.block, "no block starts here")
	}
	if v := rest[len(rest)-1]; v != fileVersion {
		return r.torn(start, r.block, fmt.Sprintf("a recording of version %d follows; this kit reads version %d", v, fileVersion))
	}
	r.off = start + int64(len(fileMagic)+1)
	return nil
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// countingReader counts the bytes a varint takes.
type countingReader struct {
	r *bufio.Reader
	n *int64
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		*c.n++
	}
	return b, err
}
