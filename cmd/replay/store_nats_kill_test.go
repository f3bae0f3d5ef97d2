package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store/location"
	"github.com/tasklog/tasklog/store/natsstore"
)

// TestNATSServe32HooksKilled is TestServe32HooksKilled on a NATS store: 32 hook processes at
// once go through the 'replay serve --store' server the first hook started; in the second round
// the server is killed (SIGKILL) while they run. Every hook exits 0, the scoped rule reaches
// the model once, and once the next hook has recorded what the others spooled, every tool call
// is in the stream exactly once and verify passes.
func TestNATSServe32HooksKilled(t *testing.T) {
	bin := testenv.ReplayBinary(t)
	ws, home := hookWorkspace(t)
	dir := t.TempDir()
	url := natsServer(t, filepath.Join(dir, "nats"), 0).ClientURL()
	data := filepath.Join(dir, "data")
	t.Setenv("XDG_DATA_HOME", data)
	side := natsLoc(url).SideFile()
	env := []string{"HOME=" + home, "XDG_DATA_HOME=" + data, "XDG_RUNTIME_DIR=" + t.TempDir(), "TASKLOG_SERVE=on", "TASKLOG_SERVE_IDLE=30s", location.Env + "="}
	t.Cleanup(func() { exec.Command(bin, "serve", "--stop", "--store", url).Run() })
	start := `{"session_id":"s-kill","cwd":"` + ws + `","hook_event_name":"SessionStart","source":"startup"}`
	if r := natsHookProcess(bin, url, []byte(start), env); r.code != 0 {
		t.Fatalf("SessionStart: %+v", r)
	}
	first := waitServer(t, side)
	hooksThroughKilledServer(t, side, ws, "s-kill", first, "hook", func(payload []byte) hookResult {
		return natsHookProcess(bin, url, payload, env)
	})
	checkNATSCallsOnce(t, bin, url, ws, "s-kill", side, env)
}

// checkNATSCallsOnce stops the server of the NATS store url, runs one more hook of session
// (Stop, opening the store itself) to record what the others spooled, and checks that the
// spool is empty, the stream holds one task with each of the 32 tool calls once, and that it
// verifies. side is the store's side file, env the hooks' environment.
func checkNATSCallsOnce(t *testing.T, bin, url, ws, session, side string, env []string) {
	t.Helper()
	exec.Command(bin, "serve", "--stop", "--store", url).Run()
	// A hook that failed open (lost a race for the stream's head, found no server) spooled its
	// payload for the next one.
	// That next hook may itself fail open while the cluster settles after the kill (on a busy
	// machine, its reads can outlast its budget): it spools its own payload too, and the hook
	// after it records them all. Hooks follow until the spool is empty, for two minutes at most.
	stop := `{"session_id":"` + session + `","cwd":"` + ws + `","hook_event_name":"Stop","prompt_id":"p1"}`
	for deadline := time.Now().Add(2 * time.Minute); ; {
		if r := natsHookProcess(bin, url, []byte(stop), append(env, "TASKLOG_SERVE=off")); r.code != 0 {
			t.Fatalf("Stop: %+v", r)
		}
		left, _ := filepath.Glob(filepath.Join(spoolDir(side), "*.json"))
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			hlog, _ := os.ReadFile(filepath.Join(filepath.Dir(side), hookLogName))
			t.Fatalf("%d payloads left in the spool after two minutes of hooks; the hooks' log:\n%s", len(left), hlog)
		}
	}
	st, err := natsstore.Open(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tasks, err := st.Tasks()
	if err != nil || len(tasks) != 1 {
		t.Fatalf("tasks in the stream: %v, %v; want one", tasks, err)
	}
	calls := map[string]int{}
	for ev, err := range st.Events(context.Background(), tasks[0].Task, 1) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != events.TypeToolCall {
			continue
		}
		p, err := ev.Payload()
		if err != nil {
			t.Fatal(err)
		}
		calls[p.(*events.ToolCall).ID]++
	}
	if len(calls) != 32 {
		hlog, _ := os.ReadFile(filepath.Join(filepath.Dir(side), hookLogName))
		slog, _ := os.ReadFile(filepath.Join(filepath.Dir(side), serveLogName))
		t.Errorf("%d distinct tool calls recorded, want 32; the hooks' log:\n%s\nthe servers' log:\n%s", len(calls), hlog, slog)
	}
	for id, n := range calls {
		if n != 1 {
			t.Errorf("tool call %s recorded %d times", id, n)
		}
	}
	if out, err := exec.Command(bin, "verify", "--store", url).CombinedOutput(); err != nil {
		t.Fatalf("verify: %v\n%s", err, out)
	}
}
