package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/hookconf"
	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/session/serve"
	"github.com/tasklog/tasklog/store"
)

// silentServer listens on the database's socket as a stopped server does: it takes every
// connection and never answers. It returns how many connections it took.
func silentServer(t *testing.T, db string) *atomic.Int64 {
	t.Helper()
	l, err := net.Listen("unix", serve.SocketPath(db))
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int64
	var mu sync.Mutex
	var open []net.Conn
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range open {
			c.Close()
		}
	})
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			mu.Lock()
			open = append(open, nc)
			mu.Unlock()
		}
	}()
	return &conns
}

// toolPayload is a Claude Code PreToolUse of a Read of src/api/routes.ts in ws, call id id.
func toolPayload(ws, id string) []byte {
	return []byte(fmt.Sprintf(`{"session_id":"s-skip","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":%q}`,
		ws, filepath.Join(ws, "src", "api", "routes.ts"), id))
}

// privateRuntime gives the test a private runtime folder of its own.
func privateRuntime(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", dir)
	return filepath.Join(dir, "tasklog")
}

// TestHookLeavesAServerThatDidNotAnswerAlone: the server takes the connection and never
// answers (a stopped process). The first hook waits for it, then records the payload itself
// (or spools it) and notes it in the private runtime folder; the hooks after it do not connect to the server
// at all: one with the database held by another process spools its payload after a short
// wait instead of waiting out a budget of ten minutes for the lock; the next records it. Every
// tool call is recorded once. replay hook and replay-hook alike.
func TestHookLeavesAServerThatDidNotAnswerAlone(t *testing.T) {
	for _, via := range []string{"replay hook", "replay-hook"} {
		client := ""
		if via == "replay-hook" {
			_, client = testenv.Binaries(t)
		}
		t.Run(via, func(t *testing.T) {
			ws, home := hookWorkspace(t)
			runtime := privateRuntime(t)
			db := filepath.Join(t.TempDir(), "tasklog.db")
			conns := silentServer(t, db)
			t.Setenv("TASKLOG_SERVE", "")
			hook := func(payload []byte, budget string) hookResult {
				if client == "" {
					out, errb, code := runHook(t, "claude-code", db, payload, "--budget", budget)
					return hookResult{stdout: out, stderr: errb, code: code}
				}
				return clientProcess(client, "claude-code", db, payload,
					[]string{"HOME=" + home, "TASKLOG_SERVE=on", "XDG_RUNTIME_DIR=" + filepath.Dir(runtime)}, "--budget", budget)
			}
			// The budget leaves the hook a fifth of it, 2 s, after the server's wait.
			if r := hook(toolPayload(ws, "t1"), "10s"); r.code != 0 {
				t.Fatalf("first hook: %+v", r)
			}
			if n := conns.Load(); n != 1 {
				t.Fatalf("the first hook connected %d times, want 1", n)
			}

			// Another process holds the database: the hook spools, and does not wait for it.
			held, err := store.Open(db, nil)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan hookResult, 1)
			go func() { done <- hook(toolPayload(ws, "t2"), "10m") }()
			select {
			case r := <-done:
				if r.code != 0 {
					t.Fatalf("second hook: %+v", r)
				}
			case <-time.After(2 * time.Minute):
				t.Fatal("the second hook is still waiting (for the server or the database), 2 minutes into a 10 minute budget")
			}
			held.Close()
			if n := conns.Load(); n != 1 {
				t.Fatalf("the server was connected to %d times, want 1: the second hook did not leave it alone", n)
			}
			if !spooledCall(t, filepath.Join(filepath.Dir(db), spoolDirName), "t2") {
				t.Fatal("the second hook's payload is not in the spool")
			}

			if r := hook(toolPayload(ws, "t3"), "1m"); r.code != 0 {
				t.Fatalf("third hook: %+v", r)
			}
			if n := conns.Load(); n != 1 {
				t.Fatalf("the server was connected to %d times, want 1", n)
			}
			checkToolCallsOnce(t, db, 3)
			if !hookconf.ServerUnanswered(db) {
				t.Errorf("no note of the unanswering server in %s", runtime)
			}
		})
	}
}

// spooledCall tells whether a payload of the tool call id is spooled in dir.
func spooledCall(t *testing.T, dir, id string) bool {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(`"tool_use_id":"`+id+`"`)) {
			return true
		}
	}
	return false
}

// smallDisk mounts a file system of size bytes on a new folder and returns it; the test is
// skipped where none can be mounted (it takes root).
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() != 0 {
		t.Skip("mounting a small file system to fill takes root")
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small file system to fill: %v %s", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fill writes file until the disk it is on refuses.
func fill(t *testing.T, file string) {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			return
		}
	}
}

// TestHookFullDiskSpoolsPrivately: the database's disk is full. Every hook's payload the
// database cannot take is spooled in the private runtime folder, none is lost, and once the
// disk has room again the next hook records them all, each once.
func TestHookFullDiskSpoolsPrivately(t *testing.T) {
	disk := smallDisk(t, 4<<20)
	ws, _ := hookWorkspace(t)
	runtime := privateRuntime(t)
	t.Setenv("TASKLOG_SERVE", "off")
	db := filepath.Join(disk, "tasklog.db")
	if _, _, code := runHook(t, "claude-code", db, toolPayload(ws, "t0")); code != 0 {
		t.Fatalf("first hook: exit %d", code)
	}
	filler := filepath.Join(disk, "filler")
	fill(t, filler)
	const n = 7
	for i := 1; i <= n; i++ {
		if _, _, code := runHook(t, "claude-code", db, toolPayload(ws, fmt.Sprintf("t%d", i))); code != 0 {
			t.Fatalf("hook %d: exit %d", i, code)
		}
	}
	private, _ := filepath.Glob(filepath.Join(runtime, spoolDirName+"-*", "*.json"))
	t.Logf("%d of %d payloads spooled in the private runtime folder", len(private), n)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if _, _, code := runHook(t, "claude-code", db, toolPayload(ws, "t8"), "--budget", "1m"); code != 0 {
		t.Fatalf("last hook: exit %d", code)
	}
	checkToolCallsOnce(t, db, n+2)
	if len(private) == 0 {
		t.Error("no payload spooled in the private runtime folder: the disk took them all, nothing was tested")
	}
	if left, _ := filepath.Glob(filepath.Join(runtime, spoolDirName+"-*", "*.json")); len(left) != 0 {
		t.Errorf("%d payloads left in the private spool", len(left))
	}
}
