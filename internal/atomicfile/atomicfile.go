// Package atomicfile replaces a file's content so that a crash at any moment leaves either
// the old content or the new, never a mix or an empty file: the stores that keep state in
// a file across restarts rely on that to come back up.
package atomicfile

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// WriteFile replaces the content of the file at path with data. It writes a temporary file
// in the same directory (a rename is atomic only within one file system), flushes it to
// disk, and renames it over path; then it flushes the directory, so that the rename itself
// survives a power loss, where the platform allows.
//
// The file gets perm (before the umask) even when it existed with other permissions,
// because it is a new file. The directory must exist. On error the file at path is
// untouched and the temporary file removed.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := createTemp(dir, filepath.Base(path), perm)
	if err != nil {
		return err
	}
	name := tmp.Name()
	// After a successful rename there is nothing left at name, and Remove fails harmlessly.
	defer os.Remove(name)
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	// Without the sync, a crash after the rename can leave the new name on an empty file.
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// createTemp is os.CreateTemp with a permission, so that the file is created with perm
// less the umask, as os.WriteFile would, rather than 0600 then a chmod that ignores the
// umask.
func createTemp(dir, base string, perm os.FileMode) (*os.File, error) {
	for range 10000 {
		name := filepath.Join(dir, "."+base+"."+strconv.FormatUint(rand.Uint64(), 36)+".tmp")
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, &fs.PathError{Op: "createtemp", Path: filepath.Join(dir, "."+base+".*.tmp"), Err: fs.ErrExist}
}

// syncDir flushes the directory entry of the rename. It is best effort: some platforms
// (Windows) cannot open or sync a directory, and the data itself is already on disk.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}
