package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/store/location"
)

// machine is one machine of a test that writes into one NATS store from several: its own home,
// data folder, hostname label and user, and the agent its sessions run.
type machine struct {
	name, user string
	agent      agentlog.Agent
	session    string
	ws, home   string
	data       string
	// direct: the hooks open the store themselves, no 'replay serve'.
	direct bool
}

// env is the machine's environment for a replay process: its home, data folder and labels,
// with 'replay serve' started by its first hook unless direct.
func (m *machine) env(runtimeDir string) []string {
	serve := "on"
	if m.direct {
		serve = "off"
	}
	return []string{"HOME=" + m.home, "XDG_DATA_HOME=" + m.data, "XDG_RUNTIME_DIR=" + runtimeDir,
		"TASKLOG_MACHINE=" + m.name, "TASKLOG_USER=" + m.user, "TASKLOG_SERVE=" + serve, "TASKLOG_SERVE_IDLE=30s",
		location.Env + "="}
}

// side is the local file of the machine's store at url (its hook log, spool and server socket
// are beside it).
func (m *machine) side(url string) string {
	return filepath.Join(location.SideDir(m.data, url), "tasklog")
}

// hook runs 'replay hook AGENT --store url' as a process of the machine.
func (m *machine) hook(bin, url, runtimeDir string, payload string) hookResult {
	cmd := exec.Command(bin, withBudget([]string{"hook", string(m.agent), "--store", url})...)
	cmd.Stdin = strings.NewReader(payload)
	cmd.Env = append(os.Environ(), m.env(runtimeDir)...)
	return runHookCommand(cmd)
}

// serveStop stops the machine's 'replay serve' of the store at url, if one runs.
func (m *machine) serveStop(bin, url, runtimeDir string) {
	cmd := exec.Command(bin, "serve", "--stop", "--store", url)
	cmd.Env = append(os.Environ(), m.env(runtimeDir)...)
	cmd.Run()
}

// newMachines makes the machines' folders: a workspace with rule files and a home each.
func newMachines(t *testing.T, specs ...machine) []*machine {
	t.Helper()
	var ms []*machine
	for _, s := range specs {
		m := s
		dir := filepath.Join(t.TempDir(), m.name)
		m.ws, m.home, m.data = filepath.Join(dir, "shop"), filepath.Join(dir, "home"), filepath.Join(dir, "data")
		writeFiles(t, m.ws, map[string]string{
			".clinerules/api.md": "---\npaths: [\"src/api/**\"]\n---\nAPI handlers return JSON errors with a code.\n",
			"AGENTS.md":          "Run npm test before you finish.\n",
			"src/api/routes.ts":  "export const routes = []\n",
		})
		if err := os.MkdirAll(m.home, 0o755); err != nil {
			t.Fatal(err)
		}
		ms = append(ms, &m)
	}
	return ms
}

// payloads are one turn of the machine's agent: a prompt, a read of src/api/routes.ts, the stop.
func (m *machine) payloads(prompt string) []string {
	return []string{
		fmt.Sprintf(`{"session_id":%q,"cwd":%q,"prompt_id":"p1","hook_event_name":"UserPromptSubmit","prompt":%q}`, m.session, m.ws, prompt),
		fmt.Sprintf(`{"session_id":%q,"cwd":%q,"prompt_id":"p1","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":"call_1"}`,
			m.session, m.ws, filepath.Join(m.ws, "src/api/routes.ts")),
		fmt.Sprintf(`{"session_id":%q,"cwd":%q,"prompt_id":"p1","hook_event_name":"Stop","stop_hook_active":false}`, m.session, m.ws),
	}
}

