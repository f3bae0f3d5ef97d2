package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/events"
)

// slowBudget is the budget the tests give a hook unless they pass their own --budget: what they
// check (the server reached or started, the payload recorded rather than spooled, the rule
// delivered) must not depend on how fast the machine is, and a minute leaves room for one many
// times slower than the one the usual 5 s are meant for. The tests of a hook whose budget runs
// out pass a short one.
const slowBudget = time.Minute

// hangLimit is how much longer than its budget or timeout a command (a hook process) may take
// before a test calls it a hang: its start and exit on a machine many times slower than usual.
const hangLimit = 30 * time.Second

// withBudget is a hook's arguments with --budget slowBudget added, unless they set a budget.
func withBudget(args []string) []string {
	for _, a := range args {
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && name == "budget" {
			return args
		}
	}
	return append(args, "--budget", slowBudget.String())
}

// writeFiles writes each file (a path relative to dir, slash-separated) with its content.
func writeFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// checkToolCallsOnce fails t unless the task in db holds want distinct tool calls, each
// recorded exactly once.
func checkToolCallsOnce(t *testing.T, db string, want int) {
	t.Helper()
	calls := map[string]int{}
	for _, ev := range testenv.TaskEvents(t, db) {
		if ev.Type != events.TypeToolCall {
			continue
		}
		p, err := ev.Payload()
		if err != nil {
			t.Fatal(err)
		}
		calls[p.(*events.ToolCall).ID]++
	}
	if len(calls) != want {
		t.Errorf("%d distinct tool calls recorded, want %d", len(calls), want)
	}
	for id, n := range calls {
		if n != 1 {
			t.Errorf("tool call %s recorded %d times", id, n)
		}
	}
}

// hooksThroughKilledServer runs two rounds of 32 hooks at once (run, named name in failures)
// on session of the workspace ws, whose server (pid first) answers db; in the second round the
// server is killed (SIGKILL) while they run. Every hook exits 0 within its budget (run gives
// them slowBudget), the killed server no longer answers, and the scoped rule reaches the model
// once in all.
func hooksThroughKilledServer(t *testing.T, db, ws, session string, first int, name string, run func(payload []byte) hookResult) {
	t.Helper()
	delivered := 0
	for round, kill := range []bool{false, true} {
		var wg sync.WaitGroup
		results := make([]hookResult, 32)
		for i := range results {
			// Each tool call's hook runs twice (two settings scopes).
			id := fmt.Sprintf("toolu_%d_%02d", round, i/2)
			payload := fmt.Sprintf(`{"session_id":%q,"cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":%q}`,
				session, ws, filepath.Join(ws, "src/api/routes.ts"), id)
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = run([]byte(payload))
			}()
			if kill && i == 8 {
				if pid := serverPID(db); pid != 0 {
					syscall.Kill(pid, syscall.SIGKILL)
				} else {
					t.Error("no server to kill")
				}
			}
		}
		wg.Wait()
		for i, r := range results {
			if r.code != 0 || r.took > slowBudget+hangLimit {
				t.Errorf("round %d %s %d: exit %d after %v, stderr %q", round, name, i, r.code, r.took, r.stderr)
			}
			delivered += strings.Count(r.stdout, "API handlers return JSON errors")
		}
	}
	if pid := serverPID(db); pid == first {
		t.Errorf("the killed server (pid %d) still answers", first)
	}
	if delivered != 1 {
		t.Errorf("the scoped rule reached the model %d times, want once", delivered)
	}
}
