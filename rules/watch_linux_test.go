//go:build linux

package rules

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// countingFS counts every call that reaches the file system.
type countingFS struct {
	fs    fs.FS
	calls atomic.Int64
}

func (c *countingFS) Open(name string) (fs.File, error) { c.calls.Add(1); return c.fs.Open(name) }
func (c *countingFS) Stat(name string) (fs.FileInfo, error) {
	c.calls.Add(1)
	return fs.Stat(c.fs, name)
}
func (c *countingFS) ReadDir(name string) ([]fs.DirEntry, error) {
	c.calls.Add(1)
	return fs.ReadDir(c.fs, name)
}

func TestReaderWatchesARoot(t *testing.T) {
	tree := map[string]string{
		".clinerules/general.md":   "Be brief.\n",
		".clinerules/web.md":       "---\npaths: [\"apps/web/**\"]\n---\nUse the design system.\n",
		".github/README.md":        "not a rule\n",
		".cursor/mcp.json":         "{}\n",
		"AGENTS.md":                "Run the tests.\n",
		"apps/api/AGENTS.md":       "The API is Go.\n",
		"apps/web/src/App.tsx":     "export {}\n",
		"node_modules/x/AGENTS.md": "a dependency's\n",
	}
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		// looks says whether the second collection must touch the file system.
		looks bool
	}{
		{"nothing changed", func(*testing.T, string) {}, false},
		{"a source file written", func(t *testing.T, dir string) { write(t, dir, "apps/web/src/App.tsx", "export const x = 1\n") }, false},
		{"a source file added", func(t *testing.T, dir string) { write(t, dir, "apps/web/src/Nav.tsx", "export {}\n") }, false},
		{"inside a skipped folder", func(t *testing.T, dir string) { write(t, dir, "node_modules/x/AGENTS.md", "changed\n") }, false},
		{"a rule edited", func(t *testing.T, dir string) { write(t, dir, ".clinerules/web.md", "Edited.\n") }, true},
		{"a rule added", func(t *testing.T, dir string) { write(t, dir, ".clinerules/new.md", "New.\n") }, true},
		{"a rule removed", func(t *testing.T, dir string) { remove(t, dir, ".clinerules/general.md") }, true},
		{"a rule in a new subfolder", func(t *testing.T, dir string) { write(t, dir, ".clinerules/sub/deep.md", "Deep.\n") }, true},
		{"a nested AGENTS.md edited", func(t *testing.T, dir string) { write(t, dir, "apps/api/AGENTS.md", "Edited.\n") }, true},
		{"a nested AGENTS.md added", func(t *testing.T, dir string) { write(t, dir, "apps/web/src/CLAUDE.md", "New.\n") }, true},
		{"a Cursor rules folder appears", func(t *testing.T, dir string) { write(t, dir, ".cursor/rules/ts.mdc", "TS.\n") }, true},
		{"Copilot instructions appear", func(t *testing.T, dir string) {
			write(t, dir, ".github/copilot-instructions.md", "Be kind.\n")
		}, true},
		{"a legacy rules file appears", func(t *testing.T, dir string) { write(t, dir, ".windsurfrules", "Old.\n") }, true},
		{"the rules folder replaced by a file", func(t *testing.T, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, ".clinerules")); err != nil {
				t.Fatal(err)
			}
			write(t, dir, ".clinerules", "One file.\n")
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := oldTree(t, tree)
			cfs := &countingFS{fs: os.DirFS(dir)}
			ws := Workspace{Roots: []Root{{Name: "/ws", FS: cfs, Dir: dir}}}
			r := &Reader{}
			defer r.Close()
			if _, err := r.Collect(ws); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Collect(ws); err != nil {
				t.Fatal(err)
			}
			before := cfs.calls.Load()
			if _, err := r.Collect(ws); err != nil || cfs.calls.Load() != before {
				t.Fatalf("an unchanged watched root was looked at (%d calls), %v", cfs.calls.Load()-before, err)
			}
			tt.change(t, dir)
			before = cfs.calls.Load()
			got, err := r.Collect(ws)
			if err != nil {
				t.Fatal(err)
			}
			if looked := cfs.calls.Load() != before; looked != tt.looks {
				t.Errorf("looked at the file system: %v, want %v", looked, tt.looks)
			}
			want, err := Collect(Workspace{Roots: []Root{{Name: "/ws", FS: os.DirFS(dir)}}})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("watched reader collected\n%+v\nCollect reads\n%+v", got, want)
			}
			// And the change is now the baseline: nothing more to look at.
			before = cfs.calls.Load()
			if _, err := r.Collect(ws); err != nil || cfs.calls.Load() != before {
				t.Errorf("after the change was collected, the root was looked at again (%d calls), %v", cfs.calls.Load()-before, err)
			}
		})
	}
}

