//go:build linux

package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"time"
)

// keepTimes runs change and sets the modification times of the given files and folders of dir
// back to what they were: what a tool that restores times does, and what an edit within the
// same clock tick as the last read looks like.
func keepTimes(t *testing.T, dir string, change func(), paths ...string) {
	t.Helper()
	times := map[string]time.Time{}
	for _, p := range paths {
		info, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		times[p] = info.ModTime()
	}
	change()
	for _, p := range paths {
		if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(p)), times[p], times[p]); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReaderSeesEveryEdit checks that a Reader checking a rules folder file by file collects
// after each kind of edit what Collect reads, in a folder of a few files and in one of more than
// parallelStats, even when the edit keeps sizes and restores modification times.
func TestReaderSeesEveryEdit(t *testing.T) {
	const body = "---\npaths: [\"src/m%d/**\"]\n---\nRule %d.\n"
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		link   bool // the edit is of .clinerules/shared.md, a link to shared/a.md
	}{
		{"edited in place, same size and time", func(t *testing.T, dir string) {
			keepTimes(t, dir, func() { write(t, dir, ".clinerules/r0003.md", fmt.Sprintf(body, 9, 9)) }, ".clinerules/r0003.md")
		}, false},
		{"replaced by rename, same size and time", func(t *testing.T, dir string) {
			keepTimes(t, dir, func() {
				write(t, dir, "tmp.md", fmt.Sprintf(body, 8, 8))
				if err := os.Rename(filepath.Join(dir, "tmp.md"), filepath.Join(dir, ".clinerules/r0004.md")); err != nil {
					t.Fatal(err)
				}
			}, ".clinerules/r0004.md", ".clinerules", ".")
		}, false},
		{"deleted", func(t *testing.T, dir string) {
			keepTimes(t, dir, func() {
				if err := os.Remove(filepath.Join(dir, ".clinerules/r0005.md")); err != nil {
					t.Fatal(err)
				}
			}, ".clinerules")
		}, false},
		{"replaced by a named pipe", func(t *testing.T, dir string) {
			keepTimes(t, dir, func() {
				p := filepath.Join(dir, ".clinerules/r0002.md")
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				if err := syscall.Mkfifo(p, 0o644); err != nil {
					t.Fatal(err)
				}
			}, ".clinerules")
		}, false},
		{"new file in the folder", func(t *testing.T, dir string) {
			keepTimes(t, dir, func() { write(t, dir, ".clinerules/new.md", "New.\n") }, ".clinerules")
		}, false},
		{"new sub-folder", func(t *testing.T, dir string) {
			keepTimes(t, dir, func() { write(t, dir, ".clinerules/api/new.md", "New.\n") }, ".clinerules")
		}, false},
		{"new file in a sub-folder", func(t *testing.T, dir string) {
			keepTimes(t, dir, func() { write(t, dir, ".clinerules/web/new.md", "New.\n") }, ".clinerules/web")
		}, false},
		{"file in a sub-folder edited in place", func(t *testing.T, dir string) {
			keepTimes(t, dir, func() { write(t, dir, ".clinerules/web/ui.md", "UI too.\n") }, ".clinerules/web/ui.md")
		}, false},
		{"symlink pointed elsewhere", func(t *testing.T, dir string) {
			keepTimes(t, dir, func() {
				link := filepath.Join(dir, ".clinerules/shared.md")
				if err := os.Remove(link); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("../shared/b.md", link); err != nil {
					t.Fatal(err)
				}
			}, ".clinerules")
		}, true},
		{"symlink's target edited in place", func(t *testing.T, dir string) {
			keepTimes(t, dir, func() { write(t, dir, "shared/a.md", "Shared B.\n") }, "shared/a.md")
		}, true},
	}
	for _, n := range []int{6, parallelStats + 10} {
		for _, withLink := range []bool{false, true} {
			for _, tt := range tests {
				if tt.link && !withLink {
					continue
				}
				t.Run(fmt.Sprintf("%d files/link %v/%s", n, withLink, tt.name), func(t *testing.T) {
					files := map[string]string{
						".clinerules/web/ui.md": "UI rules.\n",
						"shared/a.md":           "Shared A.\n",
						"shared/b.md":           "Shared B.\n",
					}
					for i := range n {
						files[fmt.Sprintf(".clinerules/r%04d.md", i)] = fmt.Sprintf(body, i, i)
					}
					dir := oldTree(t, files)
					if withLink {
						if err := os.Symlink("../shared/a.md", filepath.Join(dir, ".clinerules/shared.md")); err != nil {
							t.Fatal(err)
						}
					}
					backdate(t, dir, time.Hour)
					ws := Workspace{Roots: []Root{{Name: "/ws", FS: os.DirFS(dir)}}}
					r := &Reader{}
					var before []File
					for range 2 { // the second from memory
						got, err := r.Collect(ws)
						if err != nil {
							t.Fatal(err)
						}
						before = got
					}
					kept := deepCopyFiles(before)
					// A walk that met no link is remembered, and the next one is its memory's.
					key := walkKey(ScopeWorkspace, "/ws", source{provider: ProviderCline, dir: ".clinerules"})
					if _, ok := r.walks[key]; ok == withLink {
						t.Fatalf("walk of .clinerules remembered: %v, want %v", ok, !withLink)
					}
					tt.change(t, dir)
					got, err := r.Collect(ws)
					if err != nil {
						t.Fatal(err)
					}
					want, err := Collect(ws)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("the reader missed the edit:\n%s", diffFiles(got, want))
					}
					// What the reader returned before the edit is the caller's still.
					if !reflect.DeepEqual(before, kept) {
						t.Errorf("the files returned before the edit changed:\n%s", diffFiles(before, kept))
					}
				})
			}
		}
	}
}

