package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/session/serve"
	"github.com/tasklog/tasklog/store"
)

// hookWorkspace writes the workspace the hook tests run in: a path-scoped Cline rule for
// src/api/**, an always rule of Claude Code's family, an AGENTS.md, a Cursor rule for src/ui/**
// nothing touches, and the files the agents work on.
func hookWorkspace(t *testing.T) (ws, home string) {
	t.Helper()
	dir := t.TempDir()
	ws, home = filepath.Join(dir, "shop"), filepath.Join(dir, "home")
	writeFiles(t, ws, map[string]string{
		".clinerules/api.md":       "---\npaths: [\"src/api/**\"]\n---\nAPI handlers return JSON errors with a code.\n",
		".claude/rules/testing.md": "Every change comes with a test.\n",
		"AGENTS.md":                "Run npm test before you finish.\n",
		".cursor/rules/ui.mdc":     "---\nglobs: src/ui/**\n---\nUI components are function components.\n",
		"src/api/routes.ts":        "export const routes = []\n",
		"input.txt":                "hello from input.txt\n",
	})
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	return ws, home
}

// hookPayload reads a fixture of events/agentlog/testdata/hooks and moves it into ws: the tool
// hooks read src/api/routes.ts where the captured session read input.txt.
func hookPayload(t *testing.T, file, ws string) []byte {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(b), "/home/dev/shop", ws)
	base := filepath.Base(file)
	if strings.Contains(base, "Tool") || strings.Contains(base, "File") || strings.Contains(base, "Shell") {
		s = strings.ReplaceAll(s, "input.txt", "src/api/routes.ts")
	}
	return []byte(s)
}

var digestID = regexp.MustCompile(`"id":"([hsrmeg])[0-9a-f]{24}"`)

// runHook runs 'replay hook' in this process with payload on stdin, with slowBudget unless extra
// sets a budget.
func runHook(t *testing.T, agent, db string, payload []byte, extra ...string) (stdout, stderr string, code int) {
	t.Helper()
	old := hookStdin
	hookStdin = bytes.NewReader(payload)
	defer func() { hookStdin = old }()
	var out, errb bytes.Buffer
	code = run(withBudget(append([]string{"hook", agent, "--db", db}, extra...)), &out, &errb)
	return out.String(), errb.String(), code
}

// TestHookSequences runs every fixture of each agent, in order, through 'replay hook' on one
// database and compares the replies and the resulting logs with testdata/hooks/AGENT.golden:
// what is recorded, which rules each agent is given (never the ones it loads itself), through
// which hook, once, and again after a compaction.
func TestHookSequences(t *testing.T) {
	for _, agent := range agentlog.HookAgents() {
		t.Run(string(agent), func(t *testing.T) {
			ws, _ := hookWorkspace(t)
			db := filepath.Join(t.TempDir(), "tasklog.db")
			files, _ := filepath.Glob(filepath.Join("..", "..", "events", "agentlog", "testdata", "hooks", string(agent), "*.json"))
			if len(files) == 0 {
				t.Fatal("no fixtures")
			}
			var b strings.Builder
			for _, f := range files {
				out, errOut, code := runHook(t, string(agent), db, hookPayload(t, f, ws))
				if code != 0 || errOut != "" {
					t.Fatalf("%s: exit %d, stderr %q", filepath.Base(f), code, errOut)
				}
				b.WriteString("== " + filepath.Base(f) + "\n" + out)
				if out != "" && !strings.HasSuffix(out, "\n") {
					b.WriteString("\n")
				}
			}
			b.WriteString(hookLogs(t, db))
			got := strings.ReplaceAll(b.String(), ws, "/home/dev/shop")
			// Call ids made from a digest of what the call names (Cursor's and old Cline's
			// calls carry none) hash the workspace's path, which differs from run to run.
			got = digestID.ReplaceAllString(got, `"id":"$1<digest>"`)
			checkHookGolden(t, filepath.Join("testdata", "hooks", string(agent)+".golden"), got)
			var verr bytes.Buffer
			if code := run([]string{"verify", "--all", "--db", db}, &bytes.Buffer{}, &verr); code != 0 {
				t.Fatalf("replay verify: exit %d\n%s", code, verr.String())
			}
		})
	}
}

