package main

import (
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/session"
)

// collectorDefault sets what it says it sets, and only when $GOGC sets nothing.
func TestCollectorDefault(t *testing.T) {
	was := debug.SetGCPercent(100)
	defer debug.SetGCPercent(was)
	for _, c := range []struct {
		gogc, line string
		want       int
	}{
		{"", "garbage collector: GOGC=400, the server's default (set GOGC to choose another)", serveGCPercent},
		{"150", "garbage collector: GOGC=150, from the environment", 100},
		{"off", "garbage collector: GOGC=off, from the environment", 100},
	} {
		debug.SetGCPercent(100)
		line := collectorDefault(func(name string) string {
			if name == "GOGC" {
				return c.gogc
			}
			return ""
		}, serveGCPercent, "the server's")
		if got := debug.SetGCPercent(100); got != c.want || line != c.line {
			t.Errorf("GOGC=%q: the collector runs at %d after collectorDefault, which says %q; want %d and %q", c.gogc, got, line, c.want, c.line)
		}
	}
}

// 'replay verify' runs its collector at session.VerifyGCPercent unless $GOGC chose a setting.
func TestVerifyCollectorSetting(t *testing.T) {
	was := debug.SetGCPercent(100)
	defer debug.SetGCPercent(was)
	db := filepath.Join(t.TempDir(), "tasklog.db")
	if code, _, stderr := replayHere("import", filepath.Join(testenv.RepoRoot(t), "testdata", "logs", "monorepo.jsonl"), "--db", db); code != 0 {
		t.Fatalf("import: exit %d\n%s", code, stderr)
	}
	for _, c := range []struct {
		gogc string
		want int
	}{{"", session.VerifyGCPercent}, {"150", 100}} {
		t.Setenv("GOGC", c.gogc)
		debug.SetGCPercent(100)
		if code, out, stderr := replayHere("verify", "--db", db); code != 0 || !strings.HasPrefix(out, "ok") {
			t.Fatalf("GOGC=%q: verify: exit %d\n%s%s", c.gogc, code, out, stderr)
		}
		if got := debug.SetGCPercent(100); got != c.want {
			t.Errorf("GOGC=%q: verify ran its collector at %d, want %d", c.gogc, got, c.want)
		}
	}
}
