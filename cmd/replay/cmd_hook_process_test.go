package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

type hookResult struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// hookProcess runs 'replay hook AGENT --db DB' with the payload on stdin and the environment
// added to this process's (the last value of a variable wins), with slowBudget unless extra
// sets a budget.
func hookProcess(bin, agent, db string, payload []byte, env []string, extra ...string) hookResult {
	cmd := exec.Command(bin, withBudget(append([]string{"hook", agent, "--db", db}, extra...))...)
	cmd.Stdin = bytes.NewReader(payload)
	// These tests are of the hook opening the database itself: no resident server.
	cmd.Env = append(append(os.Environ(), "TASKLOG_SERVE=off"), env...)
	return runHookCommand(cmd)
}

// runHookCommand runs cmd and collects what a hook process did: its output, its exit code (-1
// with the error for one that did not run) and how long it took.
func runHookCommand(cmd *exec.Cmd) hookResult {
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := hookResult{stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		r.code, r.stderr = -1, err.Error()
	}
	return r
}

// TestHook32Processes starts 32 hook processes at once on one task: 16 tool calls, each hook
// run twice (two settings scopes). Every call is recorded exactly once, every process exits 0
// within its budget, and the scoped rule reaches the model once.
func TestHook32Processes(t *testing.T) {
	bin := testenv.ReplayBinary(t)
	ws, home := hookWorkspace(t)
	db := filepath.Join(t.TempDir(), "tasklog.db")
	env := []string{"HOME=" + home}
	start := `{"session_id":"s-32","cwd":"` + ws + `","hook_event_name":"SessionStart","source":"startup"}`
	if r := hookProcess(bin, "claude-code", db, []byte(start), env); r.code != 0 {
		t.Fatalf("SessionStart: %+v", r)
	}
	var wg sync.WaitGroup
	results := make([]hookResult, 32)
	for i := range results {
		payload := fmt.Sprintf(`{"session_id":"s-32","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":"toolu_%02d"}`,
			ws, filepath.Join(ws, "src/api/routes.ts"), i/2)
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = hookProcess(bin, "claude-code", db, []byte(payload), env)
		}()
	}
	wg.Wait()
	delivered := 0
	for i, r := range results {
		if r.code != 0 || r.took > slowBudget+hangLimit {
			t.Errorf("hook %d: exit %d after %v, stderr %q", i, r.code, r.took, r.stderr)
		}
		delivered += strings.Count(r.stdout, "API handlers return JSON errors")
	}
	if delivered != 1 {
		t.Errorf("the scoped rule reached the model %d times, want once", delivered)
	}
	checkToolCallsOnce(t, db, 16)
	if log, err := os.ReadFile(filepath.Join(filepath.Dir(db), hookLogName)); err == nil {
		t.Errorf("the hooks logged errors:\n%s", log)
	}
}

