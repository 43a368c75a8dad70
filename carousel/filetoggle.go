package carousel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/feedkit/feedkit/internal/atomicfile"
)

// FileToggle is a Toggle read from a file that an operator, a deployment tool or a
// failover script writes: "true" makes this instance active, "false" passive. It accepts as
// well 1/0, on/off and active/passive, in any case, with whitespace around. The file is
// read on every call to Active, so that a change takes effect at the scheduler's next
// ToggleInterval.
//
// A missing file means passive, so that an instance whose file was never written does not
// start republishing next to the one that is active: being active takes a deliberate
// "true". Any other content, and a file that cannot be read, is an error, which the
// scheduler treats as passive too.
//
// The Generation of an activation is the file's modification time, in nanoseconds since
// 1970: every write of the file that makes an instance active (by an operator, a script,
// or Set) is a new activation, later than those before it, on this instance and on the
// others, as long as the machines' clocks agree to within the time between two switches.
// Rewriting "true" into a file that said so already is a new activation too: the
// scheduler restarts its cycles, each from its saved progress.
type FileToggle struct {
	path string
}

// NewFileToggle returns a toggle read from the file at path.
func NewFileToggle(path string) *FileToggle { return &FileToggle{path: path} }

// toggleContentShown bounds the content quoted in an error, in case the path names some
// large file by mistake.
const toggleContentShown = 64

// toggleFileLimit bounds what Active reads of the file: its words are a few bytes.
const toggleFileLimit = 4096

// Active implements Toggle.
func (t *FileToggle) Active(context.Context) (bool, Generation, error) {
	b, modified, err := t.read()
	if errors.Is(err, fs.ErrNotExist) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, fmt.Errorf("carousel: toggle file: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(string(b))) {
	case "true", "1", "on", "active":
		return true, Generation(max(modified, 1)), nil
	case "false", "0", "off", "passive":
		return false, 0, nil
	}
	shown := string(b)
	if len(shown) > toggleContentShown {
		shown = shown[:toggleContentShown] + "..."
	}
	return false, 0, fmt.Errorf("carousel: toggle file %s: content %q is not true or false (nor 1/0, on/off, active/passive)", t.path, shown)
}

// read returns the file's content and its modification time in nanoseconds, both of
// the one file opened: a file replaced in between (Set renames a new one into place)
// cannot pair one's content with the other's time.
func (t *FileToggle) read() ([]byte, int64, error) {
	f, err := os.Open(t.path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	b, err := io.ReadAll(io.LimitReader(f, toggleFileLimit))
	if err != nil {
		return nil, 0, err
	}
	return b, fi.ModTime().UnixNano(), nil
}

// Set writes active to the file, replacing it atomically so that a concurrent Active reads
// the old value or the new, never an empty file.
func (t *FileToggle) Set(active bool) error {
	content := "false\n"
	if active {
		content = "true\n"
	}
	if err := atomicfile.WriteFile(t.path, []byte(content), 0o644); err != nil {
		return fmt.Errorf("carousel: toggle file %s: %w", t.path, err)
	}
	return nil
}
