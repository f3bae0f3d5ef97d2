package serve

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/tasklog/tasklog/session/serve/wire"
)

// ErrRunning is Listen's error when another server holds the database's lock.
var ErrRunning = errors.New("a server for this database is already running")

// ErrUntrustedSocket is Dial's error when the socket, or its folder in the shared temporary
// directory, is not this user's own: whoever listens there could answer the hooks. It is
// package wire's error of the same name.
var ErrUntrustedSocket = wire.ErrUntrustedSocket

// SocketPath is where the server of the database at dbPath listens: beside the database
// ("<db>.sock"), or, when that path is too long for a Unix socket, in an owner-only folder of
// the temporary directory named after a hash of the database's absolute path. Package wire,
// the standard-library client, computes it; this is the same function.
func SocketPath(dbPath string) string { return wire.SocketPath(dbPath) }

// lockFile holds an exclusive flock on "<socket>.lock" while the server runs: of two servers
// starting at once, one gets it and the other gets ErrRunning. The kernel releases it when the
// process dies, however it dies.
type lockFile struct{ f *os.File }

func lock(sock string) (*lockFile, error) {
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		return nil, fmt.Errorf("socket folder: %w", err)
	}
	if err := wire.CheckDir(filepath.Dir(sock)); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(sock+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrRunning
		}
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return &lockFile{f: f}, nil
}

func (l *lockFile) release() {
	if l != nil && l.f != nil {
		syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
		l.f.Close()
	}
}

// listen listens on sock, owner-only (mode 0600). The caller holds the lock, so a socket file
// there is a dead server's: one that accepts a connection is refused (ErrRunning), any other
// is removed.
func listen(sock string) (net.Listener, error) {
	if c, err := net.DialTimeout("unix", sock, 200*time.Millisecond); err == nil {
		c.Close()
		return nil, ErrRunning
	}
	if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove stale socket: %w", err)
	}
	old := syscall.Umask(0o077)
	l, err := net.Listen("unix", sock)
	syscall.Umask(old)
	if err != nil {
		return nil, err
	}
	l.(*net.UnixListener).SetUnlinkOnClose(true)
	if err := os.Chmod(sock, 0o600); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}
