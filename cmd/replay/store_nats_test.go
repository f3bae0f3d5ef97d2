package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/session/mcp"
	"github.com/tasklog/tasklog/session/serve"
	"github.com/tasklog/tasklog/store"
	"github.com/tasklog/tasklog/store/location"
	"github.com/tasklog/tasklog/store/natsstore"
)

// natsServer starts an in-process JetStream server listening on 127.0.0.1 (port 0: a random
// one), keeping its streams in dir and syncing every write, as the README configures the real
// one; it stops with the test.
func natsServer(t testing.TB, dir string, port int) *server.Server {
	t.Helper()
	if port == 0 {
		port = server.RANDOM_PORT
	}
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, JetStream: true,
		StoreDir: dir, SyncAlways: true, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(testenv.ServerWait) {
		ns.Shutdown()
		t.Fatal("the NATS server did not get ready in 10s")
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	return ns
}

// TestNATSScripts runs the transcripts of testdata/script_nats, each against a NATS server of
// its own: $NATS is its URL (nats://127.0.0.1:PORT, no stream). 'logged RE' greps the hook log
// of the store $TASKLOG_STORE names.
func TestNATSScripts(t *testing.T) {
	root := testenv.RepoRoot(t)
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script_nats",
		Setup: func(env *testscript.Env) error {
			ns := natsServer(env.T().(testing.TB), filepath.Join(env.WorkDir, ".nats"), 0)
			env.Setenv("ROOT", root)
			env.Setenv("NATS", ns.ClientURL())
			env.Setenv("TASKLOG_DB", filepath.Join(env.WorkDir, "tasklog.db"))
			env.Setenv("XDG_DATA_HOME", filepath.Join(env.WorkDir, "data"))
			env.Setenv("TASKLOG_SERVE", "off")
			env.Setenv("TASKLOG_MACHINE", testenv.Machine)
			env.Setenv("TASKLOG_USER", testenv.User)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// oldstream NAME creates stream NAME on $NATS as tasklog created its streams before
			// layouts were named (layout 1): one message per subject, no layout in its metadata.
			"oldstream": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: oldstream NAME")
				}
				ts.Check(createLayout1Stream(ts.Getenv("NATS"), args[0]))
			},
			// uncompress NAME switches the compression of stream NAME on $NATS off: its
			// configuration is then that of a stream the versions before compression created.
			"uncompress": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: uncompress NAME")
				}
				ts.Check(uncompressStream(ts.Getenv("NATS"), args[0]))
			},
			"logged": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: logged REGEXP")
				}
				p := filepath.Join(location.SideDir(ts.Getenv("XDG_DATA_HOME"), ts.Getenv(location.Env)), hookLogName)
				b, err := os.ReadFile(p)
				ts.Check(err)
				if !strings.Contains(string(b), args[0]) {
					ts.Fatalf("%s does not say %q:\n%s", p, args[0], b)
				}
			},
		},
	})
}

