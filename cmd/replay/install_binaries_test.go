package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
)

// TestInstallBinaries runs the README's install from the checkout, `go install ./cmd/replay/...`
// into a folder of its own, and checks that it leaves replay and replay-hook side by side, as
// `replay install` expects, and that replay runs.
func TestInstallBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the replay and replay-hook binaries; skipped with -short")
	}
	gobin := t.TempDir()
	cmd := exec.Command("go", "install", "./cmd/replay/...")
	cmd.Dir = testenv.RepoRoot(t)
	cmd.Env = append(cmd.Environ(), "GOBIN="+gobin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install ./cmd/replay/...: %v\n%s", err, out)
	}
	for _, name := range []string{"replay", "replay-hook"} {
		if _, err := exec.LookPath(filepath.Join(gobin, name)); err != nil {
			t.Errorf("go install left no %s: %v", name, err)
		}
	}
	out, err := exec.Command(filepath.Join(gobin, "replay"), "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "replay ") {
		t.Errorf("replay --version: %v: %q", err, out)
	}
}

// TestInstallRefusesGoRun runs 'go run ./cmd/replay install' from the checkout, as a reader of
// the README's 'go run ./cmd/replay demo' may: a hook command pointing into go run's build
// files would stop working when Go removes them, so install refuses, says what to run instead,
// and writes nothing.
func TestInstallRefusesGoRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds replay with go run; skipped with -short")
	}
	project, data := t.TempDir(), t.TempDir()
	for round := range 2 { // the first build is made in a temporary folder, the next comes from the build cache
		cmd := exec.Command("go", "run", "./cmd/replay", "install", "claude-code", "--project", project)
		cmd.Dir = testenv.RepoRoot(t)
		cmd.Env = append(cmd.Environ(), "XDG_DATA_HOME="+data)
		out, err := cmd.CombinedOutput()
		// go run says how the program exited, and exits 1 itself.
		var exit *exec.ExitError
		if !errors.As(err, &exit) || !strings.Contains(string(out), fmt.Sprintf("exit status %d\n", exitUsage)) {
			t.Fatalf("round %d: go run ./cmd/replay install: %v, want replay's exit status %d\n%s", round, err, exitUsage, out)
		}
		if !strings.Contains(string(out), "is a build of 'go run'") || !strings.Contains(string(out), "go install ./cmd/replay/...") ||
			!strings.Contains(string(out), "replay install claude-code --project "+project) {
			t.Errorf("round %d: the refusal does not say why or what to run:\n%s", round, out)
		}
	}
	for _, dir := range []string{project, data} {
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Errorf("the refused install wrote %d entries into %s, the first %s", len(entries), dir, entries[0].Name())
		}
	}
}

func TestBuiltByGoRun(t *testing.T) {
	for _, tc := range []struct {
		exe  string
		want bool
	}{
		{"/root/.cache/go-build/26/2656833a6ecd6aa9307af2968cce2dbd5cad13abcb61ccb2b446c9f943c70505-d/replay", true},
		{"/tmp/go-build994177429/b001/exe/replay", true},
		{"/home/me/go/bin/replay", false},
		{"/usr/local/bin/replay", false},
		{"/tmp/go-build994177429/b001/replay.test", false}, // a test binary
		{"/home/me/exe/replay", false},
		{"/home/me/26/notahash-d/replay", false},
	} {
		if got := builtByGoRun(tc.exe); got != tc.want {
			t.Errorf("builtByGoRun(%q) = %v, want %v", tc.exe, got, tc.want)
		}
	}
}