// hookLogs prints every task of db, one line per event: turn, seq, type and the payload
// (a decision's summary, since its payload is long).
func hookLogs(t *testing.T, db string) string {
	t.Helper()
	d, err := store.Open(db, &store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tasks, err := d.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, ti := range tasks {
		b.WriteString("-- log of " + ti.Task.String() + "\n")
		decisions, err := session.Decisions(context.Background(), d, ti.Task)
		if err != nil {
			t.Fatal(err)
		}
		included := map[uint64]string{}
		for _, r := range decisions {
			var names []string
			for _, o := range r.Decision.Included {
				names = append(names, o.Name)
			}
			included[r.Seq] = fmt.Sprintf("turn %d, included %v", r.Decision.Turn, names)
		}
		for ev, err := range d.Events(context.Background(), ti.Task, 1) {
			if err != nil {
				t.Fatal(err)
			}
			data := string(ev.Data)
			switch ev.Type {
			case events.TypeDecision:
				data = included[ev.Seq]
			case events.TypeRulesSnapshot:
				p, err := ev.Payload()
				if err != nil {
					t.Fatal(err)
				}
				data = fmt.Sprintf("%d rule files", len(p.(*events.RulesSnapshot).Files))
			}
			fmt.Fprintf(&b, "%3d %3d %s %s\n", ev.Turn, ev.Seq, ev.Type, data)
		}
	}
	return b.String()
}

func checkHookGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/replay -run %s -update)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs; rerun with -update and review the diff.\ngot:\n%s", golden, got)
	}
}

// TestHookTwice runs Codex's paired payloads (its user and project hooks both fire): the second
// run of each records nothing and replies neutrally, so the model gets the rules once.
func TestHookTwice(t *testing.T) {
	ws, _ := hookWorkspace(t)
	db := filepath.Join(t.TempDir(), "tasklog.db")
	files, _ := filepath.Glob(filepath.Join("..", "..", "events", "agentlog", "testdata", "hooks", "codex", "*.json"))
	delivered := 0
	for _, f := range files {
		p := hookPayload(t, f, ws)
		first, _, _ := runHook(t, "codex", db, p)
		second, _, code := runHook(t, "codex", db, p)
		if code != 0 || second != "" {
			t.Fatalf("%s: the second run replied %q (exit %d), want nothing", filepath.Base(f), second, code)
		}
		if first != "" {
			delivered++
		}
	}
	if delivered == 0 {
		t.Fatal("no hook delivered anything")
	}
	evs := testenv.TaskEvents(t, db)
	seen := map[string]int{}
	for _, ev := range evs {
		seen[ev.ID.String()]++
		if seen[ev.ID.String()] > 1 {
			t.Fatalf("event id %s recorded twice", ev.ID)
		}
	}
	if n := testenv.CountType(evs, events.TypeToolCall); n != 6 {
		t.Errorf("%d tool calls recorded, want 6 (one per call id)", n)
	}
}

