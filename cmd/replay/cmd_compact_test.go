package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// compactedLine is what a compact that succeeded prints.
var compactedLine = regexp.MustCompile(`^compacted .*tasklog\.db \([0-9.]+ MB\) into .*copy\.db \([0-9.]+ MB\): 1 task, [0-9]+ events; every task of the copy verified\n$`)

// 'replay compact' copies the hooks' database into a new file that holds the same tasks and
// verifies; it never writes over a file, and a copy it cannot make leaves nothing behind.
func TestCompact(t *testing.T) {
	dir, db := hooksDB(t, 40)
	replay := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := run(args, &out, &errb)
		return out.String(), errb.String(), code
	}
	copyPath := filepath.Join(dir, "copy.db")
	out, stderr, code := replay("compact", "--db", db, copyPath)
	if code != exitOK || !compactedLine.MatchString(out) {
		t.Fatalf("compact: exit %d\n%s%s", code, out, stderr)
	}
	wantTasks, _, _ := replay("tasks", "--db", db)
	gotTasks, _, _ := replay("tasks", "--db", copyPath)
	if gotTasks != strings.ReplaceAll(wantTasks, db, copyPath) {
		t.Errorf("the copy's tasks:\n%s\nthe source's:\n%s", gotTasks, wantTasks)
	}
	if out, stderr, code := replay("verify", "--db", copyPath); code != exitOK {
		t.Errorf("verify the copy: exit %d\n%s%s", code, out, stderr)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"into a file that exists", []string{"compact", "--db", db, copyPath}, "exists: compact writes a new file and never over another"},
		{"a database that is not there", []string{"compact", "--db", filepath.Join(dir, "none.db"), filepath.Join(dir, "new.db")}, "none.db"},
		{"a NATS stream", []string{"compact", "--store", "nats://127.0.0.1:1/T", filepath.Join(dir, "new.db")}, "a NATS stream has no pages to pack"},
		{"into a folder that is not there", []string{"compact", "--db", db, filepath.Join(dir, "gone", "new.db")}, "compact: open"},
		{"no new file named", []string{"compact", "--db", db}, "missing NEW"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := dirNames(t, dir)
			copyBefore, _ := os.ReadFile(copyPath)
			_, stderr, code := replay(tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, exitUsage, tc.want)
			}
			if after := dirNames(t, dir); after != before {
				t.Errorf("the folder held %s and now holds %s", before, after)
			}
			if copyAfter, _ := os.ReadFile(copyPath); !bytes.Equal(copyAfter, copyBefore) {
				t.Error("the copy made before was changed")
			}
		})
	}
}

// A database whose records were changed is copied, but the copy does not verify: compact says
// so, exits 1, and leaves no copy.
func TestCompactRefusesADamagedLog(t *testing.T) {
	dir, db := hooksDB(t, 10)
	b, err := bolt.Open(db, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = b.Update(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, log *bolt.Bucket) error {
			if len(name) != 16 { // a task's log is named by its 16 id bytes
				return nil
			}
			k, v := log.Cursor().Last()
			v = bytes.Clone(v)
			v[len(v)-1] ^= 0xff
			return log.Put(bytes.Clone(k), v)
		})
	})
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	before := dirNames(t, dir)
	var out, errb bytes.Buffer
	code := run([]string{"compact", "--db", db, filepath.Join(dir, "copy.db")}, &out, &errb)
	t.Log(strings.TrimSpace(errb.String()))
	if code != exitFailed || !strings.Contains(errb.String(), "does not verify, and was removed") {
		t.Errorf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	if after := dirNames(t, dir); after != before {
		t.Errorf("the folder held %s and now holds %s", before, after)
	}
}

// A file with a page bbolt cannot read: compact says which page, exits 1 and writes nothing,
// for a page the task list reads (28) as for one only the copy reads (12).
func TestCompactDamagedPage(t *testing.T) {
	fixture, err := os.ReadFile(filepath.Join("..", "..", "store", "testdata", "format2.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range []int{12, 28} {
		t.Run(fmt.Sprintf("page %d", page), func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "tasks.db")
			damaged := bytes.Clone(fixture)
			copy(damaged[page*4096+8:], []byte{0x55, 0x55}) // flags of no page type bbolt knows
			if err := os.WriteFile(db, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			before := dirNames(t, dir)
			var out, errb bytes.Buffer
			code := run([]string{"compact", "--db", db, filepath.Join(dir, "copy.db")}, &out, &errb)
			if code != exitFailed || !strings.Contains(errb.String(), fmt.Sprintf("task log is damaged: page %d", page)) ||
				!strings.Contains(errb.String(), "nothing was written") {
				t.Errorf("exit %d\n%s%s", code, out.String(), errb.String())
			}
			if after := dirNames(t, dir); after != before {
				t.Errorf("the folder held %s and now holds %s", before, after)
			}
		})
	}
}

// 'replay info' says when compact would make the file a quarter smaller or more, and how small:
// not while a bucket of 8 MB fills the file's pages, and once it is deleted and its pages are
// free.
func TestInfoSuggestsCompact(t *testing.T) {
	dir, db := hooksDB(t, 10)
	info := func(path string) string {
		var out, errb bytes.Buffer
		if code := run([]string{"info", "--db", path}, &out, &errb); code != exitOK {
			t.Fatalf("info: exit %d: %s", code, errb.String())
		}
		return out.String()
	}
	junk := func(fill func(tx *bolt.Tx) error) {
		t.Helper()
		b, err := bolt.Open(db, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = b.Update(fill)
		if cerr := b.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	junk(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("junk"))
		for i := 0; err == nil && i < 2048; i++ {
			err = b.Put(fmt.Appendf(nil, "%04d", i), make([]byte, 4000)) // a page each
		}
		return err
	})
	if out := info(db); strings.Contains(out, "replay compact") {
		t.Errorf("info suggests compact for a file its data fills:\n%s", out)
	}
	junk(func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("junk")) })
	hint := regexp.MustCompile(`(?m)^its data takes ([0-9.]+) MB of the file's ([0-9.]+) MB: 'replay compact NEW' copies it into a file of about ([0-9.]+) MB or less$`)
	m := hint.FindStringSubmatch(info(db))
	if m == nil {
		t.Fatalf("info does not suggest compact for a file of free pages:\n%s", info(db))
	}
	copyPath := filepath.Join(dir, "copy.db")
	var out, errb bytes.Buffer
	if code := run([]string{"compact", "--db", db, copyPath}, &out, &errb); code != exitOK {
		t.Fatalf("compact: exit %d: %s", code, errb.String())
	}
	t.Logf("%s\n%s", m[0], out.String())
	said, err := strconv.ParseFloat(m[3], 64)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(copyPath); err != nil || float64(info.Size()) > said*(1<<20) {
		t.Errorf("the copy takes %s, more than the %s MB info said (%v)", fileSizeText(copyPath), m[3], err)
	}
}

// hooksDB is a folder holding tasklog.db, into which 'replay hook claude-code' recorded n
// reads of a session, without a server.
func hooksDB(t *testing.T, n int) (dir, db string) {
	t.Helper()
	t.Setenv("TASKLOG_SERVE", "off")
	ws, _ := hookWorkspace(t)
	dir = t.TempDir()
	db = filepath.Join(dir, "tasklog.db")
	for i := range n {
		if _, stderr, code := runHook(t, "claude-code", db, benchReadPayload("compact-session", ws, i)); code != 0 || stderr != "" {
			t.Fatalf("hook %d: exit %d: %s", i, code, stderr)
		}
	}
	return dir, db
}

// dirNames lists the names in dir, sorted, as one string.
func dirNames(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}
