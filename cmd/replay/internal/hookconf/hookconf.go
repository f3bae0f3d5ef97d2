// Package hookconf is what 'replay hook' and the small hook program replay-hook must agree on:
// the budgets, the payload limit, the hook log and how it is written, and the variable that
// hands the budget's start from one to the other. It links nothing but a few standard packages,
// as replay-hook must start fast.
package hookconf

import (
	"os"
	"path/filepath"
	"time"
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

// LogName is the hooks' error log beside the database.
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

// AppendLog appends line to the hook log beside the database db, or to the temporary
// folder's when that cannot be written.
func AppendLog(db, line string) {
	for _, dir := range []string{filepath.Dir(db), os.TempDir()} {
		f, err := os.OpenFile(filepath.Join(dir, LogName), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			continue
		}
		_, werr := f.WriteString(line)
		if f.Close() == nil && werr == nil {
			return
		}
	}
}
