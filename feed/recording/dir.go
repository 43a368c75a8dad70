package recording

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
)

// Defaults of DirOptions.
const (
	DefaultMaxFileBytes = 256 << 20
	DefaultMaxFileAge   = time.Hour
)

// DirOptions tunes a Dir. The zero value is the defaults.
type DirOptions struct {
	// MaxFileBytes starts a new file once the current one holds this many bytes; 0
	// means DefaultMaxFileBytes.
	MaxFileBytes int64
	// MaxFileAge starts a new file once the current one is this old (by Clock); 0 means
	// DefaultMaxFileAge.
	MaxFileAge time.Duration
	// Writer tunes each file's Writer.
	Writer WriterOptions
	// Clock names the files and tells their age; nil is the wall clock.
	Clock clock.Clock
}

// A Dir records into a directory, one file after another: a new file once the current
// one is MaxFileBytes large or MaxFileAge old, named by the time it was started (UTC), so
// that the names sort as the files were written. The files read one after the other are
// one recording: Files lists them, and a Reader or a Player reads them concatenated
// (io.MultiReader). Like a Writer, it is safe for concurrent use.
type Dir struct {
	path string
	opts DirOptions
	clk  clock.Clock

	mu     sync.Mutex
	f      *os.File
	w      *Writer
	opened time.Time
	files  int
	err    error
}

// OpenDir starts recording into the directory path, which must exist; its first file is
// started at once.
func OpenDir(path string, opts DirOptions) (*Dir, error) {
	if opts.MaxFileBytes < 0 || opts.MaxFileAge < 0 {
		return nil, fmt.Errorf("recording: DirOptions.MaxFileBytes %d and MaxFileAge %v must not be negative", opts.MaxFileBytes, opts.MaxFileAge)
	}
	if opts.MaxFileBytes == 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if opts.MaxFileAge == 0 {
		opts.MaxFileAge = DefaultMaxFileAge
	}
	d := &Dir{path: path, opts: opts, clk: clock.OrReal(opts.Clock)}
	if err := d.startLocked(); err != nil {
		return nil, err
	}
	return d, nil
}

// fileSuffix ends every recording file's name.
const fileSuffix = ".rec"

// startLocked closes the current file, if any, and starts the next.
func (d *Dir) startLocked() error {
	if err := d.closeLocked(); err != nil {
		return err
	}
	now := d.clk.Now().UTC()
	// The sequence number keeps two files started in one instant apart, and in order.
	name := filepath.Join(d.path, fmt.Sprintf("feed-%s-%04d%s", now.Format("20060102T150405.000000000Z"), d.files, fileSuffix))
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("recording: %w", err)
	}
	w, err := NewWriter(f, d.opts.Writer)
	if err != nil {
		f.Close()
		return err
	}
	d.f, d.w, d.opened = f, w, now
	d.files++
	return nil
}

func (d *Dir) closeLocked() error {
	if d.f == nil {
		return nil
	}
	err := errors.Join(d.w.Close(), d.f.Close())
	d.f, d.w = nil, nil
	if err != nil {
		return fmt.Errorf("recording: close %s: %w", d.path, err)
	}
	return nil
}

// Append adds f to the current file, starting a new one first when it is due.
func (d *Dir) Append(f Frame) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return d.err
	}
	if d.w.Stats().WrittenBytes >= d.opts.MaxFileBytes || d.clk.Now().Sub(d.opened) >= d.opts.MaxFileAge {
		if d.err = d.startLocked(); d.err != nil {
			return d.err
		}
	}
	if err := d.w.Append(f); err != nil {
		d.err = err
	}
	return d.err
}

// RecordDelivery is Writer.RecordDelivery, into the directory.
func (d *Dir) RecordDelivery(session feed.SessionRef, dl feed.Delivery) {
	_ = d.Append(deliveryFrame(session, dl))
}

// RecordResponse is Writer.RecordResponse, into the directory.
func (d *Dir) RecordResponse(r feedapi.Response) { _ = d.Append(responseFrame(r)) }

// Err returns the error that stopped the recording, or nil.
func (d *Dir) Err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// Close writes the current file's last block and closes it.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.closeLocked()
}

// Files returns the recording files of the directory path, in the order they were
// written.
func Files(path string) ([]string, error) {
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasPrefix(e.Name(), "feed-") && strings.HasSuffix(e.Name(), fileSuffix) {
			out = append(out, filepath.Join(path, e.Name()))
		}
	}
	slices.Sort(out)
	return out, nil
}

// OpenFiles opens files (Files' list) as one recording, for NewReader or NewPlayer; its
// Close closes them all.
func OpenFiles(files []string) (io.ReadCloser, error) {
	var readers []io.Reader
	var closers []io.Closer
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			for _, c := range closers {
				c.Close()
			}
			return nil, fmt.Errorf("recording: %w", err)
		}
		readers, closers = append(readers, f), append(closers, f)
	}
	return &multiFile{Reader: io.MultiReader(readers...), closers: closers}, nil
}

type multiFile struct {
	io.Reader
	closers []io.Closer
}

func (m *multiFile) Close() error {
	var errs []error
	for _, c := range m.closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
