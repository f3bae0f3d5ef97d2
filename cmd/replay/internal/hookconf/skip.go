package hookconf

import (
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/tasklog/tasklog/session/serve/wire"
)

// ServerSkip is how long hooks leave a database's server alone after it did not answer one of
// them in time (a stopped or hung process): they open the database themselves, or spool the
// payload, at once, so a hung server costs one slow hook rather than every hook.
const ServerSkip = 60 * time.Second

// serverMarker is the file, in RuntimeDir, whose modification time says when the server of
// the database at db last did not answer.
func serverMarker(db string, create bool) (string, error) {
	dir, err := runtimeDir(create)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, DBKey(db)+".unanswered"), nil
}

// MarkServerUnanswered notes that the server of the database at db did not answer a hook in
// time. It fails silently: a hook that cannot note it only costs the next hook its wait.
func MarkServerUnanswered(db string) {
	p, err := serverMarker(db, true)
	if err != nil {
		return
	}
	if os.WriteFile(p, nil, 0o600) == nil {
		now := time.Now()
		os.Chtimes(p, now, now)
	}
}

// ServerUnanswered tells whether the server of the database at db did not answer a hook in
// the last ServerSkip.
func ServerUnanswered(db string) bool {
	p, err := serverMarker(db, false)
	if err != nil {
		return false
	}
	fi, err := os.Stat(p)
	if err != nil {
		return false
	}
	ago := time.Since(fi.ModTime())
	return ago > -ServerSkip && ago < ServerSkip
}

// ServerTimedOut tells whether a hook's error from wire.Hook says the server was reached and
// did not answer in time: the connection's deadline passed (a full backlog, or no reply), or
// the server gave up on the request (code "timeout").
func ServerTimedOut(err error) bool {
	var we *wire.Error
	if errors.As(err, &we) {
		return we.Code == "timeout"
	}
	return errors.Is(err, os.ErrDeadlineExceeded)
}
