package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// importSpool is where replay import copies an input it cannot read twice (a pipe): a folder
// of the user's own, $TMPDIR/tasklog-UID, created 0700. Each copy is locked (flock) by the
// process that writes it, so a copy whose lock can be taken belongs to a process that is gone
// (killed, even with SIGKILL) and the next import removes it. SIGINT and SIGTERM remove the
// process's copies before it exits (see tempFiles).
type importSpool struct {
	dir   string
	mu    sync.Mutex
	files map[string]*os.File // this process's copies, by name
}

// spoolPrefix and spoolSuffix frame the name of a copy in the spool folder.
const (
	spoolPrefix = "import-"
	spoolSuffix = ".jsonl"
)

func newImportSpool() *importSpool {
	return &importSpool{dir: filepath.Join(os.TempDir(), fmt.Sprintf("tasklog-%d", os.Getuid())), files: map[string]*os.File{}}
}

// errSpoolFolder is returned for a spool folder that is not private to the user.
var errSpoolFolder = errors.New("temporary folder is not private")

// private checks that dir is a folder (not a link to one) owned by the user that no one else
// may read or write: the copies hold the log.
func private(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%w: %s is not a folder (%s); remove it, or set TMPDIR to a folder of yours", errSpoolFolder, dir, fi.Mode().Type())
	case !ok:
		return fmt.Errorf("%w: %s: cannot tell its owner", errSpoolFolder, dir)
	case int(st.Uid) != os.Getuid():
		return fmt.Errorf("%w: %s is owned by uid %d, not by you (uid %d); remove it, or set TMPDIR to a folder of yours",
			errSpoolFolder, dir, st.Uid, os.Getuid())
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("%w: %s has mode %v, which lets others in; chmod 700 it, or remove it", errSpoolFolder, dir, fi.Mode().Perm())
	}
	return nil
}

// sweep removes the copies in the spool folder that no running process holds. It leaves alone
// a folder that is not the user's private one, and does nothing when there is none.
func (s *importSpool) sweep() {
	if private(s.dir) != nil {
		return
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, spoolPrefix) || !strings.HasSuffix(name, spoolSuffix) {
			continue
		}
		path := filepath.Join(s.dir, name)
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		// The lock is free only when the process that made the copy is gone.
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			os.Remove(path)
		}
		f.Close()
	}
}

// create makes a copy file for session.ImportOptions.CopyTo: in the private folder (made when
// missing, refused when it is not private), locked for as long as it is open, and one of the
// process's temporary files until the import removes it.
func (s *importSpool) create() (*os.File, error) {
	if err := os.Mkdir(s.dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create the folder for the copy: %w; set TMPDIR to a folder you can write", err)
	}
	if err := private(s.dir); err != nil {
		return nil, err
	}
	s.sweep()
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := temps.create(s.dir, spoolPrefix+"*"+spoolSuffix)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		os.Remove(f.Name())
		temps.forget(f.Name())
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	s.files[f.Name()] = f
	return f, nil
}

// close removes what is left of this process's copies.
func (s *importSpool) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, f := range s.files {
		f.Close()
		os.Remove(name)
		delete(s.files, name)
		temps.forget(name)
	}
}