// TestHookBadInput: whatever goes wrong, the hook replies neutrally, exits 0, logs the error
// beside the database, and leaves the database as it was.
func TestHookBadInput(t *testing.T) {
	bin := testenv.ReplayBinary(t)
	ws, home := hookWorkspace(t)
	env := []string{"HOME=" + home}
	pre := []byte(`{"session_id":"s-bad","cwd":"` + ws + `","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"` + ws + `/src/api/routes.ts"},"tool_use_id":"toolu_1"}`)
	for _, tc := range []struct {
		name, agent, payload, reply, logged string
	}{
		{"garbage", "claude-code", "this is not json {", "", "not a hook payload"},
		{"garbage for cline", "cline", "\x00\x01\x02", `{"cancel":false}` + "\n", "not a hook payload"},
		{"unknown dialect", "vim", string(pre), "", "unknown agent"},
		{"no session", "codex", `{"hook_event_name":"Stop","cwd":"/x"}`, "", "no session id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "tasklog.db")
			r := hookProcess(bin, tc.agent, db, []byte(tc.payload), env)
			if r.code != 0 || r.stdout != tc.reply {
				t.Fatalf("exit %d, reply %q; want 0, %q", r.code, r.stdout, tc.reply)
			}
			log, err := os.ReadFile(filepath.Join(filepath.Dir(db), hookLogName))
			if err != nil || !strings.Contains(string(log), tc.logged) {
				t.Fatalf("error log %q (%v), want it to say %q", log, err, tc.logged)
			}
			if _, err := os.Stat(db); err == nil {
				t.Fatal("a database was created for a payload that was not recorded")
			}
		})
	}

	t.Run("unknown session", func(t *testing.T) {
		// A PostToolUse of a session tasklog never saw starts its task: nothing is lost.
		db := filepath.Join(t.TempDir(), "tasklog.db")
		post := strings.Replace(string(pre), "PreToolUse", "PostToolUse", 1)
		post = strings.Replace(post, `"tool_use_id"`, `"tool_response":{"type":"text"},"tool_use_id"`, 1)
		r := hookProcess(bin, "claude-code", db, []byte(post), env)
		if r.code != 0 || !strings.Contains(r.stdout, "additionalContext") {
			t.Fatalf("exit %d, reply %q", r.code, r.stdout)
		}
		if n := testenv.CountType(testenv.TaskEvents(t, db), events.TypeToolCall); n != 1 {
			t.Fatalf("%d tool calls, want 1", n)
		}
	})

	t.Run("database held by a hung process", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "tasklog.db")
		held, err := store.Open(db, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := hookProcess(bin, "claude-code", db, pre, env, "--budget", "1s")
		if r.code != 0 || r.stdout != "" || r.took > time.Second+hangLimit {
			t.Fatalf("exit %d after %v, reply %q", r.code, r.took, r.stdout)
		}
		log, _ := os.ReadFile(filepath.Join(filepath.Dir(db), hookLogName))
		if !strings.Contains(string(log), "spooled") {
			t.Fatalf("error log %q, want the payload spooled", log)
		}
		if err := held.Close(); err != nil {
			t.Fatal(err)
		}
		// The next hook records the spooled call, then its own.
		stop := []byte(`{"session_id":"s-bad","cwd":"` + ws + `","hook_event_name":"Stop","prompt_id":"p1"}`)
		if r := hookProcess(bin, "claude-code", db, stop, env); r.code != 0 {
			t.Fatalf("next hook: %+v", r)
		}
		evs := testenv.TaskEvents(t, db)
		if testenv.CountType(evs, events.TypeToolCall) != 1 || testenv.CountType(evs, events.TypeAgentStopped) != 1 {
			t.Fatalf("after draining: %d events %v", len(evs), evs)
		}
		left, _ := filepath.Glob(filepath.Join(spoolDir(db), "*"))
		if len(left) != 0 {
			t.Fatalf("spool not drained: %v", left)
		}
	})

	t.Run("read-only database folder", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "ro")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		db := filepath.Join(dir, "tasklog.db")
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(dir, 0o755)
		cmd := exec.Command(bin, "hook", "claude-code", "--db", db)
		cmd.Stdin = bytes.NewReader(pre)
		tmp := t.TempDir()
		cmd.Env = append(os.Environ(), "HOME="+home, "TMPDIR="+tmp, "TASKLOG_SERVE=off")
		if os.Geteuid() == 0 {
			// root writes anywhere: run the hook as nobody, who must reach the binary.
			for _, leaf := range []string{tmp, bin} {
				for p := filepath.Dir(leaf); p != "/"; p = filepath.Dir(p) {
					os.Chmod(p, 0o755)
				}
			}
			os.Chmod(tmp, 0o777)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("exit: %v, stderr %q", err, errb.String())
		}
		if out.String() != "" {
			t.Fatalf("reply %q, want none", out.String())
		}
		if _, err := os.Stat(db); err == nil {
			t.Fatal("a database was written in a read-only folder")
		}
		// The log goes to the hook's user's private folder of the temporary folder, owner-only,
		// never to a fixed name in the shared one.
		uid := os.Getuid()
		if cmd.SysProcAttr != nil {
			uid = 65534
		}
		private := filepath.Join(tmp, "tasklog-"+strconv.Itoa(uid), hookLogName)
		log, err := os.ReadFile(private)
		if err != nil || !strings.Contains(string(log), "tasklog.db") {
			t.Fatalf("error log in the private folder of the temporary folder: %q, %v", log, err)
		}
		if st, err := os.Stat(private); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("private log: %v, %v; want mode 0600", st.Mode(), err)
		}
		if st, err := os.Stat(filepath.Dir(private)); err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("private folder: %v, %v; want mode 0700", st.Mode(), err)
		}
		if _, err := os.Lstat(filepath.Join(tmp, hookLogName)); err == nil {
			t.Errorf("%s written in the shared temporary folder", hookLogName)
		}
	})
}
