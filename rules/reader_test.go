package rules

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"testing/fstest"
	"time"
)

// oldTree writes files into a new folder and dates every file and folder an hour back, as rule
// files that were not just edited are.
func oldTree(t testing.TB, files map[string]string) string {
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
	backdate(t, dir, time.Hour)
	return dir
}

// backdate sets the modification time of everything under dir to ago before now.
func backdate(t testing.TB, dir string, ago time.Duration) {
	t.Helper()
	at := time.Now().Add(-ago)
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, at, at)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestReaderReadsOnlyWhatChanged(t *testing.T) {
	rules := map[string]string{
		".clinerules/general.md": "Be brief.\n",
		".clinerules/web.md":     "---\npaths: [\"apps/web/**\"]\n---\nUse the design system.\n",
		"AGENTS.md":              "Run the tests.\n",
		"apps/api/AGENTS.md":     "The API is Go.\n",
	}
	tests := []struct {
		name string
		// change edits the tree after the first collection.
		change func(t *testing.T, dir string)
		// reads is how many files the second collection reads from disk.
		reads int
	}{
		{"nothing changed", func(*testing.T, string) {}, 0},
		{"one file edited", func(t *testing.T, dir string) {
			write(t, dir, ".clinerules/web.md", "---\npaths: [\"apps/web/**\", \"packages/ui/**\"]\n---\nUse it.\n")
		}, 1},
		{"same size, new time", func(t *testing.T, dir string) {
			write(t, dir, ".clinerules/general.md", "Be terse.\n")
		}, 1},
		{"file added", func(t *testing.T, dir string) {
			write(t, dir, ".clinerules/new.md", "New.\n")
		}, 1},
		{"file removed", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, ".clinerules/web.md")); err != nil {
				t.Fatal(err)
			}
		}, 0},
		{"nested AGENTS.md added", func(t *testing.T, dir string) {
			write(t, dir, "apps/web/AGENTS.md", "The web app is React.\n")
		}, 1},
		{"everything just edited", func(t *testing.T, dir string) {
			backdate(t, dir, 0) // inside the racy window: sizes and times prove nothing
		}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := oldTree(t, rules)
			ws := Workspace{Roots: []Root{{Name: "/ws", FS: os.DirFS(dir)}}}
			r := &Reader{}
			if _, err := r.Collect(ws); err != nil {
				t.Fatal(err)
			}
			if got := r.FilesRead(); got != len(rules) {
				t.Fatalf("first collection read %d files, want %d", got, len(rules))
			}
			tt.change(t, dir)
			got, err := r.Collect(ws)
			if err != nil {
				t.Fatal(err)
			}
			if reads := r.FilesRead() - len(rules); reads != tt.reads {
				t.Errorf("second collection read %d files, want %d", reads, tt.reads)
			}
			want, err := Collect(ws)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("reader collected\n%+v\nCollect reads\n%+v", got, want)
			}
		})
	}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReaderWithoutTimes reads a file system that reports no modification times in full each