// readOnlyDB creates the database at db (a hook can then read it but not write it) and opens
// it read-only.
func readOnlyDB(t *testing.T, db string) store.Store {
	t.Helper()
	w, err := store.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	ro, err := store.Open(db, &store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	return ro
}

// TestHookSpoolDrainKeepsWhatItCannotRecordNow drains a spool holding a file that is no
// spooled payload and a good payload, first on a database it cannot write: the first is moved
// aside, the payload stays for the next hook, which records it.
func TestHookSpoolDrainKeepsWhatItCannotRecordNow(t *testing.T) {
	ws, _ := hookWorkspace(t)
	db := filepath.Join(t.TempDir(), "tasklog.db")
	payload := hookPayload(t, filepath.Join("..", "..", "events", "agentlog", "testdata", "hooks", "claude-code", "05-PostToolUse.json"), ws)
	if err := spool(db, agentlog.ClaudeCode, payload, time.Now()); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(spoolDir(db), "00000000000000000000-1.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	good, _ := filepath.Glob(filepath.Join(spoolDir(db), "*.json"))
	good = slices.DeleteFunc(good, func(p string) bool { return p == bad })
	if len(good) != 1 {
		t.Fatalf("spooled files %v, want one", good)
	}
	ro := readOnlyDB(t, db)
	err := drainSpool(context.Background(), ro, db)
	ro.Close()
	if err == nil {
		t.Fatal("draining into a read-only database reported no error")
	}
	if _, err := os.Stat(bad + ".bad"); err != nil {
		t.Errorf("the unparsable file was not moved aside: %v", err)
	}
	if _, err := os.Stat(good[0]); err != nil {
		t.Fatalf("the payload that could not be recorded now is gone: %v", err)
	}

	w, err := store.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = drainSpool(context.Background(), w, db)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(good[0]); !os.IsNotExist(err) {
		t.Fatalf("the payload was not removed once recorded: %v", err)
	}
	if n := testenv.CountType(testenv.TaskEvents(t, db), events.TypeToolCall); n != 1 {
		t.Fatalf("%d tool calls recorded, want 1", n)
	}
}

// TestHookRecordsItsOwnPayloadFirst runs a hook with an earlier payload in the spool: the
// hook's own call is recorded first, the spooled one after it (with what is left of the
// budget), and the spool is empty.
func TestHookRecordsItsOwnPayloadFirst(t *testing.T) {
	ws, _ := hookWorkspace(t)
	db := filepath.Join(t.TempDir(), "tasklog.db")
	fixtures := filepath.Join("..", "..", "events", "agentlog", "testdata", "hooks", "claude-code")
	if err := spool(db, agentlog.ClaudeCode, hookPayload(t, filepath.Join(fixtures, "05-PostToolUse.json"), ws), time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runHook(t, "claude-code", db, hookPayload(t, filepath.Join(fixtures, "07-PostToolUse.json"), ws)); code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var order []string
	for _, ev := range testenv.TaskEvents(t, db) {
		if ev.Type != events.TypeToolCall {
			continue
		}
		for _, id := range []string{"toolu_fake_2", "toolu_fake_3"} {
			if strings.Contains(string(ev.Data), id) {
				order = append(order, id)
			}
		}
	}
	if want := []string{"toolu_fake_3", "toolu_fake_2"}; !slices.Equal(order, want) {
		t.Errorf("tool calls recorded in the order %v, want %v (the hook's own first)", order, want)
	}
	if left, _ := filepath.Glob(filepath.Join(spoolDir(db), "*")); len(left) != 0 {
		t.Errorf("spool not drained: %v", left)
	}
}

// TestHookSpoolsWhatItCouldNotRecord runs a hook whose budget is over before it records: its
// payload is spooled, not dropped, and the next hook records it.
func TestHookSpoolsWhatItCouldNotRecord(t *testing.T) {
	ws, _ := hookWorkspace(t)
	db := filepath.Join(t.TempDir(), "tasklog.db")
	fixtures := filepath.Join("..", "..", "events", "agentlog", "testdata", "hooks", "claude-code")
	out, errOut, code := runHook(t, "claude-code", db, hookPayload(t, filepath.Join(fixtures, "05-PostToolUse.json"), ws), "--budget", "1ns")
	if code != 0 || !strings.Contains(errOut, "spooled") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want the payload spooled", code, out, errOut)
	}
	if _, errOut, code := runHook(t, "claude-code", db, hookPayload(t, filepath.Join(fixtures, "07-PostToolUse.json"), ws)); code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if n := testenv.CountType(testenv.TaskEvents(t, db), events.TypeToolCall); n != 2 {
		t.Errorf("%d tool calls recorded, want 2 (the spooled one too)", n)
	}
}

// TestHookRecordsDespiteWrongValues: a wrong value of a flag that does not say where to record
// (--budget, --otel-*) is logged with the agent and the event, and the payload is recorded all
// the same, with that flag's default.
func TestHookRecordsDespiteWrongValues(t *testing.T) {
	t.Setenv("TASKLOG_SERVE", "off")
	ws, _ := hookWorkspace(t)
	fixtures := filepath.Join("..", "..", "events", "agentlog", "testdata", "hooks", "claude-code")
	payload := hookPayload(t, filepath.Join(fixtures, "05-PostToolUse.json"), ws)
	for _, tc := range []struct {
		flags []string
		says  string
	}{
		{[]string{"--otel-endpoint", "127.0.0.1:4318"}, `OTLP endpoint "127.0.0.1:4318": give a URL such as http://127.0.0.1:4318; the payload is recorded, and a server this hook starts runs without the --otel-* flags (the OTEL_* variables still apply)`},
		{[]string{"--budget", "soon", "--otel-protocol", "thrift"}, `--budget "soon" is not a positive duration; the payload is recorded within the default budget, ` + hookBudget.String() + `; replay hook: OTLP protocol "thrift"`},
		{[]string{"--otel-protocol", "thrift"}, `OTLP protocol "thrift"`},
		{[]string{"--otel-log-user-prompts=maybe"}, `--otel-log-user-prompts="maybe" is not true or false`},
		{[]string{"--budget", "soon"}, `--budget "soon" is not a positive duration; the payload is recorded within the default budget`},
	} {
		db := filepath.Join(t.TempDir(), "tasklog.db")
		out, errOut, code := runHook(t, "claude-code", db, payload, tc.flags...)
		if code != 0 || !strings.Contains(errOut, "replay hook claude-code PostToolUse: replay hook: "+tc.says) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 0 and %q logged with the agent and the event", tc.flags, code, out, errOut, tc.says)
			continue
		}
		if log, err := os.ReadFile(filepath.Join(filepath.Dir(db), hookLogName)); err != nil || !strings.Contains(string(log), tc.says) {
			t.Errorf("%q: hook log (%v) does not hold %q:\n%s", tc.flags, err, tc.says, log)
		}
		if n := testenv.CountType(testenv.TaskEvents(t, db), events.TypeToolCall); n != 1 {
			t.Errorf("%q: %d tool calls recorded, want 1", tc.flags, n)
		}
	}
}

// fakeServer listens on db's server socket and answers hello, then every hook request with an
// error of code; it returns how many hook requests it answered.
func fakeServer(t *testing.T, db, code string) *atomic.Int64 {
	t.Helper()
	l, err := net.Listen("unix", serve.SocketPath(db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var hooks atomic.Int64
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				sc := bufio.NewScanner(nc)
				sc.Buffer(nil, serve.MaxMessage)
				for sc.Scan() {
					var req serve.Request
					if json.Unmarshal(sc.Bytes(), &req) != nil {
						return
					}
					resp := serve.Response{ID: req.ID, Result: json.RawMessage(`{}`)}
					if req.Op == serve.OpHook {
						hooks.Add(1)
						resp = serve.Response{ID: req.ID, Error: &serve.Error{Code: code, Message: "fake " + code}}
					}
					b, _ := json.Marshal(resp)
					nc.Write(append(b, '\n'))
				}
			}()
		}
	}()
	return &hooks
}

