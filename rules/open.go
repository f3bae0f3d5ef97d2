package rules

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"slices"
	"strings"
)

// errNotRegular is a rule file that is a named pipe, a socket, a device or anything else but a
// regular file: opening or reading one can block forever or never end, so it is not read.
var errNotRegular = errors.New("not a regular file")

// osDir returns the folder of an os.DirFS, whose files can be opened so that a file swapped for
// a named pipe after its type was checked cannot block the open.
func osDir(fsys fs.FS) (string, bool) {
	t := reflect.TypeOf(fsys)
	if t == nil || t.PkgPath() != "os" || t.Name() != "dirFS" || t.Kind() != reflect.String {
		return "", false
	}
	return reflect.ValueOf(fsys).String(), true
}

// openRegular opens a file that must be a regular file, checking its type before the open and
// again on the open file. errNotRegular comes with the file's info. On an OS folder, a file
// whose real path leaves the folder (through a link) is an *outsideError; b remembers the
// folder's real path for the collection (nil: resolved at each call).
func openRegular(fsys fs.FS, name string, b *bound) (fs.File, fs.FileInfo, error) {
	if dir, ok := osDir(fsys); ok && fs.ValidPath(name) {
		if fh, info, done, err := openRegularOS(dir, name, b); done {
			return fh, info, err
		}
	}
	info, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, info, errNotRegular
	}
	fh, err := fsys.Open(name)
	if err != nil {
		return nil, nil, err
	}
	if info, err = fh.Stat(); err != nil || !info.Mode().IsRegular() {
		fh.Close()
		if err != nil {
			return nil, nil, err
		}
		return nil, info, errNotRegular
	}
	return fh, info, nil
}

// listDir is fs.ReadDir, except that a folder of an os.DirFS swapped for a named pipe cannot
// block the open, and one whose real path leaves the os.DirFS's folder is an *outsideError.
func listDir(fsys fs.FS, name string, b *bound) ([]fs.DirEntry, error) {
	if dir, ok := osDir(fsys); ok && fs.ValidPath(name) {
		if entries, done, err := listDirOS(dir, name, b); done {
			if err == nil {
				slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
			}
			return entries, err
		}
	}
	return fs.ReadDir(fsys, name)
}

// kindOf names a file type for a diagnostic.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a folder"
	}
	return fmt.Sprintf("a special file (%v)", m.Type())
}

// notRegular is the File a collection reports for a rule file of another type: [Load] turns it
// into a diagnostic, not a rule.
func notRegular(f File, m fs.FileMode) File {
	f.Content, f.Size, f.Digest = nil, 0, ""
	f.ReadError = fmt.Sprintf("%s: %s, not a regular file; it was not read", DiagNotRegular, kindOf(m))
	return f
}
