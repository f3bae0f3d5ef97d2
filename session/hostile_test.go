//go:build unix

package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/projections"
	"github.com/tasklog/tasklog/rules"
)

// hangGuard is how long a decision that used to hang gets before the test fails: a decision
// takes milliseconds, so this measures nothing but whether it returns at all.
const hangGuard = 30 * time.Second

// decideWithin decides, failing the test if the decision has not returned within hangGuard.
func decideWithin(t *testing.T, s *Session) *Decision {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var d *Decision
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		d, err = s.Decide(ctx)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("Decide did not return within %v: it hangs", hangGuard)
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func hasDiagnostic(d *Decision, code, file string) bool {
	for _, g := range d.Recorded().Diagnostics {
		if g.Code == code && g.File == file {
			return true
		}
	}
	return false
}

// hostileRoots are the ways a folder is given to a session: read each decision, and watched.
func hostileRoots(dir string) []struct {
	name string
	root Root
} {
	return []struct {
		name string
		root Root
	}{
		{"read", Root{Path: filepath.ToSlash(dir), FS: os.DirFS(dir)}},
		{"watched", DirRoot(dir)},
	}
}

// A named pipe and links to their own folder in a rules folder neither hang a decision nor
// keep the other rules out.
func TestDecideInAHostileWorkspace(t *testing.T) {
	dir := writeTree(t, map[string]string{".clinerules/general.md": "Always write tests.\n"})
	fifo := filepath.Join(dir, ".clinerules", "x.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("named pipes unsupported:", err)
	}
	t.Cleanup(func() { // releases a decision stuck opening the pipe (the bug)
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	for i := range 5 {
		if err := os.Symlink(".", filepath.Join(dir, ".clinerules", "self"+string(rune('1'+i)))); err != nil {
			t.Skip("symlinks unsupported:", err)
		}
	}
	root := filepath.ToSlash(dir)
	for _, r := range hostileRoots(dir) {
		t.Run(r.name, func(t *testing.T) {
			s := newSession(t, openDB(t), nil, Options{Roots: []Root{r.root}})
			for turn := 1; turn <= 2; turn++ {
				d := decideWithin(t, s)
				if got := names(d.Recorded().Included); !slices.Equal(got, []string{"general"}) {
					t.Errorf("turn %d: included %v, want [general]", turn, got)
				}
				if !hasDiagnostic(d, rules.DiagNotRegular, root+"/.clinerules/x.md") {
					t.Errorf("turn %d: the named pipe is not reported: %v", turn, d.Recorded().Diagnostics)
				}
				if !hasDiagnostic(d, rules.DiagLinkLoop, root+"/.clinerules/self5") {
					t.Errorf("turn %d: the link loop is not reported: %v", turn, d.Recorded().Diagnostics)
				}
			}
		})
	}
}

// A path with a NUL is dropped from the context with its reason, so "etc/**" does not match it;
// a name spelled decomposed matches the rule written composed.
func TestDecideHostilePaths(t *testing.T) {
	ctx := context.Background()
	dir := writeTree(t, map[string]string{
		".clinerules/etc.md":  "---\npaths: [\"etc/**\"]\n---\nCareful with etc.\n",
		".clinerules/cafe.md": "---\npaths: [\"docs/Caf\u00e9/**\"]\n---\nMenu rules.\n",
		".clinerules/long.md": "---\npaths: [\"" + strings.Repeat("{a,", 2000) + "b" + strings.Repeat("}", 2000) + "\"]\n---\nNever.\n",
	})
	s := newSession(t, openDB(t), os.DirFS(dir), Options{})
	for i, p := range []string{"etc/passwd\x00.txt", "docs/Cafe\u0301/menu.md", "b", strings.Repeat("a/", projections.MaxPathLength)} {
		args, _ := json.Marshal(map[string]string{"path": p})
		if _, err := s.ToolCall(ctx, "read_file", "c"+string(rune('1'+i)), args); err != nil {
			t.Fatal(err)
		}
	}
	d := decideWithin(t, s)
	rec := d.Recorded()
	if got := names(rec.Included); !slices.Equal(got, []string{"cafe"}) {
		t.Errorf("included %v, want [cafe]", got)
	}
	var ctxPaths []string
	for _, c := range rec.Context {
		if len(c.Path) > 40 {
			c.Path = c.Path[:40] + "…"
		}
		ctxPaths = append(ctxPaths, c.Path)
	}
	if want := []string{"b", "docs/Caf\u00e9/menu.md"}; !slices.Equal(ctxPaths, want) {
		t.Errorf("context %+q, want %+q", ctxPaths, want)
	}
	for _, reason := range []string{projections.ReasonControl, projections.ReasonTooLong} {
		if !slices.Contains(rec.Dropped, events.Count{Name: reason, N: 1}) {
			t.Errorf("dropped %v: want one %s", rec.Dropped, reason)
		}
	}
	if !hasDiagnostic(d, rules.DiagPatternLimit, "/ws/.clinerules/long.md") {
		t.Errorf("the nested-brace pattern is not reported: %v", rec.Diagnostics)
	}
}
