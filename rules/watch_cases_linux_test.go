//go:build linux

package rules

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"syscall"
	"testing"
)

// check compares a watched collection with a full Collect of the same folder now.
func check(t *testing.T, r *Reader, ws Workspace, dir string) {
	t.Helper()
	got, err := r.Collect(ws)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Collect(Workspace{Roots: []Root{{Name: ws.Roots[0].Name, FS: os.DirFS(dir)}}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("watched reader collected\n%s\nCollect reads\n%s", summary(got), summary(want))
	}
}

func summary(fs []File) string {
	s := ""
	for _, f := range fs {
		s += fmt.Sprintf("  %s %q err=%q\n", f.Path, f.Content, f.ReadError)
	}
	return s
}

func watchedWS(dir string) Workspace {
	return Workspace{Roots: []Root{{Name: "/ws", FS: os.DirFS(dir), Dir: dir}}}
}

// watching collects a folder root with a new Reader twice, so that its watches are set up
// and trusted; the Reader is closed when the test ends.
func watching(t *testing.T, dir string) (*Reader, Workspace) {
	t.Helper()
	r := &Reader{}
	t.Cleanup(r.Close)
	ws := watchedWS(dir)
	collectN(t, r, ws, 2)
	return r, ws
}

func collectN(t *testing.T, r *Reader, ws Workspace, n int) {
	t.Helper()
	for range n {
		if _, err := r.Collect(ws); err != nil {
			t.Fatal(err)
		}
	}
}

// A linked rule file whose target lies outside the watched folders is edited.
func TestWatchSymlinkTargetEdited(t *testing.T) {
	dir := oldTree(t, map[string]string{"docs/shared.md": "Old shared.\n", ".clinerules/a.md": "A.\n"})
	if err := os.Symlink("../docs/shared.md", filepath.Join(dir, ".clinerules/shared.md")); err != nil {
		t.Fatal(err)
	}
	r, ws := watching(t, dir)
	write(t, dir, "docs/shared.md", "NEW shared.\n")
	check(t, r, ws, dir)
}

// A dangling symlink to a rules folder whose target then appears.
func TestWatchDanglingSymlinkTargetAppears(t *testing.T) {
	outside := t.TempDir()
	dir := oldTree(t, map[string]string{"AGENTS.md": "x\n"})
	if err := os.Symlink(filepath.Join(outside, "rules"), filepath.Join(dir, ".clinerules")); err != nil {
		t.Fatal(err)
	}
	r, ws := watching(t, dir)
	write(t, outside, "rules/a.md", "Appeared.\n")
	check(t, r, ws, dir)
}

// A plain file added makes the AGENTS.md search reach MaxWalkEntries.
func TestWatchWalkLimitCrossedByPlainFile(t *testing.T) {
	tree := map[string]string{".clinerules/a.md": "A.\n"}
	// entries: "a.md" in the rules folder, ".clinerules" and "src" at the root, then the files of
	// src.
	for i := range MaxWalkEntries - 3 {
		tree[fmt.Sprintf("src/f%05d.ts", i)] = ""
	}
	dir := oldTree(t, tree)
	r, ws := watching(t, dir)
	if rw := r.roots["/ws"]; rw == nil || rw.w == nil {
		t.Fatal("precondition: root should be watched")
	}
	write(t, dir, "src/zz-new.ts", "")
	check(t, r, ws, dir)
}

// After a change was reported, the next watcher cannot be made (the process used up its inotify
// instances): that collection and the ones after it still see the change.
func TestWatchNewWatcherFailsAfterChange(t *testing.T) {
	dir := oldTree(t, map[string]string{".clinerules/a.md": "One.\n"})
	r, ws := watching(t, dir)
	write(t, dir, ".clinerules/a.md", "Two.\n")
	// No watcher to be had, as for a process that used up its inotify instances.
	openWatcher = func(string) (*watcher, error) { return nil, syscall.EMFILE }
	defer func() { openWatcher = newWatcher }()
	check(t, r, ws, dir) // no watcher to be had: collected in full
	openWatcher = newWatcher
	check(t, r, ws, dir) // watchers to be had again
}

// Two collections of one root, as two concurrent ones interleave: the first sees the change
// and has not yet remembered its result when the second starts; the second sees it too.
func TestWatchInterleavedCollectionsSeeTheChange(t *testing.T) {
	dir := oldTree(t, map[string]string{".clinerules/a.md": "One.\n"})
	r, ws := watching(t, dir)
	write(t, dir, ".clinerules/a.md", "Two.\n")
	// the first collection checks the root ...
	if _, ok := r.unchanged(ws.Roots[0], ws.maxFiles()); ok {
		t.Fatal("the first collection should see the change")
	}
	// ... and the second collects before the first remembers its result.
	check(t, r, ws, dir)
}

// The same with concurrent collections after each edit.
func TestWatchConcurrentCollectionsSeeEveryEdit(t *testing.T) {
	dir := oldTree(t, map[string]string{".clinerules/a.md": "v0000\n"})
	r, ws := watching(t, dir)
	stale := 0
	for i := 1; i <= 300; i++ {
		want := fmt.Sprintf("v%04d\n", i)
		write(t, dir, ".clinerules/a.md", want)
		var wg sync.WaitGroup
		var mu sync.Mutex
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				files, _ := r.Collect(ws)
				if len(files) != 1 || string(files[0].Content) != want {
					mu.Lock()
					stale++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}
	if stale > 0 {
		t.Errorf("%d collections started after an edit returned the content of before it", stale)
	}
}

// An entry added to a rules folder at the moment the collector looks at the folder's time:
// it is seen, by this collection or the next.
type hookFS struct {
	fs.FS
	onStat func(name string)
}

func (h *hookFS) Stat(name string) (fs.FileInfo, error) {
	info, err := fs.Stat(h.FS, name)
	if h.onStat != nil {
		h.onStat(name)
	}
	return info, err
}

func TestWatchAddBetweenStatAndArm(t *testing.T) {
	dir := oldTree(t, map[string]string{".clinerules/a.md": "A.\n", "AGENTS.md": "x\n"})
	h := &hookFS{FS: os.DirFS(dir)}
	ws := Workspace{Roots: []Root{{Name: "/ws", FS: h, Dir: dir}}}
	r := &Reader{}
	defer r.Close()
	collectN(t, r, ws, 2)
	write(t, dir, "AGENTS.md", "y\n") // some change: the next collection is a full one
	fired := false
	h.onStat = func(name string) {
		if name == ".clinerules" && !fired {
			fired = true
			write(t, dir, ".clinerules/b.md", "B.\n") // another process, at that moment
		}
	}
	collectN(t, r, ws, 1)
	h.onStat = nil
	check(t, r, ws, dir)
}

// The root folder is removed, collected while absent, and created again.
func TestWatchRootRecreated(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "ws")
	write(t, dir, ".clinerules/a.md", "A.\n")
	r, ws := watching(t, dir)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	check(t, r, ws, dir) // empty, fine
	write(t, dir, ".clinerules/a.md", "Back.\n")
	check(t, r, ws, dir)
}

// Root.Dir reached through a symlink that is re-pointed (a "current" release link).
func TestWatchRootSymlinkRepointed(t *testing.T) {
	parent := t.TempDir()
	write(t, parent, "a/.clinerules/r.md", "Release A.\n")
	write(t, parent, "b/.clinerules/r.md", "Release B.\n")
	cur := filepath.Join(parent, "current")
	if err := os.Symlink("a", cur); err != nil {
		t.Fatal(err)
	}
	r := &Reader{}
	defer r.Close()
	ws := watchedWS(cur)
	collectN(t, r, ws, 2)
	if err := os.Symlink("b", cur+".tmp"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(cur+".tmp", cur); err != nil {
		t.Fatal(err)
	}
	check(t, r, ws, cur)
}

// An ancestor of Root.Dir is renamed and another tree put in its place.
func TestWatchAncestorRenamed(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "proj", "ws")
	write(t, dir, ".clinerules/r.md", "Old.\n")
	r, ws := watching(t, dir)
	if err := os.Rename(filepath.Join(parent, "proj"), filepath.Join(parent, "proj.old")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, ".clinerules/r.md", "New.\n")
	check(t, r, ws, dir)
}

// Two paths to one folder (a symbolic link) share one inotify watch: an edit through either
// path is seen.
func TestWatchSharedWatchDescriptor(t *testing.T) {
	dir := oldTree(t, map[string]string{"shared/copilot-instructions.md": "Old.\n"})
	if err := os.Symlink("shared", filepath.Join(dir, ".github")); err != nil {
		t.Fatal(err)
	}
	r, ws := watching(t, dir)
	write(t, dir, ".github/copilot-instructions.md", "New.\n")
	check(t, r, ws, dir)
}

// TestWatchMovesRenamesAndPermissions moves, renames and locks folders and files of a watched
// root: every collection equals a fresh Collect.
func TestWatchMovesRenamesAndPermissions(t *testing.T) {
	base := map[string]string{
		".clinerules/a.md":   "A.\n",
		"AGENTS.md":          "Root.\n",
		"apps/api/AGENTS.md": "API.\n",
		"apps/web/x.ts":      "",
		".github/README.md":  "",
		".cursorrules":       "Legacy.\n",
	}
	mv := func(t *testing.T, a, b string) {
		if err := os.Rename(a, b); err != nil {
			t.Fatal(err)
		}
	}
	outside := t.TempDir()
	cases := map[string]func(t *testing.T, dir string){
		"rules file becomes folder again": func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, ".cursorrules"))
			write(t, dir, ".cursorrules/x.md", "x")
		},
		"rules folder moved out": func(t *testing.T, dir string) {
			mv(t, filepath.Join(dir, ".clinerules"), filepath.Join(outside, "cr1"))
		},
		"rules folder moved in": func(t *testing.T, dir string) {
			write(t, outside, "cr2/z.md", "Z.\n")
			mv(t, filepath.Join(outside, "cr2"), filepath.Join(dir, ".cursor"))
			os.MkdirAll(filepath.Join(dir, ".cursor"), 0o755)
		},
		"cursor rules folder moved in under .cursor": func(t *testing.T, dir string) {
			os.MkdirAll(filepath.Join(dir, ".cursor"), 0o755)
			write(t, outside, "cr3/z.mdc", "Z.\n")
			mv(t, filepath.Join(outside, "cr3"), filepath.Join(dir, ".cursor/rules"))
		},
		"AGENTS.md renamed in": func(t *testing.T, dir string) {
			write(t, dir, "apps/web/tmp", "W.\n")
			mv(t, filepath.Join(dir, "apps/web/tmp"), filepath.Join(dir, "apps/web/AGENTS.md"))
		},
		"folder with AGENTS.md moved in": func(t *testing.T, dir string) {
			write(t, outside, "pkg/AGENTS.md", "P.\n")
			mv(t, filepath.Join(outside, "pkg"), filepath.Join(dir, "apps/pkg"))
		},
		"folder moved within":         func(t *testing.T, dir string) { mv(t, filepath.Join(dir, "apps/api"), filepath.Join(dir, "apps/api2")) },
		"nested folder created deep":  func(t *testing.T, dir string) { write(t, dir, "apps/web/a/b/c/CLAUDE.md", "C.\n") },
		"copilot instructions folder": func(t *testing.T, dir string) { write(t, dir, ".github/instructions/go.instructions.md", "G.\n") },
		"claude CLAUDE.md":            func(t *testing.T, dir string) { write(t, dir, ".claude/CLAUDE.md", "C.\n") },
		"apps chmod 000":              func(t *testing.T, dir string) { os.Chmod(filepath.Join(dir, "apps/api"), 0) },
		"root moved away":             func(t *testing.T, dir string) { mv(t, dir, dir+".gone") },
		"symlinked rules dir target edited": func(t *testing.T, dir string) {
			// the link is made below; edit its target
			write(t, outside, "shared/new.md", "S.\n")
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			dir := oldTree(t, base)
			if name == "symlinked rules dir target edited" {
				os.MkdirAll(filepath.Join(outside, "shared"), 0o755)
				os.Symlink(filepath.Join(outside, "shared"), filepath.Join(dir, ".clinerules/shared"))
			}
			r := &Reader{}
			defer r.Close()
			ws := watchedWS(dir)
			collectN(t, r, ws, 2)
			change(t, dir)
			check(t, r, ws, dir)
			check(t, r, ws, dir)
			os.Chmod(filepath.Join(dir, "apps/api"), 0o755)
		})
	}
}
