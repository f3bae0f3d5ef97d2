//go:build linux && (amd64 || arm64)

package rules

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestStatAtIsOSStat checks that looking a name up in an opened folder reports what os.Stat
// does for every kind of entry a rules folder may hold, so that the memory of a Reader compares
// like with like.
func TestStatAtIsOSStat(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	write(".clinerules/api.md", "API rules.\n")
	write(".clinerules/nested/deep.md", "Deep.\n")
	if err := os.Symlink("api.md", filepath.Join(dir, ".clinerules/link.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, ".clinerules/pipe.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second).Add(123456789)
	if err := os.Chtimes(filepath.Join(dir, ".clinerules/api.md"), old, old); err != nil {
		t.Fatal(err)
	}
	fd, ok := openDirFD(dir)
	if !ok {
		t.Fatal("cannot open the folder")
	}
	defer closeDirFD(fd)
	for _, name := range []string{".clinerules/api.md", ".clinerules/nested/deep.md", ".clinerules/nested",
		".clinerules/link.md", ".clinerules/pipe.md", ".", ".clinerules"} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, done, err := statAt(fd, name)
		if !done || err != nil {
			t.Fatalf("%s: done %v, %v", name, done, err)
		}
		if want := statInfoOf(info); got.size != want.size || got.mode != want.mode || !got.modTime.Equal(want.modTime) ||
			got.ino != want.ino || got.ctime != want.ctime || want.ino == 0 || want.ctime == 0 {
			t.Errorf("%s: statAt %+v, os.Stat %+v", name, got, want)
		}
	}
	if _, done, err := statAt(fd, ".clinerules/gone.md"); !done || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: done %v, %v; want fs.ErrNotExist", done, err)
	}
	// Most names a collection looks up are missing: saying so allocates nothing.
	if n := testing.AllocsPerRun(100, func() { statAt(fd, ".clinerules/gone.md") }); n != 0 {
		t.Errorf("a missing file's look-up allocates %v times", n)
	}
	if _, done, _ := statAt(fd, "a\x00b"); done {
		t.Error("a name with a NUL byte was looked up")
	}
}

// TestOpenDirFD opens folders by a short path without an allocation and by one longer than a
// look-up takes through syscall.Open, and refuses a file, a missing folder and a NUL byte.
func TestOpenDirFD(t *testing.T) {
	dir := t.TempDir()
	long := dir
	for len(long) <= maxStatName {
		long = filepath.Join(long, "a-folder-name-of-some-length")
	}
	if err := os.MkdirAll(long, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir  string
		open bool
	}{{dir, true}, {long, true}, {filepath.Join(dir, "file"), false}, {filepath.Join(dir, "gone"), false}, {dir + "\x00", false}} {
		fd, ok := openDirFD(tc.dir)
		if ok != tc.open {
			t.Errorf("%.60s…: opened %v, want %v", tc.dir, ok, tc.open)
			continue
		}
		if !ok {
			continue
		}
		var st, want syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Stat(tc.dir, &want); err != nil {
			t.Fatal(err)
		}
		if st.Ino != want.Ino || st.Dev != want.Dev {
			t.Errorf("%.60s…: opened another folder", tc.dir)
		}
		closeDirFD(fd)
	}
	if n := testing.AllocsPerRun(100, func() {
		if fd, ok := openDirFD(dir); ok {
			closeDirFD(fd)
		}
	}); n != 0 {
		t.Errorf("opening a folder allocates %v times", n)
	}
}