// replayHere runs a verb in this process and returns its exit status and output.
func replayHere(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// closedPort is a 127.0.0.1 port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// freePorts returns n different TCP ports of 127.0.0.1 nothing listens on (at the time of
// asking): each is held until all are chosen, as the system may hand a port it just took back
// again to the next one asking.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		ports[i] = ln.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// TestNATSServerDown: a server that is down makes a verb fail at once with exit 2 and an error
// naming the server and the stream; a hook replies neutrally, exits 0, logs the error and spools
// the payload, which the first hook that reaches the server records.
func TestNATSServerDown(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	t.Setenv("TASKLOG_SERVE", "off")
	t.Setenv(location.Env, "")
	port := closedPort(t)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	for _, tt := range []struct {
		args   []string
		stream string
	}{
		{[]string{"tasks", "--store", url}, "TASKLOG"},
		{[]string{"log", "0b3c", "--store", url + "/AUDIT"}, "AUDIT"},
		{[]string{"import", filepath.Join(testenv.RepoRoot(t), "testdata", "logs", "monorepo.jsonl"), "--store", url}, "TASKLOG"},
		{[]string{"verify", "--all", "--store", url}, "TASKLOG"},
	} {
		args, stream := append(tt.args, "--timeout", "1s"), tt.stream
		start := time.Now()
		code, _, stderr := replayHere(args...)
		took := time.Since(start)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d; stderr %s", args, code, exitUsage, stderr)
		}
		if !strings.HasPrefix(stderr, "replay "+args[0]+": open NATS store ") {
			t.Errorf("%v: the error does not start with the verb: %s", args, stderr)
		}
		if !strings.Contains(stderr, fmt.Sprintf("127.0.0.1:%d", port)) || !strings.Contains(stderr, stream) {
			t.Errorf("%v: the error names neither server nor stream %s: %s", args, stream, stderr)
		}
		// Never a hang: the call fails within its timeout (1s, and room for a slow machine).
		if took > time.Second+hangLimit {
			t.Errorf("%v took %v, past its timeout", args, took)
		}
	}

	// A hook: neutral reply, exit 0, the error in the store's hook log, the payload spooled.
	ws, _ := hookWorkspace(t)
	loc := natsLoc(url)
	side := filepath.Dir(loc.SideFile())
	prompt := fmt.Sprintf(`{"session_id":"s-down","cwd":%q,"hook_event_name":"UserPromptSubmit","prompt":"hello"}`, ws)
	code, stdout, _ := hookRun(t, prompt, "claude-code", "--store", url)
	if code != exitOK || stdout != "" {
		t.Fatalf("hook with the server down: exit %d, stdout %q; want 0 and the neutral (empty) reply", code, stdout)
	}
	log, err := os.ReadFile(filepath.Join(side, hookLogName))
	if err != nil || !strings.Contains(string(log), fmt.Sprintf("127.0.0.1:%d", port)) || !strings.Contains(string(log), "spooled") {
		t.Fatalf("hook log (%v) does not name the server and the spooled payload:\n%s", err, log)
	}
	if spooled, _ := filepath.Glob(filepath.Join(spoolDir(loc.SideFile()), "*.json")); len(spooled) != 1 {
		t.Fatalf("spooled %d payloads, want 1", len(spooled))
	}

	// The server comes up on that port: the next hook records its payload and the spooled one.
	natsServer(t, filepath.Join(dir, "nats"), port)
	stop := fmt.Sprintf(`{"session_id":"s-down","cwd":%q,"hook_event_name":"Stop","stop_hook_active":false}`, ws)
	if code, _, stderr := hookRun(t, stop, "claude-code", "--store", url, "--budget", slowBudget.String()); code != exitOK {
		t.Fatalf("hook: exit %d: %s", code, stderr)
	}
	if spooled, _ := filepath.Glob(filepath.Join(spoolDir(loc.SideFile()), "*.json")); len(spooled) != 0 {
		t.Fatalf("%d payloads still spooled after a hook reached the server", len(spooled))
	}
	code, out, stderr := replayHere("log", agentlog.TaskID(agentlog.ClaudeCode, "s-down").String(), "--store", url)
	if code != exitOK || !strings.Contains(out, `user_message`) || !strings.Contains(out, "agent_stopped") {
		t.Fatalf("log: exit %d, want the spooled prompt and the stop:\n%s%s", code, out, stderr)
	}
}

// hookRun runs 'replay hook' in this process with payload on stdin.
func hookRun(t *testing.T, payload string, args ...string) (int, string, string) {
	t.Helper()
	old := hookStdin
	hookStdin = strings.NewReader(payload)
	defer func() { hookStdin = old }()
	return replayHere(append([]string{"hook"}, args...)...)
}

