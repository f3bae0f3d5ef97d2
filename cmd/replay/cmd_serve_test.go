package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/session/serve"
)

// serverPID asks the database's server for its pid; 0 when none answers.
func serverPID(db string) int { return serverPIDAt(serve.SocketPath(db)) }

// serverPIDAt asks the server on sock for its pid; 0 when none answers (within 10 s, for a
// server that accepts and is slow to answer on a busy machine).
func serverPIDAt(sock string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := serve.Dial(ctx, sock, "test")
	if err != nil {
		return 0
	}
	defer c.Close()
	return c.Server.PID
}

// TestServe32HooksKilled: 32 hook processes at once on one task go through the server the first
// hook started; in the second round the server is killed (SIGKILL) while they run. Every hook
// exits 0 within its budget, every tool call is recorded exactly once, the scoped rule reaches
// the model once, and verify passes.
func TestServe32HooksKilled(t *testing.T) {
	bin := testenv.ReplayBinary(t)
	ws, home := hookWorkspace(t)
	db := filepath.Join(t.TempDir(), "tasklog.db")
	// hookProcess turns the server off; the last value of a variable wins.
	env := []string{"HOME=" + home, "TASKLOG_SERVE=on", "TASKLOG_SERVE_IDLE=30s"}
	t.Cleanup(func() { exec.Command(bin, "serve", "--stop", "--db", db).Run() })
	start := `{"session_id":"s-kill","cwd":"` + ws + `","hook_event_name":"SessionStart","source":"startup"}`
	if r := hookProcess(bin, "claude-code", db, []byte(start), env); r.code != 0 {
		t.Fatalf("SessionStart: %+v", r)
	}
	// On a loaded machine the server may listen only after the hook gave up waiting for it.
	first := waitServer(t, db)
	hooksThroughKilledServer(t, db, ws, "s-kill", first, "hook", func(payload []byte) hookResult {
		return hookProcess(bin, "claude-code", db, payload, env)
	})
	exec.Command(bin, "serve", "--stop", "--db", db).Run()
	checkToolCallsOnce(t, db, 32)
	out, err := exec.Command(bin, "verify", "--db", db).CombinedOutput()
	if err != nil {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	if log, err := os.ReadFile(filepath.Join(filepath.Dir(db), hookLogName)); err == nil {
		t.Logf("hook log (errors the hooks met and answered neutrally):\n%s", log)
	}
}

// BenchmarkServeHookRoundTrip is BenchmarkHookRoundTrip's hook (process start, PreToolUse on a
// task of 10,000 events, record, decide, deliver, reply) three ways: through a running server
// whose database is open (hooks back to back), through one that let go of the database after
// its hold period (a pause between hooks; the pause is not timed), and without a server
// (TASKLOG_SERVE=off: the hook opens the database itself).
func BenchmarkServeHookRoundTrip(b *testing.B) {
	bin := testenv.ReplayBinary(b)
	for _, mode := range []string{"warm", "cold", "direct"} {
		b.Run(mode, func(b *testing.B) {
			dir := b.TempDir()
			ws := filepath.Join(dir, "shop")
			writeFiles(b, ws, map[string]string{
				".clinerules/api.md": "---\npaths: [\"src/api/**\"]\n---\nAPI handlers return JSON errors with a code.\n",
				"AGENTS.md":          "Run npm test before you finish.\n",
				"src/api/routes.ts":  "export const routes = []\n",
			})
			db := filepath.Join(dir, "tasklog.db")
			const sid = "bench-session"
			seedHookTask(b, db, ws, sid, 10000)
			env := []string{"HOME=" + dir, "TASKLOG_SERVE=on", "TASKLOG_SERVE_IDLE=1m"}
			if mode == "direct" {
				env = append(env, "TASKLOG_SERVE=off")
			}
			defer exec.Command(bin, "serve", "--stop", "--db", db).Run()
			hook := func(i int) hookResult {
				r := hookProcess(bin, "claude-code", db, benchReadPayload(sid, ws, i), env)
				if r.code != 0 || r.stderr != "" {
					b.Fatalf("hook: %+v", r)
				}
				return r
			}
			hook(-1) // starts the server
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				if mode == "cold" {
					b.StopTimer()
					time.Sleep(serve.DefaultHold + 100*time.Millisecond)
					b.StartTimer()
				}
				times = append(times, hook(i).took)
			}
			b.StopTimer()
			reportPercentiles(b, times)
		})
	}
}

// reportPercentiles reports the median and the 99th percentile of times as p50-ms and p99-ms.
func reportPercentiles(b *testing.B, times []time.Duration) { reportNamedPercentiles(b, "", times) }

// A server whose environment sets no GOGC runs its garbage collector at serveGCPercent, one
// given GOGC keeps that setting, and its log says which.
func TestServeCollectorSetting(t *testing.T) {
	bin := testenv.ReplayBinary(t)
	for _, c := range []struct {
		name, gogc, want string
	}{
		{"unset", "", "garbage collector: GOGC=400, the server's default (set GOGC to choose another)"},
		{"set", "150", "garbage collector: GOGC=150, from the environment"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			db, logPath := filepath.Join(dir, "tasklog.db"), filepath.Join(dir, "serve.log")
			cmd := exec.Command(bin, "serve", "--db", db, "--idle", "1m", "--log", logPath)
			cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
			if c.gogc != "" {
				cmd.Env = append(cmd.Env, "GOGC="+c.gogc)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				exec.Command(bin, "serve", "--stop", "--db", db).Run()
				cmd.Wait()
			})
			cl, err := testenv.DialWhenUp(serve.SocketPath(db))
			if err != nil {
				t.Fatalf("the server does not answer: %v", err)
			}
			cl.Close()
			log, err := os.ReadFile(logPath)
			if err != nil || !strings.Contains(string(log), c.want) {
				t.Errorf("the server's log (%v):\n%s\nwant the line %q", err, log, c.want)
			}
		})
	}
}
