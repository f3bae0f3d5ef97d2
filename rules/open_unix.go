//go:build unix

package rules

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// openRegularOS opens without blocking (O_NONBLOCK: a named pipe without a writer opens at
// once), checks the type of what was opened and that its real path lies in dir. done is false
// when the generic way should be taken instead.
func openRegularOS(dir, name string, b *bound) (fh fs.File, info fs.FileInfo, done bool, err error) {
	full := filepath.Join(dir, filepath.FromSlash(name))
	f, err := os.OpenFile(full, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		// A socket cannot be opened at all (ENXIO): say what it is, as for a named pipe.
		if info, serr := os.Stat(full); serr == nil && !info.Mode().IsRegular() && !info.IsDir() {
			return nil, info, true, errNotRegular
		}
		return nil, nil, true, err
	}
	if info, err = f.Stat(); err != nil || !info.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, nil, true, err
		}
		return nil, info, true, errNotRegular
	}
	if err := b.confine(dir, name, f); err != nil {
		f.Close()
		return nil, nil, true, err
	}
	return f, info, true, nil
}

// listDirOS lists a folder opened without blocking, whose real path must lie in dir; entries
// come unsorted.
func listDirOS(dir, name string, b *bound) (entries []fs.DirEntry, done bool, err error) {
	f, err := os.OpenFile(filepath.Join(dir, filepath.FromSlash(name)), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, true, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, true, err
	}
	if !info.IsDir() {
		return nil, true, &fs.PathError{Op: "readdir", Path: name, Err: syscall.ENOTDIR}
	}
	if err := b.confine(dir, name, f); err != nil {
		return nil, true, err
	}
	entries, err = f.ReadDir(-1)
	return entries, true, err
}
