package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/store/natsstore"
)

// natsSoloConf is one nats-server with JetStream, its writes synced.
const natsSoloConf = `server_name: solo
listen: 127.0.0.1:%d
jetstream {
  store_dir: "solo"
  sync_interval: always
}
`

// TestNATSMachineLosesTheCluster: a machine whose NATS server stops (a real nats-server, ended
// and started again on its port and disk) keeps working: its hooks, through the machine's
// 'replay serve' or opening the store themselves, exit 0 with the neutral reply and spool their
// payloads. Once the server is back every tool call is in the log once, the spooled ones in the
// order the agent made them and stamped with the time they arrived, and verify passes. Through
// 'replay serve' the spool is recorded before the next hook's payload; a hook that opens the
// store itself records its own payload first (its reply is waited for), then the spool.
func TestNATSMachineLosesTheCluster(t *testing.T) {
	for _, tt := range []struct {
		name   string
		direct bool
	}{
		{"serve", false},
		{"direct", true},
	} {
		t.Run(tt.name, func(t *testing.T) { testNATSMachineLosesTheCluster(t, tt.direct) })
	}
}

func testNATSMachineLosesTheCluster(t *testing.T, direct bool) {
	natsBin := natsServerBin()
	if natsBin == "" {
		t.Skip("nats-server is not installed (go install github.com/nats-io/nats-server/v2@v2.15.2)")
	}
	bin := testenv.ReplayBinary(t)
	dir := t.TempDir()
	runtimeDir := filepath.Join(dir, "run")
	t.Setenv("XDG_RUNTIME_DIR", runtimeDir)
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "reader"))
	node := &natsNode{name: "solo", port: closedPort(t), dir: dir, conf: "solo.conf"}
	if err := os.WriteFile(filepath.Join(dir, node.conf), []byte(fmt.Sprintf(natsSoloConf, node.port)), 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	if node.log, err = os.Create(filepath.Join(dir, "solo.log")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.log.Close() })
	node.start(t, natsBin)
	url := fmt.Sprintf("nats://127.0.0.1:%d", node.port)

	m := newMachines(t, machine{name: "laptop-ana", user: "ana", agent: agentlog.ClaudeCode, session: "s-offline", direct: direct})[0]
	t.Cleanup(func() { m.serveStop(bin, url, runtimeDir) })
	read := func(id string) string {
		return fmt.Sprintf(`{"session_id":%q,"cwd":%q,"prompt_id":"p1","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":%q}`,
			m.session, m.ws, filepath.Join(m.ws, "src/api/routes.ts"), id)
	}
	hook := func(what, payload string) {
		t.Helper()
		if r := m.hook(bin, url, runtimeDir, payload); r.code != 0 {
			t.Fatalf("%s: %+v", what, r)
		}
	}
	p := m.payloads("Fix the banner.")
	hook("prompt", p[0])
	if !direct {
		waitServer(t, m.side(url))
	}
	hook("call_1", read("call_1"))

	// The server goes away: the hooks fail open and spool, in order.
	if err := node.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	node.cmd.Wait()
	for _, id := range []string{"call_2", "call_3", "call_4"} {
		r := m.hook(bin, url, runtimeDir, read(id))
		// Claude Code's neutral reply to PreToolUse is no output.
		if r.code != 0 || r.stdout != "" {
			t.Fatalf("%s with the server down: %+v; want exit 0 and the neutral reply", id, r)
		}
	}
	spool := spoolDir(m.side(url))
	if left, _ := filepath.Glob(filepath.Join(spool, "*.json")); len(left) != 3 {
		hlog, _ := os.ReadFile(filepath.Join(filepath.Dir(m.side(url)), hookLogName))
		t.Fatalf("%d payloads spooled with the server down, want 3; the hooks' log:\n%s", len(left), hlog)
	}

	// It comes back on its port and disk: the next hook sends the spool first, then its own.
	node.start(t, natsBin)
	hook("call_5", read("call_5"))
	hook("stop", p[2])
	if left, _ := filepath.Glob(filepath.Join(spool, "*.json")); len(left) != 0 {
		hlog, _ := os.ReadFile(filepath.Join(filepath.Dir(m.side(url)), hookLogName))
		t.Fatalf("%d payloads left in the spool once the server was back; the hooks' log:\n%s", len(left), hlog)
	}

	st, err := natsstore.Open(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var calls []string
	at := map[string]time.Time{}
	stopped := 0
	for ev, err := range st.Events(context.Background(), agentlog.TaskID(m.agent, m.session), 1) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case events.TypeToolCall:
			pl, err := ev.Payload()
			if err != nil {
				t.Fatal(err)
			}
			id := pl.(*events.ToolCall).ID
			calls, at[id] = append(calls, id), ev.Time
		case events.TypeAgentStopped:
			stopped++
		}
	}
	want := []string{"call_1", "call_2", "call_3", "call_4", "call_5"}
	if direct {
		want = []string{"call_1", "call_5", "call_2", "call_3", "call_4"}
	}
	if !slices.Equal(calls, want) || stopped != 1 {
		t.Fatalf("tool calls in the log %q and %d stops; want %q, once each, and one stop", calls, stopped, want)
	}
	for _, pair := range [][2]string{{"call_1", "call_2"}, {"call_2", "call_3"}, {"call_3", "call_4"}, {"call_4", "call_5"}} {
		if !at[pair[0]].Before(at[pair[1]]) {
			t.Errorf("%s recorded at %v, not before %s at %v: a spooled payload keeps the time it arrived",
				pair[0], at[pair[0]], pair[1], at[pair[1]])
		}
	}
	if code, out, errOut := replayHere("verify", "--all", "--store", url); code != exitOK || !okLine.MatchString(out) {
		t.Fatalf("verify: exit %d\n%s%s", code, out, errOut)
	}
}