// TestNATSManyMachines: three machines (each its own HOME, data folder, hostname label, user and
// 'replay serve', started by its first hook) write through their agents' hooks into one NATS
// store. 'replay tasks --store' lists the three tasks with their machine, user and agent and
// filters by each; audit, explain, report and verify answer for every task from a fourth place.
func TestNATSManyMachines(t *testing.T) {
	bin := testenv.ReplayBinary(t)
	dir := t.TempDir()
	url := natsServer(t, filepath.Join(dir, "nats"), 0).ClientURL()
	runtimeDir := filepath.Join(dir, "run")
	t.Setenv("XDG_RUNTIME_DIR", runtimeDir)
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "reader"))
	ms := newMachines(t,
		machine{name: "laptop-ana", user: "ana", agent: agentlog.ClaudeCode, session: "s-ana-1"},
		machine{name: "build-7", user: "bo", agent: agentlog.ClaudeCode, session: "s-bo-1"},
		machine{name: "build-7", user: "ana", agent: agentlog.Codex, session: "s-ana-2"},
	)
	// Two users on build-7: each has its own home and data folder, so its own server.
	for _, m := range ms {
		t.Cleanup(func() { m.serveStop(bin, url, runtimeDir) })
	}
	prompts := []string{"Fix the banner.", "Add a health endpoint.", "Write the changelog."}
	for i, m := range ms {
		for j, p := range m.payloads(prompts[i]) {
			r := m.hook(bin, url, runtimeDir, p)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("%s hook %d: %+v", m.name, j, r)
			}
			if j == 0 {
				// The first hook started the machine's server; the others go through it.
				waitServer(t, m.side(url))
			}
		}
		if hlog, err := os.ReadFile(filepath.Join(filepath.Dir(m.side(url)), hookLogName)); err == nil && len(hlog) > 0 {
			t.Errorf("%s: the hooks logged:\n%s", m.name, hlog)
		}
	}

	code, out, errOut := replayHere("tasks", "--store", url, "--all")
	if code != exitOK {
		t.Fatalf("tasks: exit %d\n%s", code, errOut)
	}
	t.Logf("replay tasks --store %s --all:\n%s", url, out)
	for i, m := range ms {
		task := agentlog.TaskID(m.agent, m.session).String()
		want := fmt.Sprintf(" %-16s  %-16s  %-12s  %s", m.agent, m.name, m.user, prompts[i])
		if !strings.Contains(out, task) || !strings.Contains(out, want+"\n") {
			t.Errorf("tasks does not list %s as %q:\n%s", task, want, out)
		}
	}
	filters := []struct {
		args []string
		want []int // indexes of ms
	}{
		{[]string{"--machine", "build-7"}, []int{1, 2}},
		{[]string{"--machine", "laptop-ana"}, []int{0}},
		{[]string{"--user", "ana"}, []int{0, 2}},
		{[]string{"--agent", "codex"}, []int{2}},
		{[]string{"--agent", "claude-code", "--machine", "build-7"}, []int{1}},
		{[]string{"--user", "nobody"}, nil},
	}
	for _, f := range filters {
		code, out, errOut := replayHere(append([]string{"tasks", "--json", "--store", url}, f.args...)...)
		if code != exitOK {
			t.Fatalf("tasks %v: exit %d\n%s", f.args, code, errOut)
		}
		var rows []struct{ Task, Machine, User, Agent string }
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatalf("tasks %v --json: %v\n%s", f.args, err, out)
		}
		var got, want []string
		for _, r := range rows {
			got = append(got, r.Task+" "+r.Machine+" "+r.User+" "+r.Agent)
		}
		for _, i := range f.want {
			m := ms[i]
			want = append(want, agentlog.TaskID(m.agent, m.session).String()+" "+m.name+" "+m.user+" "+string(m.agent))
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("tasks %v: %q, want %q", f.args, got, want)
		}
	}

	for _, m := range ms {
		task := agentlog.TaskID(m.agent, m.session).String()
		if code, out, errOut := replayHere("verify", task, "--store", url); code != exitOK || !okLine.MatchString(out) {
			t.Errorf("verify %s: exit %d\n%s%s", task, code, out, errOut)
		}
		if code, out, errOut := replayHere("explain", task, "--turn", "1", "--store", url); code != exitOK || !strings.Contains(out, "AGENTS.md") {
			t.Errorf("explain %s --turn 1: exit %d\n%s%s", task, code, out, errOut)
		}
		// audit exits 1 when it has findings; either way it answers for the task.
		if code, out, errOut := replayHere("audit", task, "--json", "--store", url); code > exitFailed || errOut != "" || !strings.Contains(out, task) {
			t.Errorf("audit %s: exit %d\n%s%s", task, code, out, errOut)
		}
		page := filepath.Join(dir, m.session+".html")
		if code, _, errOut := replayHere("report", task, "-o", page, "--store", url); code > exitFailed {
			t.Errorf("report %s: exit %d\n%s", task, code, errOut)
		} else if b, err := os.ReadFile(page); err != nil || !bytes.Contains(b, []byte(task)) {
			t.Errorf("report %s: the page does not name the task (%v)", task, err)
		}
	}
}
