// Package hookconf is what 'replay hook' and the small hook program replay-hook must agree on:
// the budgets, the payload limit, the hook log and how it is written, and the variable that
// hands the budget's start from one to the other. It links nothing but a few standard packages,
// as replay-hook must start fast.
package hookconf

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/tasklog/tasklog/session/serve/wire"
)

// Hook budgets: the whole run, and the shorter one of an event that ends a session (Codex
// cuts its SessionEnd hook to 3 s). The agents' own timeouts, as 'replay install' writes
// them, are 10 s.
const (
	Budget           = 5 * time.Second
	SessionEndBudget = 2 * time.Second
)

// MaxPayload is the most stdin a hook reads.
const MaxPayload = 32 << 20

// LogName is the hooks' error log beside the database (or in this user's private folder of the
// temporary directory: see AppendLog).
const LogName = "tasklog-hook.log"

// StartEnv is set by replay-hook when it runs 'replay hook' after all (no server answered
// it): the time it started, in nanoseconds since 1970, so that the two share one budget.
const StartEnv = "TASKLOG_HOOK_START"

// AgainEnv is set to 1 by replay-hook when it runs 'replay hook' after the server was reached
// but did not answer (it may have recorded the delivery before it died or ran out of time):
// replay hook then prints the hook's delivery again when the log holds it.
const AgainEnv = "TASKLOG_HOOK_AGAIN"

// ServeReserve: budget/ServeReserve is what a hook keeps for opening the database itself when
// the server does not answer in time.
const ServeReserve = 5

// AppendLog appends line to the hook log beside the database db or, when that cannot be
// written, to the one in this user's private folder of the temporary directory (the socket
// folder, wire.PrivateDir, created owner-only and refused unless it is this user's and no one
// else may enter it). The log is created mode 0600 and opened without following a link, and a
// log file of another user is not written: in a shared folder another user could otherwise
// read the errors, or plant a link that makes the hook append to a file of their choosing.
// When neither can be written the line is dropped: a hook never fails for its log.
func AppendLog(db, line string) {
	for _, dir := range []string{filepath.Dir(db), privateDir()} {
		if dir == "" {
			continue
		}
		if appendTo(filepath.Join(dir, LogName), line) == nil {
			return
		}
	}
}

// privateDir is this user's private folder of the temporary directory, made when missing; ""
// when it cannot be made or is not private.
func privateDir() string {
	dir := wire.PrivateDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ""
	}
	if err := wire.CheckDir(dir); err != nil {
		return ""
	}
	return dir
}

// errNotOwn is a log file that belongs to another user, or is not a file.
var errNotOwn = errors.New("the hook log is not a regular file of this user")

// appendTo appends line to the log file p: opened without following a link, created 0600, and
// written only when it is a regular file of this user.
func appendTo(p, line string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err == nil {
		sys, ok := st.Sys().(*syscall.Stat_t)
		if !st.Mode().IsRegular() || (ok && int(sys.Uid) != os.Getuid()) {
			err = errNotOwn
		}
	}
	if err == nil {
		_, err = f.WriteString(line)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