// time, and sees an edit.
func TestReaderWithoutTimes(t *testing.T) {
	fsys := fstest.MapFS{".clinerules/a.md": {Data: []byte("one")}}
	ws := Workspace{Roots: []Root{{Name: "/ws", FS: fsys}}}
	r := &Reader{}
	for range 3 {
		if _, err := r.Collect(ws); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.FilesRead(); got != 3 {
		t.Errorf("read %d times, want 3", got)
	}
	fsys[".clinerules/a.md"] = &fstest.MapFile{Data: []byte("two")}
	files, err := r.Collect(ws)
	if err != nil {
		t.Fatal(err)
	}
	if string(files[0].Content) != "two" || files[0].Digest != Digest([]byte("two")) {
		t.Errorf("got %q (digest %s), want the edit", files[0].Content, files[0].Digest)
	}
}

// TestReaderRestoredTime checks a rewrite that keeps the size and sets the old modification
// time back: on Linux the file's change time shows it to a Reader; elsewhere it is the
// documented limit, not seen by a Reader and seen by Collect.
func TestReaderRestoredTime(t *testing.T) {
	dir := oldTree(t, map[string]string{".clinerules/a.md": "one"})
	p := filepath.Join(dir, ".clinerules/a.md")
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	ws := Workspace{Roots: []Root{{Name: "/ws", FS: os.DirFS(dir)}}}
	r := &Reader{}
	if _, err := r.Collect(ws); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	cached, err := r.Collect(ws)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := Collect(ws)
	if err != nil {
		t.Fatal(err)
	}
	want := "one"
	if runtime.GOOS == "linux" {
		want = "two"
	}
	if string(cached[0].Content) != want || string(fresh[0].Content) != "two" {
		t.Errorf("reader saw %q, Collect %q; want %s and two", cached[0].Content, fresh[0].Content, want)
	}
}

// TestReaderManyFiles checks a folder with more files than parallelStats, whose files are
// read and whose sizes and times are checked on every processor at once: the first collection
// is Collect's, and after edits, a file swapped for a folder and a
// removal, the reader reads again exactly the edited files and collects what Collect reads.
func TestReaderManyFiles(t *testing.T) {
	files := map[string]string{}
	for i := range parallelStats + 90 {
		files[fmt.Sprintf(".clinerules/r%04d.md", i)] = fmt.Sprintf("---\npaths: [\"src/m%d/**\"]\n---\nRule %d.\n", i, i)
	}
	dir := oldTree(t, files)
	ws := Workspace{Roots: []Root{{Name: "/ws", FS: os.DirFS(dir)}}}
	r := &Reader{}
	first, err := r.Collect(ws) // read on every processor at once
	if err != nil {
		t.Fatal(err)
	}
	if want, err := Collect(ws); err != nil || !reflect.DeepEqual(first, want) {
		t.Fatalf("first collection differs from Collect's (%v)", err)
	}
	if got := r.FilesRead(); got != len(files) {
		t.Errorf("first collection read %d files, want %d", got, len(files))
	}
	write(t, dir, ".clinerules/r0003.md", "Edited.\n")
	write(t, dir, ".clinerules/r0300.md", "Edited too, and longer.\n")
	if err := os.Remove(filepath.Join(dir, ".clinerules/r0100.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, ".clinerules/r0100.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, ".clinerules/r0200.md")); err != nil {
		t.Fatal(err)
	}
	before := r.FilesRead()
	got, err := r.Collect(ws)
	if err != nil {
		t.Fatal(err)
	}
	if reads := r.FilesRead() - before; reads != 2 {
		t.Errorf("second collection read %d files, want the 2 edited", reads)
	}
	want, err := Collect(ws)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reader collected %d files, Collect %d; they differ", len(got), len(want))
	}
	if len(got) != parallelStats+88 {
		t.Errorf("collected %d files, want %d", len(got), parallelStats+88)
	}
}

// deepCopyFiles copies files and their contents.
func deepCopyFiles(files []File) []File {
	out := slices.Clone(files)
	for i := range out {
		out[i].Content = bytes.Clone(out[i].Content)
	}
	return out
}

// A folder checked file by file whose files did not change gives the array it gave last time,
// and the collection's own array is the next one's to build in: no array is allocated for the
// files. An edit gives a new array and leaves the one given before as it was.
func TestReaderGivesTheSameFilesAgain(t *testing.T) {
	dir := oldTree(t, map[string]string{
		".clinerules/a.md": "A.\n",
		".clinerules/b.md": "---\npaths: [\"src/**\"]\n---\nB.\n",
	})
	backdate(t, dir, time.Hour)
	ws := Workspace{Roots: []Root{{Name: "/ws", FS: os.DirFS(dir)}}}
	r := &Reader{}
	first, err := r.Collect(ws)
	if err != nil {
		t.Fatal(err)
	}
	kept := deepCopyFiles(first)
	for range 3 {
		again, err := r.Collect(ws)
		if err != nil {
			t.Fatal(err)
		}
		if len(again) != len(first) || &again[0] != &first[0] {
			t.Fatalf("unchanged files came back in another array")
		}
	}
	// The array the collections build in is taken and given back, not made anew.
	r.mu.Lock()
	scratch := r.scratch
	r.mu.Unlock()
	if cap(scratch) < len(first) {
		t.Fatalf("after an unchanged collection the reader keeps an array of %d files to build in, want %d", cap(scratch), len(first))
	}
	if _, err := r.Collect(ws); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	same := cap(r.scratch) > 0 && &r.scratch[:1][0] == &scratch[:1][0]
	r.mu.Unlock()
	if !same {
		t.Fatal("an unchanged collection built in a new array rather than the one the last left")
	}
	write(t, dir, ".clinerules/a.md", "A, edited.\n")
	backdate(t, dir, time.Hour)
	edited, err := r.Collect(ws)
	if err != nil {
		t.Fatal(err)
	}
	if &edited[0] == &first[0] || string(edited[0].Content) != "A, edited.\n" {
		t.Fatalf("after an edit: %q in the first array: %v", edited[0].Content, &edited[0] == &first[0])
	}
	if !reflect.DeepEqual(first, kept) {
		t.Fatalf("the files given before the edit changed:\n%s", diffFiles(first, kept))
	}
}