// TestHookServerErrorFallsBack has the server answer the hook with each error code: the codes
// that leave the payload unrecorded send the hook to the database itself, which records it; a
// payload the server refused is not recorded.
func TestHookServerErrorFallsBack(t *testing.T) {
	for _, tc := range []struct {
		code     string
		recorded int
	}{
		{serve.CodeTimeout, 1},
		{serve.CodeInternal, 1},
		{serve.CodeConflict, 1},
		{serve.CodeBusy, 1},
		{"locked", 1},
		{serve.CodeBadRequest, 0},
	} {
		t.Run(tc.code, func(t *testing.T) {
			ws, _ := hookWorkspace(t)
			db := filepath.Join(t.TempDir(), "tasklog.db")
			hooks := fakeServer(t, db, tc.code)
			payload := hookPayload(t, filepath.Join("..", "..", "events", "agentlog", "testdata", "hooks", "claude-code", "05-PostToolUse.json"), ws)
			if _, _, code := runHook(t, "claude-code", db, payload); code != 0 {
				t.Fatalf("exit %d", code)
			}
			if hooks.Load() != 1 {
				t.Fatalf("the server answered %d hook requests, want 1", hooks.Load())
			}
			n := 0
			if _, err := os.Stat(db); err == nil {
				n = testenv.CountType(testenv.TaskEvents(t, db), events.TypeToolCall)
			}
			if n != tc.recorded {
				t.Errorf("%d tool calls recorded, want %d", n, tc.recorded)
			}
		})
	}
}