// TestReaderReadsAgainOnlyTheEdit checks that a Reader checking a large rules folder from the
// memory of its last walk reads again exactly the files edited, after an edit in place, a new
// file and a rename, and collects what Collect reads each time.
func TestReaderReadsAgainOnlyTheEdit(t *testing.T) {
	files := map[string]string{}
	for i := range parallelStats + 40 {
		files[fmt.Sprintf(".clinerules/r%04d.md", i)] = fmt.Sprintf("Rule %d.\n", i)
	}
	dir := oldTree(t, files)
	ws := Workspace{Roots: []Root{{Name: "/ws", FS: os.DirFS(dir)}}}
	// Reads are stamped an hour late, so that an edit just made lies outside the racy window.
	r := &Reader{Now: func() time.Time { return time.Now().Add(time.Hour) }}
	steps := []struct {
		name   string
		change func()
		reads  int
	}{
		{"first collection", func() {}, len(files)},
		{"nothing changed", func() {}, 0},
		{"nothing changed again", func() {}, 0},
		{"one file edited", func() { write(t, dir, ".clinerules/r0003.md", "Edited, and longer.\n") }, 1},
		{"nothing changed after the edit", func() {}, 0},
		{"a new file", func() { write(t, dir, ".clinerules/new.md", "New.\n") }, 1},
		{"a file renamed", func() {
			if err := os.Rename(filepath.Join(dir, ".clinerules/r0007.md"), filepath.Join(dir, ".clinerules/renamed.md")); err != nil {
				t.Fatal(err)
			}
		}, 1},
		{"nothing changed at last", func() {}, 0},
	}
	for _, st := range steps {
		st.change()
		before := r.FilesRead()
		got, err := r.Collect(ws)
		if err != nil {
			t.Fatal(err)
		}
		if reads := r.FilesRead() - before; reads != st.reads {
			t.Errorf("%s: read %d files, want %d", st.name, reads, st.reads)
		}
		want, err := Collect(ws)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the reader collected otherwise than Collect:\n%s", st.name, diffFiles(got, want))
		}
	}
}
