package recording

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"time"
)

// The file's header: a magic string that names the format, then the version.
const (
	fileMagic   = "FEEDKIT-RECORDING\n"
	fileVersion = 1
)

// Each block starts with blockMagic, so that a reader tells a block from garbage (and a
// torn file from a foreign one) before it trusts any length.
const blockMagic = "FKB1"

// maxBlock bounds a block's raw and compressed sizes, so that a corrupt length is refused
// rather than allocated.
const maxBlock = 64 << 20

// ErrNotRecording is the error of a file that is not a recording.
var ErrNotRecording = errors.New("recording: not a feedkit recording")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendFrame encodes f at the end of b.
func appendFrame(b []byte, f *Frame) []byte {
	b = append(b, byte(f.Kind))
	b = binary.AppendVarint(b, f.At.UnixNano())
	switch f.Kind {
	case Delivery:
		b = binary.AppendUvarint(b, uint64(f.Session))
		b = appendString(b, f.RoutingKey)
	case APIResponse:
		b = appendString(b, f.Method)
		b = appendString(b, f.URL)
		b = binary.AppendUvarint(b, uint64(f.Status))
	}
	b = binary.AppendUvarint(b, uint64(len(f.Body)))
	return append(b, f.Body...)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// decoder reads frames out of a block's raw bytes.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("a frame's %s is cut short or malformed", what)
	}
}

func (d *decoder) uvarint(what string) uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(what string) []byte {
	n := d.uvarint(what)
	if d.err != nil || n > uint64(len(d.b)) {
		d.fail(what)
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

// frame decodes the next frame; its Body points into the block, which the caller owns.
func (d *decoder) frame() Frame {
	var f Frame
	if len(d.b) == 0 {
		d.fail("kind")
		return f
	}
	f.Kind, d.b = Kind(d.b[0]), d.b[1:]
	at, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("time")
		return f
	}
	d.b = d.b[n:]
	f.At = time.Unix(0, at).UTC()
	switch f.Kind {
	case Delivery:
		f.Session = int(d.uvarint("session"))
		f.RoutingKey = string(d.bytes("routing key"))
	case APIResponse:
		f.Method = string(d.bytes("method"))
		f.URL = string(d.bytes("URL"))
		f.Status = int(d.uvarint("status"))
	default:
		if d.err == nil {
			d.err = fmt.Errorf("a frame of unknown kind %d", f.Kind)
		}
		return f
	}
	f.Body = d.bytes("body")
	return f
}
