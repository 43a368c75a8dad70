package carousel

import (
	"context"
	"errors"
	"fmt"
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
type FileToggle struct {
	path string
}

// NewFileToggle returns a toggle read from the file at path.
func NewFileToggle(path string) *FileToggle { return &FileToggle{path: path} }

// toggleContentShown bounds the content quoted in an error, in case the path names some
// large file by mistake.
const toggleContentShown = 64

// Active implements Toggle.
func (t *FileToggle) Active(context.Context) (bool, error) {
	b, err := os.ReadFile(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("carousel: toggle file: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(string(b))) {
	case "true", "1", "on", "active":
		return true, nil
	case "false", "0", "off", "passive":
		return false, nil
	}
	shown := string(b)
	if len(shown) > toggleContentShown {
		shown = shown[:toggleContentShown] + "..."
	}
	return false, fmt.Errorf("carousel: toggle file %s: content %q is not true or false (nor 1/0, on/off, active/passive)", t.path, shown)
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