// TestNATSServe: 'replay serve --store URL' serves a NATS store. It keeps the stream open, yet
// other commands read the log meanwhile (no file lock); hooks go through it; --stop stops it.
func TestNATSServe(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	t.Setenv(location.Env, "")
	ns := natsServer(t, filepath.Join(dir, "nats"), 0)
	url := ns.ClientURL() + "/SERVED"
	ws, _ := hookWorkspace(t)

	// A payload a hook spooled while the server was out of reach: the server records it.
	spooledPrompt := fmt.Sprintf(`{"session_id":"s-spooled","cwd":%q,"hook_event_name":"UserPromptSubmit","prompt":"spooled"}`, ws)
	if err := spool(natsLoc(url).SideFile(), agentlog.ClaudeCode, []byte(spooledPrompt), time.Now()); err != nil {
		t.Fatal(err)
	}

	done := make(chan int, 1)
	var serveErr bytes.Buffer
	go func() { done <- cmdServe([]string{"--store", url, "--idle", "1m"}, &bytes.Buffer{}, &serveErr) }()
	sock := serve.SocketPath(natsLoc(url).SideFile())
	c, err := testenv.DialWhenUp(sock)
	if err != nil {
		t.Fatalf("the server did not listen on %s: %v\n%s", sock, err, serveErr.String())
	}
	defer c.Close()
	if c.Server.DB != url {
		t.Errorf("the server says it serves %q, want %q", c.Server.DB, url)
	}

	// A hook payload through the socket, then one through 'replay hook' (which finds the server).
	ctx, cancel := context.WithTimeout(context.Background(), slowBudget)
	defer cancel()
	start := fmt.Sprintf(`{"session_id":"s-serve","cwd":%q,"hook_event_name":"SessionStart","source":"startup"}`, ws)
	if _, err := c.Hook(ctx, "claude-code", []byte(start)); err != nil {
		t.Fatalf("hook through the server: %v", err)
	}
	read := fmt.Sprintf(`{"session_id":"s-serve","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":"toolu_1"}`,
		ws, filepath.Join(ws, "src/api/routes.ts"))
	t.Setenv("TASKLOG_SERVE", "on")
	code, reply, stderr := hookRun(t, read, "claude-code", "--store", url, "--budget", slowBudget.String())
	if code != exitOK || !strings.Contains(reply, "API handlers return JSON errors") {
		t.Fatalf("replay hook via the server: exit %d, reply %q, stderr %s", code, reply, stderr)
	}

	// The server holds the stream open; a reader opens it all the same.
	task := agentlog.TaskID(agentlog.ClaudeCode, "s-serve").String()
	code, out, stderr := replayHere("log", task, "--store", url, "--timeout", "2s")
	if code != exitOK || !strings.Contains(out, "tool_call") || !strings.Contains(out, "delivered") {
		t.Fatalf("log while the server holds the store: exit %d\n%s%s", code, out, stderr)
	}
	spooledTask := agentlog.TaskID(agentlog.ClaudeCode, "s-spooled").String()
	if code, out, stderr := replayHere("log", spooledTask, "--store", url); code != exitOK || !strings.Contains(out, `"spooled"`) {
		t.Fatalf("the spooled prompt was not recorded by the server: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = replayHere("serve", "--stop", "--store", url)
	if code != exitOK || !strings.Contains(out, "stopped the server of "+url) {
		t.Fatalf("serve --stop: exit %d: %s%s", code, out, stderr)
	}
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("serve exited %d: %s", code, serveErr.String())
		}
	case <-time.After(testenv.ServerWait):
		t.Fatal("serve did not exit after --stop")
	}
	if code, out, _ := replayHere("verify", task, "--store", url); code != exitOK {
		t.Fatalf("verify after serve: exit %d\n%s", code, out)
	}
}

