//go:build unix

package rules

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hangGuard is how long a call that used to hang gets before the test fails: not a measure of
// speed (these calls take milliseconds) but a way to fail, naming the call, instead of hanging.
const hangGuard = 30 * time.Second

// within runs f and fails the test if it has not returned within hangGuard.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(hangGuard):
		t.Fatalf("%s did not return within %v: it hangs", what, hangGuard)
	}
}

// mkfifo makes a named pipe and, when the test ends, opens it for writing once so that a reader
// stuck opening it (the bug) is released.
func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("named pipes unsupported:", err)
	}
	t.Cleanup(func() {
		if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
}

// collectWays are the ways a workspace folder is collected: plain, with a Reader checking
// files, and with a Reader watching the root.
var collectWays = []struct {
	name string
	run  func(t *testing.T, dir string) ([]File, error)
}{
	{"Collect", func(t *testing.T, dir string) ([]File, error) {
		return Collect(Workspace{Roots: []Root{{Name: "/ws", FS: os.DirFS(dir)}}})
	}},
	{"Reader", func(t *testing.T, dir string) ([]File, error) {
		return (&Reader{}).Collect(Workspace{Roots: []Root{{Name: "/ws", FS: os.DirFS(dir)}}})
	}},
	{"watched Reader", func(t *testing.T, dir string) ([]File, error) {
		r := &Reader{}
		t.Cleanup(r.Close)
		ws := Workspace{Roots: []Root{{Name: "/ws", FS: os.DirFS(dir), Dir: dir}}}
		if _, err := r.Collect(ws); err != nil {
			return nil, err
		}
		return r.Collect(ws) // the second one is served by the watches where they hold
	}},
}

// collectWithin collects dir each way under the hang guard and loads the result.
func collectWithin(t *testing.T, dir string, check func(t *testing.T, rs *RuleSet)) {
	for _, way := range collectWays {
		t.Run(way.name, func(t *testing.T) {
			var files []File
			var err error
			within(t, way.name, func() { files, err = way.run(t, dir) })
			if err != nil {
				t.Fatal(err)
			}
			check(t, Load(files))
		})
	}
}

// Named pipes where rule files are looked for (a rules folder, a single-file source, the
// AGENTS.md search) and a link to a device are skipped with a diagnostic, and the rest is read.
func TestCollectSkipsNamedPipesAndDevices(t *testing.T) {
	dir := oldTree(t, map[string]string{".clinerules/a.md": "Always A.\n", "apps/web/AGENTS.md": "Web.\n"})
	mkfifo(t, filepath.Join(dir, ".clinerules/x.md"))
	mkfifo(t, filepath.Join(dir, ".cursorrules"))
	mkfifo(t, filepath.Join(dir, "AGENTS.md"))
	skipped := []string{"/ws/.clinerules/x.md", "/ws/.cursorrules", "/ws/AGENTS.md"}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if err := os.Symlink("/dev/zero", filepath.Join(dir, ".clinerules/zero.md")); err != nil {
			t.Fatal(err)
		}
		skipped = append(skipped, "/ws/.clinerules/zero.md")
	}
	collectWithin(t, dir, func(t *testing.T, rs *RuleSet) {
		if got, want := ruleIDs(rs), "agents:/ws/apps/web/AGENTS.md cline:/ws/.clinerules/a.md"; got != want {
			t.Errorf("rules %q, want %q", got, want)
		}
		for _, f := range skipped {
			d, ok := diagFor(rs, DiagNotRegular, f)
			if !ok {
				t.Errorf("no %s diagnostic for %s: %v", DiagNotRegular, f, rs.Diagnostics())
				continue
			}
			if d.Severity != SeverityWarning || !strings.Contains(d.Message, "not a regular file") {
				t.Errorf("diagnostic %v", d)
			}
		}
	})
}

// A rule file swapped for a named pipe between the check of its type and its open must not
// block the open either: the open itself does not wait, and what it opened is checked again.
func TestOpenRegularDoesNotBlockOnANamedPipe(t *testing.T) {
	dir := t.TempDir()
	mkfifo(t, filepath.Join(dir, "x.md"))
	fsys := os.DirFS(dir)
	var err error
	within(t, "openRegular", func() {
		var fh interface{ Close() error }
		if fh, _, err = openRegular(fsys, "x.md", nil); fh != nil {
			fh.Close()
		}
	})
	if !errors.Is(err, errNotRegular) {
		t.Errorf("openRegular of a named pipe: %v, want %v", err, errNotRegular)
	}
	within(t, "listDir", func() { _, err = listDir(fsys, "x.md", nil) })
	if err == nil {
		t.Error("listDir of a named pipe: no error")
	}
	var f File
	within(t, "readFile", func() { f = readFile(fsys, File{Path: "x.md"}, nil) })
	if !strings.HasPrefix(f.ReadError, DiagNotRegular+":") {
		t.Errorf("readFile of a named pipe: %+v", f)
	}
}

// Links to their own folder, to an ancestor and to a sibling are each followed at most once per
// real folder, a folder's real subfolders before its links; the loops are reported.
func TestCollectSelfLinks(t *testing.T) {
	dir := oldTree(t, map[string]string{
		".clinerules/z.md":         "Always Z.\n", // after the links: a walk that follows them never gets here
		".clinerules/sub/b.md":     "Always B.\n",
		".cursor/rules/shared.mdc": "Shared.\n",
	})
	link := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Skip("symlinks unsupported:", err)
		}
	}
	for i := range 5 {
		link(".", filepath.Join(".clinerules", "self"+string(rune('1'+i))))
	}
	link("..", ".clinerules/sub/up")
	link("sub", ".clinerules/again")
	link("../../.clinerules", ".cursor/rules/cline") // another provider's walk reads it once itself
	collectWithin(t, dir, func(t *testing.T, rs *RuleSet) {
		want := "cline:/ws/.clinerules/sub/b.md cline:/ws/.clinerules/z.md cursor:/ws/.cursor/rules/cline/sub/b.md " +
			"cursor:/ws/.cursor/rules/cline/z.md cursor:/ws/.cursor/rules/shared.mdc"
		if got := ruleIDs(rs); got != want {
			t.Errorf("rules\n%s\nwant\n%s", got, want)
		}
		for _, tc := range []struct{ file, says string }{
			{"/ws/.clinerules/self1", "a loop"},
			{"/ws/.clinerules/self5", "a loop"},
			{"/ws/.clinerules/sub/up", "a loop"},
			{"/ws/.clinerules/again", "already read"},
			{"/ws/.cursor/rules/cline/self1", "a loop"},
		} {
			if d, ok := diagFor(rs, DiagLinkLoop, tc.file); !ok || !strings.Contains(d.Message, tc.says) {
				t.Errorf("%s: want a %s diagnostic saying %q; got %v", tc.file, DiagLinkLoop, tc.says, rs.Diagnostics())
			}
		}
	})
}

// A rule file that cannot be read is reported and the rest is read.
func TestCollectUnreadableFileAmongOthers(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every file; TestCollectPermissionDenied covers this through an fs.FS")
	}
	dir := oldTree(t, map[string]string{".clinerules/a.md": "A.\n", ".clinerules/secret.md": "S.\n",
		".clinerules/locked/c.md": "C.\n", ".clinerules/z.md": "Z.\n"})
	for _, p := range []string{".clinerules/secret.md", ".clinerules/locked"} {
		if err := os.Chmod(filepath.Join(dir, p), 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(filepath.Join(dir, p), 0o755) })
	}
	collectWithin(t, dir, func(t *testing.T, rs *RuleSet) {
		checkDenied(t, rs)
	})
}
