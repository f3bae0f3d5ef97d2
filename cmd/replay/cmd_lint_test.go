package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLintJSONGolden pins `replay lint --json` over testdata/lint/ws in
// testdata/lint.golden.json, with the workspace's absolute path written $WORKSPACE
// (go test ./cmd/replay -run TestLintJSONGolden -update rewrites it; review the diff).
func TestLintJSONGolden(t *testing.T) {
	dir := filepath.Join("testdata", "lint", "ws")
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"lint", "--json", "--workspace", dir}, &stdout, &stderr); code != exitFailed {
		t.Fatalf("replay lint --json: exit %d, want %d (findings); stderr: %s", code, exitFailed, stderr.String())
	}
	got := strings.ReplaceAll(stdout.String(), filepath.ToSlash(abs), "$WORKSPACE")
	golden := filepath.Join("testdata", "lint.golden.json")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/replay -run TestLintJSONGolden -update)", err)
	}
	if string(want) != got {
		t.Errorf("replay lint --json differs from %s (-update rewrites it; review the diff):\n%s", golden, got)
	}
}