// TestInstallStore: install bakes --store into the hook and MCP commands; a second install
// changes nothing; --db and --store together are a usage error; uninstall restores the file.
func TestInstallStore(t *testing.T) {
	dir := t.TempDir()
	url := "nats://10.0.0.5:4222/TEAM"
	settings := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	orig := "{\n  \"model\": \"opus\"\n}\n"
	if err := os.WriteFile(settings, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := replayHere("install", "claude-code", "--project", dir, "--store", url); code != exitOK {
		t.Fatalf("install: exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(settings)
	if !strings.Contains(string(b), "hook claude-code --store "+url) {
		t.Fatalf("the hook command does not carry --store %s:\n%s", url, b)
	}
	mcp, _ := os.ReadFile(filepath.Join(dir, ".mcp.json"))
	if !strings.Contains(string(mcp), `"--store",`) || !strings.Contains(string(mcp), url) {
		t.Fatalf("the MCP server does not carry --store %s:\n%s", url, mcp)
	}
	if code, out, _ := replayHere("install", "claude-code", "--project", dir, "--store", url); code != exitOK || out != "nothing to change\n" {
		t.Fatalf("second install: exit %d, %q", code, out)
	}
	if code, _, stderr := replayHere("install", "claude-code", "--project", dir, "--store", url, "--db", "x.db"); code != exitUsage || !strings.Contains(stderr, "--db and --store") {
		t.Fatalf("--db with --store: exit %d: %s", code, stderr)
	}
	if code, _, stderr := replayHere("uninstall", "claude-code", "--project", dir); code != exitOK {
		t.Fatalf("uninstall: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(settings); string(b) != orig {
		t.Fatalf("uninstall left\n%s\nwant\n%s", b, orig)
	}
}

// TestNATSServerBinary starts the real nats-server as the README says (JetStream, 127.0.0.1,
// sync_interval always, a store folder) and runs the demo against it.
func TestNATSServerBinary(t *testing.T) {
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		gopath, _ := exec.Command("go", "env", "GOPATH").Output()
		bin = filepath.Join(strings.TrimSpace(string(gopath)), "bin", "nats-server")
		if _, err := os.Stat(bin); err != nil {
			t.Skip("nats-server is not on PATH nor in $(go env GOPATH)/bin (go install github.com/nats-io/nats-server/v2@v2.15.2)")
		}
	}
	dir := t.TempDir()
	port := closedPort(t)
	conf := filepath.Join(dir, "nats-server.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(natsConf, port, filepath.Join(dir, "jetstream"))), 0o644); err != nil {
		t.Fatal(err)
	}
	// The server writes its log to a file, read only to explain a failure.
	logf, err := os.Create(filepath.Join(dir, "nats-server.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	logb := func() string { b, _ := os.ReadFile(logf.Name()); return string(b) }
	cmd := exec.Command(bin, "-js", "-c", conf)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(testenv.ServerWait); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nats-server did not listen on %s:\n%s", addr, logb())
		}
	}
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	url := "nats://" + addr
	code, out, stderr := replayHere("demo", "--testdata", filepath.Join(testenv.RepoRoot(t), "testdata"), "--store", url)
	if code != exitOK || strings.Count(out, "verified") != 6 {
		t.Fatalf("demo against nats-server: exit %d\n%s%s\nserver log:\n%s", code, out, stderr, logb())
	}
	st, err := natsLoc(url + "/" + demoStream).Open(location.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tasks, err := st.Tasks()
	if err != nil || len(tasks) != 6 {
		t.Fatalf("the demo stream holds %d tasks (%v), want 6", len(tasks), err)
	}
	for _, ti := range tasks {
		if err := st.Verify(context.Background(), ti.Task); err != nil {
			t.Errorf("verify %s: %v", ti.Task, err)
		}
	}
}

// natsConf is the README's nats-server configuration with the port and store folder of a test.
const natsConf = `listen: 127.0.0.1:%d
jetstream {
  store_dir: %q
  sync_interval: always
}
`

// TestNATSMCP: the MCP server reads a NATS store for each call, as it reads the file; a stream
// without the task says so.
func TestNATSMCP(t *testing.T) {
	ns := natsServer(t, t.TempDir(), 0)
	url := ns.ClientURL() + "/MCP"
	if code, _, stderr := replayHere("import", filepath.Join(testenv.RepoRoot(t), "testdata", "logs", "monorepo.jsonl"), "--store", url); code != exitOK {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	loc := natsLoc(url)
	cfg := mcp.Config{Store: url, Task: "0b3c", Open: func() (store.Store, error) { return openMCP(loc, location.Options{ReadOnly: true, MustExist: true}) }}
	var out mcp.TimelineOut
	if text, isErr := mcpCallToolRaw(t, mcpConnect(t, cfg), "timeline", map[string]any{"last": 1}, &out); isErr ||
		out.Task != "0b3c7f2a-1d4e-4f5a-9b6c-7d8e9f0a1b2c" {
		t.Fatalf("timeline: task %q, %s; want the imported one", out.Task, text)
	}
	cfg.Task = "ffff"
	if text, isErr := mcpCallToolRaw(t, mcpConnect(t, cfg), "timeline", nil, nil); !isErr || !strings.Contains(text, url) {
		t.Fatalf("a task not in the stream: %q; want an error naming %s", text, url)
	}
}

// TestNATSHookStartsServer: a hook process on a NATS store starts 'replay serve --store URL' on
// demand, as it does for a file, and later hooks go through it.
func TestNATSHookStartsServer(t *testing.T) {
	bin := testenv.ReplayBinary(t)
	ws, home := hookWorkspace(t)
	dir := t.TempDir()
	ns := natsServer(t, filepath.Join(dir, "nats"), 0)
	url := ns.ClientURL()
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	side := natsLoc(url).SideFile()
	env := []string{"HOME=" + home, "XDG_DATA_HOME=" + filepath.Join(dir, "data"), "TASKLOG_SERVE=on", "TASKLOG_SERVE_IDLE=30s", location.Env + "="}
	t.Cleanup(func() { exec.Command(bin, "serve", "--stop", "--store", url).Run() })
	start := `{"session_id":"s-start","cwd":"` + ws + `","hook_event_name":"SessionStart","source":"startup"}`
	if r := natsHookProcess(bin, url, []byte(start), env); r.code != 0 {
		t.Fatalf("SessionStart: %+v", r)
	}
	pid := waitServer(t, side)
	read := fmt.Sprintf(`{"session_id":"s-start","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":"toolu_1"}`,
		ws, filepath.Join(ws, "src/api/routes.ts"))
	r := natsHookProcess(bin, url, []byte(read), env)
	if r.code != 0 || !strings.Contains(r.stdout, "API handlers return JSON errors") {
		t.Fatalf("PreToolUse through the server: %+v", r)
	}
	if serverPID(side) != pid {
		t.Errorf("the server changed under the hooks")
	}
	if log, _ := os.ReadFile(filepath.Join(filepath.Dir(side), serveLogName)); !strings.Contains(string(log), "serving "+url) {
		t.Errorf("the server's log does not say it serves %s:\n%s", url, log)
	}
}

// natsHookProcess runs 'replay hook claude-code --store url' as a process, with slowBudget.
func natsHookProcess(bin, url string, payload []byte, env []string) hookResult {
	cmd := exec.Command(bin, withBudget([]string{"hook", "claude-code", "--store", url})...)
	cmd.Stdin = bytes.NewReader(payload)
	cmd.Env = append(os.Environ(), env...)
	return runHookCommand(cmd)
}

// TestNATSReplicas: ?replicas=N in the URL, from 1 to 5; a single server refuses more than
// one, a cluster of three real nats-server processes keeps three (testNATSCluster).
func TestNATSReplicas(t *testing.T) {
	tests := []struct {
		url     string
		want    int
		wantErr bool
	}{
		{"nats://h:4222", 0, false},
		{"nats://h:4222/S?replicas=3", 3, false},
		{"nats://h:4222?replicas=1", 1, false},
		{"nats://h:4222/S?replicas=0", 0, true},
		{"nats://h:4222/S?replicas=7", 0, true},
		{"nats://h:4222/S?replicas=three", 0, true},
	}
	for _, tt := range tests {
		u, err := natsstore.ParseURL(tt.url)
		if u.Replicas != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseURL(%q).Replicas = %d, %v; want %d, error %v", tt.url, u.Replicas, err, tt.want, tt.wantErr)
		}
	}
	// A single server refuses a stream of more than one replica, with the message the README
	// quotes.
	ns := natsServer(t, t.TempDir(), 0)
	if st, err := natsLoc(ns.ClientURL() + "/R3?replicas=3").Open(location.Options{}); err == nil {
		st.Close()
		t.Fatal("a single server created a stream of 3 replicas")
	} else if !strings.Contains(err.Error(), "replicas > 1 not supported in non-clustered mode") {
		t.Errorf("replicas=3 on a single server: %v", err)
	}
	t.Run("cluster", testNATSCluster)
}

// withJetStream connects to the server at url and runs f with its JetStream API, for at most
// testenv.ServerWait.
func withJetStream(url string, f func(ctx context.Context, js jetstream.JetStream) error) error {
	nc, err := nats.Connect(url)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.ServerWait)
	defer cancel()
	return f(ctx, js)
}

// createLayout1Stream creates stream name on the server at url with the configuration tasklog
// gave its streams before layouts were named.
func createLayout1Stream(url, name string) error {
	return withJetStream(url, func(ctx context.Context, js jetstream.JetStream) error {
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{
			Name: name, Description: "tasklog event logs", Subjects: []string{name + ".>"},
			Storage: jetstream.FileStorage, Replicas: 1, Retention: jetstream.LimitsPolicy,
			Discard: jetstream.DiscardNew, DiscardNewPerSubject: true, MaxMsgsPerSubject: 1,
			Duplicates: 2 * time.Minute, AllowDirect: true, AllowAtomicPublish: true, DenyDelete: true, DenyPurge: true,
		})
		return err
	})
}

// uncompressStream sets the compression of stream name on url to none.
func uncompressStream(url, name string) error {
	err := withJetStream(url, func(ctx context.Context, js jetstream.JetStream) error {
		st, err := js.Stream(ctx, name)
		if err != nil {
			return err
		}
		cfg := st.CachedInfo().Config
		cfg.Compression = jetstream.NoCompression
		_, err = js.UpdateStream(ctx, cfg)
		return err
	})
	if err != nil {
		return fmt.Errorf("uncompress %s: %w", name, err)
	}
	return nil
}

// natsLoc is the location of the NATS store at url.
func natsLoc(url string) location.Location {
	l, err := location.Parse(url)
	if err != nil || !l.Shared() {
		panic(fmt.Sprintf("%q is not a NATS URL: %v", url, err))
	}
	return l
}
