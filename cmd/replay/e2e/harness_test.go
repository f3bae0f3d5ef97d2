package e2e

// The harness proves itself without tasklog: each real agent runs the fake model's script, calls
// a hand-written hook on its tool calls, and carries the hook's text back to the model.

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// handHookMarker is the text the hand-written hook injects.
const handHookMarker = "HARNESS-HOOK-CONTEXT"

// handHookScript logs each payload (one line) to $1 and replies in the dialect named by $2: for
// Claude and Codex an additionalContext on the events that take one, for Cline a
// contextModification, for Copilot CLI a top-level additionalContext.
const handHookScript = `#!/bin/sh
in=$(cat)
printf '%s\n' "$in" | tr -d '\n' >> "$1"
printf '\n' >> "$1"
if [ "$2" = cline ]; then
	printf '{"contextModification":"%s"}\n' "` + handHookMarker + `"
	exit 0
fi
if [ "$2" = copilot-cli ]; then
	printf '{"additionalContext":"%s"}\n' "` + handHookMarker + `"
	exit 0
fi
ev=$(printf '%s' "$in" | sed -n 's/.*"hook_event_name": *"\([A-Za-z]*\)".*/\1/p')
case "$ev" in
SessionStart|UserPromptSubmit|PreToolUse|PostToolUse|BeforeAgent|AfterTool)
	printf '{"hookSpecificOutput":{"hookEventName":"%s","additionalContext":"%s %s"}}\n' "$ev" "` + handHookMarker + `" "$ev" ;;
*)	echo '{}' ;;
esac
`

// TestAgentHarness runs only with TASKLOG_AGENTS_HARNESS=1: it costs as much as the scenario,
// and is what to run when the scenario fails, to tell a harness fault from tasklog's. With
// TASKLOG_AGENTS_PAYLOADS=DIR it keeps each agent's hook payloads in DIR/AGENT.jsonl.
func TestAgentHarness(t *testing.T) {
	if os.Getenv("TASKLOG_AGENTS_HARNESS") != "1" {
		t.Skip("the harness self-test runs with TASKLOG_AGENTS_HARNESS=1")
	}
	for _, d := range allDrivers {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel() // at most -parallel (GOMAXPROCS) agents at once
			a := newAgentRun(t, d)
			a.write(t, e2eRead, "export const routes = ['/users'];\n")
			script := filepath.Join(a.tmp, "hook.sh")
			e2eWriteFile(t, script, handHookScript, 0o755)
			logPath := filepath.Join(a.tmp, "payloads.jsonl")
			dialect := "claude"
			if d.name == "cline" || d.name == "copilot-cli" {
				dialect = d.name
			}
			d.handHook(t, a, e2eQuote(script)+" "+e2eQuote(logPath)+" "+dialect)
			a.run(t, "Add a health check endpoint next to the routes.")

			payloads := readPayloads(t, logPath)
			if dir := os.Getenv("TASKLOG_AGENTS_PAYLOADS"); dir != "" {
				// Keep what the agent sent, to make fixtures from.
				if b, err := os.ReadFile(logPath); err == nil {
					e2eWriteFile(t, filepath.Join(dir, d.name+".jsonl"), string(b), 0o644)
				}
			}
			if len(payloads) == 0 {
				t.Fatalf("the hook never ran\nrequests:\n%s", a.describeRequests())
			}
			reqs := a.model.ModelRequests()
			script1 := d.script(a.ws)
			if got := lastStep(reqs); got != len(script1)-1 {
				t.Fatalf("the agent stopped at step %d of %d\nrequests:\n%s", got, len(script1)-1, a.describeRequests())
			}
			for _, rel := range []string{e2eWrite} {
				b, err := os.ReadFile(filepath.Join(a.ws, rel))
				if err != nil || !strings.Contains(string(b), "healthy") {
					t.Errorf("%s after the write and the edit: %q, %v", rel, b, err)
				}
			}
			after := firstRequestAtStep(reqs, d.readStep+1)
			if after == nil || !strings.Contains(after.Text(), handHookMarker) {
				t.Errorf("the hook's text did not reach the model in the request after the read\nrequests:\n%s", a.describeRequests())
			}
			t.Logf("%d hook payloads, %d model requests", len(payloads), len(reqs))
		})
	}
}

// readPayloads reads the hand hook's log: one JSON payload a line.
func readPayloads(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("hook payload is not JSON: %v: %.200s", err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}
