// Package testenv is what the command's two test packages share: the private environment their
// processes run in, the replay and replay-hook binaries built from the checkout, and the few
// reads of a test's database both make. The command's own tests (package main) and the tests
// that drive the real agent programs (cmd/replay/e2e) are separate packages so that each has
// go test's default ten minutes.
package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session/serve"
	"github.com/tasklog/tasklog/store"
	"github.com/tasklog/tasklog/store/location"
)

// Machine and User are the machine and user the tests' hooks record in task_started: the same
// on every machine the tests run on.
const (
	Machine = "devbox"
	User    = "dev"
)

// Runner is what a TestMain runs: *testing.M, or testscript's wrapper of it.
type Runner interface{ Run() int }

// Private wraps m so that its tests run with the user's data folder ($XDG_DATA_HOME) in a
// temporary folder of their own and without $TASKLOG_DB or $TASKLOG_STORE: a test that forgets
// --db writes there, never into the task log of the user running the tests. The binaries
// ReplayBinary builds go into a folder removed when the tests end.
func Private(m Runner) Runner { return private{m} }

type private struct{ m Runner }

func (p private) Run() int {
	dir, err := os.MkdirTemp("", "tasklog-test-data-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if built.dir, err = os.MkdirTemp("", "tasklog-test-bin-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(built.dir)
	os.Setenv("XDG_DATA_HOME", dir)
	os.Setenv("GORACE", QuickRaceExit(os.Getenv("GORACE")))
	os.Unsetenv("TASKLOG_DB")
	os.Unsetenv(location.Env)
	os.Setenv("TASKLOG_MACHINE", Machine)
	os.Setenv("TASKLOG_USER", User)
	return p.m.Run()
}

// QuickRaceExit is the GORACE setting for the processes the tests start: under -race, each
// process otherwise sleeps a second before it exits (the race detector's atexit_sleep_ms, to
// let other goroutines finish reporting), and the scripts start hundreds of them. A race is
// still reported; it fails the process with exit code 66 as before. A value the user set wins.
func QuickRaceExit(gorace string) string {
	if strings.Contains(gorace, "atexit_sleep_ms") {
		return gorace
	}
	return strings.TrimSpace(gorace + " atexit_sleep_ms=10")
}

// The packages of the two binaries.
const (
	replayPkg = "github.com/tasklog/tasklog/cmd/replay"
	clientPkg = replayPkg + "/replay-hook"
)

// ReplayBinary is the replay command built for the tests that need real processes (a file lock
// is per process): built once per run of the test binary, into the folder Private removes, and
// shared by every test, since none of them changes it.
func ReplayBinary(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("builds the replay binary; skipped with -short")
	}
	if built.dir == "" {
		tb.Fatal("testenv.ReplayBinary needs the tests run by testenv.Private")
	}
	built.once.Do(func() {
		built.path = filepath.Join(built.dir, "replay")
		built.err = goBuild(built.path, replayPkg)
	})
	if built.err != nil {
		tb.Fatal(built.err)
	}
	return built.path
}

// built is the replay binary of this run, made by the first test that asks for it, and the
// replay-hook binary beside it, made by the first that asks for both.
var built struct {
	once       sync.Once
	dir        string
	path       string
	err        error
	clientOnce sync.Once
	client     string
	clientErr  error
}

// Binaries is ReplayBinary and the replay-hook binary beside it, as 'go install
// ./cmd/replay/...' puts them, so that 'replay install' writes hooks that run replay-hook: built
// once per run of the test binary, like ReplayBinary, and shared by every test.
func Binaries(tb testing.TB) (replay, client string) {
	tb.Helper()
	replay = ReplayBinary(tb)
	built.clientOnce.Do(func() {
		built.client = filepath.Join(built.dir, "replay-hook")
		built.clientErr = goBuild(built.client, clientPkg)
	})
	if built.clientErr != nil {
		tb.Fatal(built.clientErr)
	}
	return replay, built.client
}

func goBuild(out, pkg string) error {
	if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}

// RepoRoot is the repository root, where testdata/ is shared by the demo and the tests: the
// nearest folder above the test's own that holds go.mod.
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			tb.Fatal("no go.mod above the test's folder")
		}
		dir = up
	}
}

// RunReplay runs the replay binary with args, HOME set to home and PATH as the test's, for a
// minute at most, and returns its output and exit status: stdout alone when it succeeds (so JSON
// stays parseable), stdout and stderr when not.
func RunReplay(t *testing.T, replay, home string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, replay, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return stdout.String() + stderr.String(), exit.ExitCode()
	case err != nil:
		t.Fatalf("replay %s: %v", strings.Join(args, " "), err)
	}
	return stdout.String(), 0
}

// ServerWait is how long a test waits for a server to answer: its start on a machine many
// times slower than usual.
const ServerWait = time.Minute

// DialWhenUp waits for a server to answer on sock, for ServerWait at most, and returns the
// connection; the error is the last try's.
func DialWhenUp(sock string) (*serve.Client, error) {
	deadline := time.Now().Add(ServerWait)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := serve.Dial(ctx, sock, "test")
		cancel()
		if err == nil || time.Now().After(deadline) {
			return c, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TaskEvents is every event of the one task of the database at db; it fails the test when the
// database holds another number of tasks.
func TaskEvents(t *testing.T, db string) []events.Event {
	t.Helper()
	d, err := store.Open(db, &store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tasks, err := d.Tasks()
	if err != nil || len(tasks) != 1 {
		t.Fatalf("tasks: %v, %v", tasks, err)
	}
	var out []events.Event
	for ev, err := range d.Events(context.Background(), tasks[0].Task, 1) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

// CountType is how many of evs are of type typ.
func CountType(evs []events.Event, typ events.Type) int {
	return len(slices.DeleteFunc(slices.Clone(evs), func(e events.Event) bool { return e.Type != typ }))
}
