//go:build unix

package rules

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// openRegularOS opens without blocking (O_NONBLOCK: a named pipe without a writer opens at
// once) and checks the type of what was opened. done is false when the generic way should be
// taken instead.
func openRegularOS(dir, name string) (fh fs.File, info fs.FileInfo, done bool, err error) {
	f, err := os.OpenFile(filepath.Join(dir, filepath.FromSlash(name)), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, true, err
	}
	if info, err = f.Stat(); err != nil || !info.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, nil, true, err
		}
		return nil, info, true, errNotRegular
	}
	return f, info, true, nil
}

// listDirOS lists a folder opened without blocking; entries come unsorted.
func listDirOS(dir, name string) (entries []fs.DirEntry, done bool, err error) {
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
	entries, err = f.ReadDir(-1)
	return entries, true, err
}
