package extension

import (
	"strings"
	"testing"
)

// TestSource: each agent's file holds the marker once, and what install writes holds the client
// in its place, with the agent's own name, budget and client name defined before it.
func TestSource(t *testing.T) {
	for _, tc := range []struct{ agent, file, budgetEnv, export string }{
		{"pi", pi, "TASKLOG_PI_BUDGET_MS", "export default function tasklog("},
		{"opencode", opencode, "TASKLOG_OPENCODE_BUDGET_MS", "export const TasklogPlugin = "},
	} {
		if n := strings.Count(tc.file, marker); n != 1 {
			t.Errorf("%s: the marker line appears %d times, want once", tc.agent, n)
		}
		src := Source(tc.agent)
		if strings.Contains(src, marker) || !strings.Contains(src, client) {
			t.Errorf("%s: the client is not in place of the marker", tc.agent)
		}
		defs := strings.Index(src, `const AGENT = "`+tc.agent+`";`)
		budget := strings.Index(src, "process.env."+tc.budgetEnv)
		if defs < 0 || budget < 0 || defs > strings.Index(src, client) || budget > strings.Index(src, client) {
			t.Errorf("%s: AGENT and BUDGET_MS must be defined before the client", tc.agent)
		}
		if !strings.Contains(src, tc.export) {
			t.Errorf("%s: no %q: the agent would load nothing", tc.agent, tc.export)
		}
	}
	if Source("claude-code") != "" {
		t.Error("an agent with command hooks got an extension")
	}
}