// identicalFile compares every field of File: a file that differs from another in any one field
// is not identical to it.
func TestIdenticalFileKnowsEveryField(t *testing.T) {
	typ := reflect.TypeFor[File]()
	base := File{Provider: ProviderCline, Scope: ScopeWorkspace, Root: "/ws", Path: "a.md", Content: []byte("A"),
		AlwaysEnabled: false, Size: 1, ReadError: "", Digest: "d"}
	if !identicalFile(base, deepCopyFiles([]File{base})[0]) {
		t.Fatal("a copy is not identical")
	}
	for i := range typ.NumField() {
		other := deepCopyFiles([]File{base})[0]
		f := reflect.ValueOf(&other).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(f.String() + "x")
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.Int64:
			f.SetInt(f.Int() + 1)
		case reflect.Slice:
			f.SetBytes(append(f.Bytes(), 'x'))
		default:
			t.Fatalf("field %s of kind %s: teach identicalFile and this test about it", typ.Field(i).Name, f.Kind())
		}
		if identicalFile(base, other) {
			t.Errorf("files that differ in %s are identical", typ.Field(i).Name)
		}
	}
}

// diffFiles names the files two collections disagree on.
func diffFiles(got, want []File) string {
	byPath := func(files []File) map[string]File {
		m := map[string]File{}
		for _, f := range files {
			m[f.Path] = f
		}
		return m
	}
	g, w := byPath(got), byPath(want)
	var out string
	for p, wf := range w {
		if gf, ok := g[p]; !ok {
			out += fmt.Sprintf("  %s: missing, want %q\n", p, wf.Content)
		} else if !reflect.DeepEqual(gf, wf) {
			out += fmt.Sprintf("  %s: got %q, want %q\n", p, gf.Content, wf.Content)
		}
	}
	for p := range g {
		if _, ok := w[p]; !ok {
			out += fmt.Sprintf("  %s: collected, but gone\n", p)
		}
	}
	return out
}

// Collections on one reader run at once, of the workspace it is meant for and of another: each
// gets its workspace's files, and nothing a collection returned changes after (the race
// detector watches the arrays the collections share and hand back).
func TestReaderConcurrentCollections(t *testing.T) {
	mk := func(name string, files map[string]string, watched bool) Workspace {
		dir := oldTree(t, files)
		root := Root{Name: name, FS: os.DirFS(dir)}
		if watched {
			root.Dir = dir
		}
		return Workspace{Roots: []Root{root}}
	}
	for _, watched := range []bool{false, true} {
		t.Run(fmt.Sprintf("watched=%v", watched), func(t *testing.T) {
			spaces := []Workspace{
				mk("/a", map[string]string{".clinerules/a.md": "A.\n", ".clinerules/b.md": "---\npaths: [\"src/**\"]\n---\nB.\n"}, watched),
				mk("/b", map[string]string{".clinerules/c.md": "C.\n", ".clinerules/d/e.md": "E.\n", ".clinerules/f.md": "F.\n"}, watched),
			}
			want := make([][]File, len(spaces))
			for i, ws := range spaces {
				files, err := Collect(ws)
				if err != nil || len(files) == 0 {
					t.Fatalf("%s: %d files, %v", ws.Roots[0].Name, len(files), err)
				}
				want[i] = deepCopyFiles(files)
			}
			r := &Reader{}
			defer r.Close()
			const workers, rounds = 4, 40
			got := make([][][]File, workers)
			errs := make(chan error, workers)
			for w := range workers {
				go func() {
					for n := range rounds {
						i := (w + n/3) % len(spaces) // runs of one workspace, then the other
						files, err := r.Collect(spaces[i])
						if err != nil {
							errs <- err
							return
						}
						if !reflect.DeepEqual(files, want[i]) {
							errs <- fmt.Errorf("worker %d, round %d, %s:\n%s", w, n, spaces[i].Roots[0].Name, diffFiles(files, want[i]))
							return
						}
						got[w] = append(got[w], files)
					}
					errs <- nil
				}()
			}
			for range workers {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			for w, results := range got {
				for n, files := range results {
					if !reflect.DeepEqual(files, want[(w+n/3)%len(spaces)]) {
						t.Fatalf("worker %d, round %d: what the collection returned changed after", w, n)
					}
				}
			}
		})
	}
}