func remove(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
		t.Fatal(err)
	}
}

// TestReaderGivesUpWatchingABigRoot: a root whose search stops at its limit is collected in
// full each time, as without watches, and never watched again.
func TestReaderGivesUpWatchingABigRoot(t *testing.T) {
	tree := map[string]string{".clinerules/a.md": "A.\n"}
	for i := range MaxWalkEntries + 10 {
		tree[fmt.Sprintf("src/f%05d.ts", i)] = ""
	}
	dir := oldTree(t, tree)
	cfs := &countingFS{fs: os.DirFS(dir)}
	ws := Workspace{Roots: []Root{{Name: "/ws", FS: cfs, Dir: dir}}}
	r := &Reader{}
	defer r.Close()
	for range 2 {
		if _, err := r.Collect(ws); err != nil {
			t.Fatal(err)
		}
	}
	if rw := r.roots["/ws"]; rw == nil || rw.w != nil {
		t.Fatalf("the root is still watched: %+v", rw)
	}
	write(t, dir, ".clinerules/b.md", "B.\n")
	before := cfs.calls.Load()
	files, err := r.Collect(ws)
	if err != nil || cfs.calls.Load() == before || len(files) < 2 {
		t.Errorf("the big root was not collected again: %d files, %v", len(files), err)
	}
}

// Only file systems whose changes all go through this kernel are watched; a network, FUSE or
// host-shared one is checked file by file, since inotify does not see what another machine
// writes there.
func TestLocalFS(t *testing.T) {
	for _, tt := range []struct {
		name  string
		magic int64
		local bool
	}{
		{"ext4", 0xEF53, true},
		{"xfs", 0x58465342, true},
		{"btrfs", 0x9123683E, true},
		{"tmpfs", 0x01021994, true},
		{"overlayfs", 0x794C7630, true},
		{"nfs", 0x6969, false},
		{"smb2", 0xFE534D42, false},
		{"cifs", 0xFF534D42, false},
		{"fuse", 0x65735546, false},
		{"9p", 0x01021997, false},
		{"unknown", 0x12345678, false},
	} {
		if got := localFS(tt.magic); got != tt.local {
			t.Errorf("localFS(%s) = %v, want %v", tt.name, got, tt.local)
		}
	}
	var st syscall.Statfs_t
	dir := t.TempDir()
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	w, err := newWatcher(dir)
	if localFS(int64(st.Type)) != (err == nil) {
		t.Errorf("newWatcher on a file system of type %#x: %v", st.Type, err)
	}
	if err == nil {
		w.close()
	} else if !errors.Is(err, errNotLocal) {
		t.Errorf("newWatcher: %v, want errNotLocal", err)
	}
}

// sameFolder tells a watched root's folder from another put at its path, and checks it, at every
// collection, without an allocation on linux/amd64 and arm64.
func TestSameFolder(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "ws")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(root)
	if err != nil {
		t.Fatal(err)
	}
	if !sameFolder(root, info) {
		t.Fatal("the folder is not the one it was")
	}
	// Where the look-up without an allocation exists (folderIs takes the path), the check
	// makes none; elsewhere it falls back to os.Stat.
	if _, done := folderIs(root, info); done {
		if n := testing.AllocsPerRun(100, func() { sameFolder(root, info) }); n != 0 {
			t.Errorf("the check allocates %v times", n)
		}
	}
	if err := os.Rename(root, root+".old"); err != nil {
		t.Fatal(err)
	}
	if sameFolder(root, info) {
		t.Error("a folder that is gone is the same")
	}
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if sameFolder(root, info) {
		t.Error("another folder put at its path is the same")
	}
	long := root + strings.Repeat("/.", 300) // longer than statAt takes
	if !sameFolder(long, mustStat(t, root)) {
		t.Error("a long path to the new folder is not the same")
	}
}

func mustStat(t *testing.T, p string) os.FileInfo {
	t.Helper()
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return info
}
