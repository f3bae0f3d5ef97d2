package hookconf

import (
	"errors"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/tasklog/tasklog/session/serve/wire"
)

// ErrNotPrivate is RuntimeDir's error for a folder another user owns or may enter.
var ErrNotPrivate = errors.New("not a private folder of this user")

// RuntimeDir is this user's private folder for what hooks keep between runs outside the
// database's folder: $XDG_RUNTIME_DIR/tasklog when XDG_RUNTIME_DIR is set (a folder in memory
// on most systems, on no disk the database shares), else the user's socket folder in the
// temporary directory (wire.PrivateDir). It is made, mode 0700, when missing, and refused
// (ErrNotPrivate) unless it is a real folder of this user that no one else may enter.
func RuntimeDir() (string, error) { return runtimeDir(true) }

// runtimeDir is RuntimeDir, made when missing only if create is set (else a missing folder is
// the error of os.Lstat).
func runtimeDir(create bool) (string, error) {
	dir := wire.PrivateDir()
	if x := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(x) {
		dir = filepath.Join(x, "tasklog")
	}
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", err
		}
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !st.IsDir() || st.Mode().Perm()&0o077 != 0 || (ok && int(sys.Uid) != os.Getuid()) {
		return "", errors.New(dir + " (mode " + st.Mode().String() + "): " + ErrNotPrivate.Error())
	}
	return dir, nil
}

// DBKey names what RuntimeDir holds for the database at db: a hash (64-bit FNV-1a, in hex)
// of its absolute path.
func DBKey(db string) string {
	if abs, err := filepath.Abs(db); err == nil {
		db = abs
	}
	h := fnv.New64a()
	h.Write([]byte(db))
	return strconv.FormatUint(h.Sum64(), 16)
}
