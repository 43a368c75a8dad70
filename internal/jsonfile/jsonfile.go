// Package jsonfile keeps a file store's state in one versioned JSON document, read whole
// and rewritten whole through internal/atomicfile, so that recovery's and carousel's file
// stores behave alike: a missing file is an empty store; a file of another version, one
// that is not JSON, or one holding a key twice is refused with an error naming the file
// and what is wrong, never overwritten; and the file is the owner's only (0600), because
// it is the state of the process that writes it.
package jsonfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"

	"github.com/feedkit/feedkit/internal/atomicfile"
)

// Mode is the permission of a file that Save writes, before the umask: the file holds one
// process's state, which no other user has a reason to read or write. Save replaces the
// file, so a file an operator made readable to others becomes the owner's only again.
const Mode os.FileMode = 0o600

// Header is the member every document starts with: the version of its format. A store's
// document type embeds it; Load checks it and Save sets it.
type Header struct {
	Version int `json:"version"`
}

func (h *Header) header() *Header { return h }

// Document is a pointer to a struct that embeds Header.
type Document interface{ header() *Header }

// File is one store's document on disk.
type File struct {
	// Path is the file's path. Its directory must exist by the first Save.
	Path string
	// Store names the store in errors, e.g. "recovery: file store".
	Store string
	// Version is the format's version: Load refuses any other (a file written in a later
	// format is refused rather than misread), Save writes it.
	Version int
}

// Load reads the file into doc. It reports false, leaving doc untouched, when there is no
// file. The version is checked before the rest is decoded, so that a file of another
// format is refused for its version, not for a member that format spells otherwise.
func (f File) Load(doc Document) (bool, error) {
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s: %w", f.Store, err) // the error names the file
	}
	var h Header
	if err := json.Unmarshal(b, &h); err != nil {
		return false, f.Error(err)
	}
	if h.Version != f.Version {
		return false, f.Error(fmt.Errorf("version %d, want %d", h.Version, f.Version))
	}
	if err := json.Unmarshal(b, doc); err != nil {
		return false, f.Error(err)
	}
	return true, nil
}

// Save replaces the file's content with doc, at f.Version, indented and ending in a
// newline so that it reads and diffs well, with permission Mode. A crash leaves either
// the old file or the new one; on error the old one is left as it was.
func (f File) Save(doc Document) error {
	doc.header().Version = f.Version
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return f.Error(err)
	}
	if err := atomicfile.WriteFile(f.Path, append(b, '\n'), Mode); err != nil {
		return f.Error(err)
	}
	return nil
}

// Error returns err as an error of the store's file: "<store> <path>: <err>".
func (f File) Error(err error) error { return fmt.Errorf("%s %s: %w", f.Store, f.Path, err) }

// Index returns items by key, or an error naming the first item whose key an earlier one
// has: items is the document's list member (its name is member, e.g. "cycles") and name
// is the key's member in an item (e.g. "cycleId"). A file holding a key twice was not
// written by its store; keeping either item would silently drop the other, so the file is
// refused for an operator to repair.
func Index[K comparable, V any](member, name string, items []V, key func(V) K) (map[K]V, error) {
	m := make(map[K]V, len(items))
	for i, it := range items {
		k := key(it)
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("%s[%d].%s %s appears twice", member, i, name, quote(k))
		}
		m[k] = it
	}
	return m, nil
}

// quote returns k quoted when it is a string, so that an empty or spaced key reads as
// one, and as it is otherwise (a number).
func quote(k any) string {
	if reflect.ValueOf(k).Kind() == reflect.String {
		return fmt.Sprintf("%q", k)
	}
	return fmt.Sprint(k)
}
