package rules

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// errOutside is a rule file, rules folder or import whose real path, links resolved, leaves the
// folder it is read from (the workspace root, or the home folder): it is not read, so that a
// link in a workspace cannot hand the model a file from elsewhere on the machine.
var errOutside = errors.New("its real path leaves the folder it is read from")

// outsideError says which link leads out and where.
type outsideError struct {
	name   string // the file or folder as it was looked for, relative to the folder read
	link   string // the link on its way that leads out (name itself, or a folder above it)
	target string // what that link says, as written
	real   string // where name really is
	bound  string // the folder read, links resolved
}

func (e *outsideError) Error() string {
	target := e.target
	if target != e.real {
		target += " (" + e.real + ")"
	}
	if e.link == e.name {
		return fmt.Sprintf("%s is a link to %s, outside %s", e.name, target, e.bound)
	}
	return fmt.Sprintf("%s leads through the link %s to %s, outside %s", e.name, e.link, target, e.bound)
}

func (e *outsideError) Unwrap() error { return errOutside }

// asOutside returns err as an *outsideError, or nil. It is called on every read's result, so it
// allocates nothing for a nil error.
func asOutside(err error) *outsideError {
	if err == nil {
		return nil
	}
	var out *outsideError
	if errors.As(err, &out) {
		return out
	}
	return nil
}

// outsideNote is the File a collection reports for a rule file or folder that leads out of its
// place: [Load] turns it into a diagnostic, not a rule.
func outsideNote(f File, err *outsideError) File {
	f.Content, f.Size, f.Digest = nil, 0, ""
	f.ReadError = fmt.Sprintf("%s: %s; it was not read", DiagOutsideRoot, err.Error())
	return f
}

// bound is the folder an os.DirFS reads with its links resolved, found once per collection and
// only when a file or folder is actually read (a [Reader]'s memory of a file vouches for a read
// that was checked).
type bound struct {
	dir  string
	real string
	err  error
	done bool
}

// realDir returns dir with its links resolved, remembered for the collection.
func (b *bound) realDir(dir string) (string, error) {
	if b == nil {
		return realDir(dir)
	}
	if !b.done || b.dir != dir {
		b.dir, b.done = dir, true
		b.real, b.err = realDir(dir)
	}
	return b.real, b.err
}

// realDir is folder dir with its links resolved, as the kernel names it once opened (as
// openedPath names the files in it).
func realDir(dir string) (string, error) {
	fh, err := os.Open(dir)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	return openedPath(fh, dir)
}

// resolve is the absolute path of p with its links resolved.
func resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// inside reports whether real lies in folder bound (both resolved).
func inside(real, bound string) bool {
	if real == bound {
		return true
	}
	if !strings.HasSuffix(bound, string(filepath.Separator)) {
		bound += string(filepath.Separator)
	}
	return strings.HasPrefix(real, bound)
}

// confine checks that name of folder dir, opened as fh, really lies in dir. It costs one
// system call on Linux (the open file's path) and the resolution of dir once per collection.
func (b *bound) confine(dir, name string, fh *os.File) error {
	full := filepath.Join(dir, filepath.FromSlash(name))
	real, err := openedPath(fh, full)
	if err != nil {
		return fmt.Errorf("resolve the links of %s: %w", name, err)
	}
	root, err := b.realDir(dir)
	if err != nil {
		return fmt.Errorf("resolve the links of the folder %s: %w", dir, err)
	}
	if inside(real, root) {
		return nil
	}
	return outsideOf(dir, name, real, root)
}

// outsideOf finds the link on the way to name that leads out of dir, for the diagnostic.
func outsideOf(dir, name, real, root string) *outsideError {
	e := &outsideError{name: name, link: name, target: real, real: real, bound: root}
	parts := strings.Split(name, "/")
	for i := range parts {
		step := path.Join(parts[:i+1]...)
		full := filepath.Join(dir, filepath.FromSlash(step))
		info, err := os.Lstat(full)
		if err != nil || info.Mode()&os.ModeSymlink == 0 {
			continue
		}
		if r, err := resolve(full); err == nil && inside(r, root) {
			continue // a link that stays inside; a later one leads out
		}
		e.link = step
		if t, err := os.Readlink(full); err == nil {
			e.target = t
		}
		break
	}
	return e
}
