package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	cmd.Dir = repoRoot(t)
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