// TestHookStartsServerOnlyWhenNothingListens runs hooks with a server starter that starts
// nothing: a hook starts a server only when no socket listens (none there, or a stale one), not
// when one answers badly, and after a start that did not come up the hooks of the next minute
// go to the database at once. Every payload is recorded all the same. The hooks' budget of 10 s
// has them wait 4 s for the server that never comes, and leaves the rest of the budget room
// for a slow machine before and after.
func TestHookStartsServerOnlyWhenNothingListens(t *testing.T) {
	for _, tc := range []struct {
		name   string
		setup  func(t *testing.T, db string)
		starts []int // servers started after each of two hooks, in total
	}{
		{"no socket", func(*testing.T, string) {}, []int{1, 1}},
		{"stale socket", func(t *testing.T, db string) {
			l, err := net.ListenUnix("unix", &net.UnixAddr{Name: serve.SocketPath(db), Net: "unix"})
			if err != nil {
				t.Fatal(err)
			}
			l.SetUnlinkOnClose(false)
			l.Close()
		}, []int{1, 1}},
		{"server hangs up", func(t *testing.T, db string) {
			l, err := net.Listen("unix", serve.SocketPath(db))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			go func() {
				for {
					nc, err := l.Accept()
					if err != nil {
						return
					}
					nc.Close()
				}
			}()
		}, []int{0, 0}},
		{"start failed a minute ago", func(t *testing.T, db string) {
			markStartFailed(db)
			ago := time.Now().Add(-2 * serveStartRetry)
			if err := os.Chtimes(startFailedMarker(db), ago, ago); err != nil {
				t.Fatal(err)
			}
		}, []int{1, 1}},
		{"start failed just now", func(_ *testing.T, db string) { markStartFailed(db) }, []int{0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, _ := hookWorkspace(t)
			db := filepath.Join(t.TempDir(), "tasklog.db")
			var started int
			old := serverStarter
			serverStarter = func(string, []string) error { started++; return nil }
			defer func() { serverStarter = old }()
			tc.setup(t, db)
			fixtures := filepath.Join("..", "..", "events", "agentlog", "testdata", "hooks", "claude-code")
			for i, f := range []string{"05-PostToolUse.json", "07-PostToolUse.json"} {
				if _, _, code := runHook(t, "claude-code", db, hookPayload(t, filepath.Join(fixtures, f), ws), "--budget", "10s"); code != 0 {
					t.Fatalf("exit %d", code)
				}
				if started != tc.starts[i] {
					t.Fatalf("after hook %d: %d servers started, want %d", i+1, started, tc.starts[i])
				}
			}
			if n := testenv.CountType(testenv.TaskEvents(t, db), events.TypeToolCall); n != 2 {
				t.Errorf("%d tool calls recorded, want 2", n)
			}
		})
	}
}

// TestHookSpoolGivesUpOnAStuckPayload: a spooled payload that parses but has failed to record
// for over spoolGiveUp is moved aside (NAME.failed), so the payloads behind it are drained.
func TestHookSpoolGivesUpOnAStuckPayload(t *testing.T) {
	ws, _ := hookWorkspace(t)
	db := filepath.Join(t.TempDir(), "tasklog.db")
	payload := hookPayload(t, filepath.Join("..", "..", "events", "agentlog", "testdata", "hooks", "claude-code", "05-PostToolUse.json"), ws)
	if err := spool(db, agentlog.ClaudeCode, payload, time.Now()); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(spoolDir(db), "*.json"))
	if len(files) != 1 {
		t.Fatalf("spooled files %v, want one", files)
	}
	ro := readOnlyDB(t, db)
	defer ro.Close()
	old := time.Now().Add(-spoolGiveUp - time.Minute)
	if err := os.Chtimes(files[0], old, old); err != nil {
		t.Fatal(err)
	}
	if err := drainSpool(context.Background(), ro, db); err == nil {
		t.Error("giving up on a payload reported no error")
	}
	if _, err := os.Stat(files[0] + ".failed"); err != nil {
		t.Errorf("the stuck payload was not moved aside: %v", err)
	}
}
