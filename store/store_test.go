package store

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"
)

func TestFileMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.db")
	openAt(t, path, &Options{NoSync: true})
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != 0o600 {
		t.Errorf("mode = %v, want 0600", got)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string { return writeFile(t, dir, name, data) }
	garbage := make([]byte, 64<<10)
	rand.Read(garbage)
	other := filepath.Join(dir, "other.db")
	b, err := bolt.Open(other, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("raft")); return err })
	b.Close()

	tests := []struct {
		name string
		path string
		opts *Options
		want error
		text string
	}{
		{"missing directory", filepath.Join(dir, "nope", "tasks.db"), nil, fs.ErrNotExist, "create it first"},
		{"directory", dir, nil, ErrNotDatabase, "is a directory"},
		{"random bytes", write("garbage.db", garbage), nil, ErrNotDatabase, "garbage.db"},
		{"text file", write("notes.db", []byte("hello, I am not a database\n")), nil, ErrNotDatabase, ""},
		{"another bbolt file", other, nil, ErrNotDatabase, `"raft"`},
		{"read-only missing file", filepath.Join(dir, "missing.db"), &Options{ReadOnly: true}, fs.ErrNotExist, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := Open(tt.path, tt.opts)
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("error %q is not %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.text) {
				t.Errorf("error %q does not mention %q", err, tt.text)
			}
		})
	}
}

func TestOpenTruncated(t *testing.T) {
	src := filepath.Join(t.TempDir(), "full.db")
	db := openAt(t, src, &Options{NoSync: true})
	task := uuid.New()
	for i := range 20 {
		mustAppend(t, db, task, uint64(i*50), msgs(t, 50, strings.Repeat("x", 200))...)
	}
	db.Close()
	full, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bolt.Open(src, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var used int
	b.View(func(tx *bolt.Tx) error { used = int(tx.Size()); return nil })
	b.Close()
	// Past the used pages the file is preallocated space; cutting it loses nothing.
	for _, size := range []int{100, 4096, 8192 + 10, used / 2, used - 4096} {
		path := filepath.Join(t.TempDir(), "cut.db")
		if err := os.WriteFile(path, full[:size], 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := Open(path, nil)
		if err == nil {
			db.Close()
			t.Errorf("size %d of %d: Open succeeded", size, len(full))
			continue
		}
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNotDatabase) {
			t.Errorf("size %d of %d: error %q is neither ErrCorrupt nor ErrNotDatabase", size, len(full), err)
		}
		want := fmt.Sprintf("open task log %q: task log is damaged: the file is %d bytes but its pages reach %d: it was truncated", path, size, used)
		if err.Error() != want {
			t.Errorf("size %d of %d: error %q\nwant %q", size, len(full), err, want)
		}
		t.Logf("size %d: %v", size, err)
	}
}

// Pages overwritten inside the file: whatever bbolt makes of them, the store answers with an
// error and never takes the process down.
func TestOpenDamagedPages(t *testing.T) {
	src := filepath.Join(t.TempDir(), "full.db")
	db := openAt(t, src, &Options{NoSync: true})
	task := uuid.New()
	for i := range 10 {
		mustAppend(t, db, task, uint64(i*50), msgs(t, 50, strings.Repeat("y", 300))...)
	}
	db.Close()
	full, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	for _, from := range []int{2, 3, 5, len(full) / page / 2, len(full)/page - 8} {
		damaged := bytes.Clone(full)
		rand.Read(damaged[from*page : (from+4)*page])
		path := filepath.Join(t.TempDir(), "damaged.db")
		if err := os.WriteFile(path, damaged, 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := Open(path, &Options{NoSync: true})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNotDatabase) {
				t.Errorf("pages %d..: Open error %q is neither ErrCorrupt nor ErrNotDatabase", from, err)
			}
			continue
		}
		// The damage may lie in pages nothing reads on open; reading everything must find it
		// or find nothing wrong, without a panic.
		_, terr := db.Tasks()
		verr := db.Verify(context.Background(), task)
		_, aerr := db.Append(context.Background(), task, 500, msg(t, 1, "after damage"))
		for _, err := range []error{terr, verr, aerr} {
			if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrChainBroken) {
				t.Errorf("pages %d..: error %q is not ErrCorrupt", from, err)
			}
		}
		t.Logf("pages %d..: Tasks %v; Verify %v; Append %v", from, terr, verr, aerr)
		db.Close()
	}
}

func TestLockedByAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=lock", "TASKLOG_STORE_DB="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}

	start := time.Now()
	db, err := Open(path, &Options{Timeout: 300 * time.Millisecond})
	if err == nil {
		db.Close()
		t.Fatal("Open of a locked file succeeded")
	}
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("error %q is not ErrLocked", err)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Errorf("gave up after %v, before the timeout", waited)
	}
	want := `open task log "` + path + `": locked by another process (waited 300ms)`
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q\ndoes not start %q", err, want)
	}

	// Once the other process lets go, the file opens.
	stdin.Close()
	cmd.Wait()
	openAt(t, path, &Options{Timeout: 5 * time.Second, NoSync: true})
}

func TestReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.db")
	db := openAt(t, path, &Options{NoSync: true})
	task := uuid.New()
	mustAppend(t, db, task, 0, msgs(t, 3, "ro")...)
	db.Close()

	ro := openAt(t, path, &Options{ReadOnly: true})
	if _, err := ro.Append(context.Background(), task, 3, msg(t, 1, "no")); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Append: %v, want ErrReadOnly", err)
	}
	if _, err := ro.PutBlob([]byte("x")); !errors.Is(err, ErrReadOnly) {
		t.Errorf("PutBlob: %v, want ErrReadOnly", err)
	}
	if h, err := ro.Head(task); err != nil || h.Seq != 3 {
		t.Errorf("Head = %+v, %v", h, err)
	}
	if err := ro.Verify(context.Background(), task); err != nil {
		t.Error(err)
	}
}

func TestCloseDrainsAndRefuses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.db")
	db := openAt(t, path, &Options{NoSync: true})
	type outcome struct {
		task uuid.UUID
		err  error
	}
	out := make(chan outcome, 64)
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			task := uuid.New()
			_, err := db.Append(context.Background(), task, 0, msg(t, 1, "racing close"))
			out <- outcome{task, err}
		})
	}
	time.Sleep(time.Millisecond)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	wg.Wait()
	close(out)
	if _, err := db.Append(context.Background(), uuid.New(), 0, msg(t, 1, "late")); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v, want ErrClosed", err)
	}
	if _, err := db.Head(uuid.New()); !errors.Is(err, ErrClosed) {
		t.Errorf("Head after Close: %v, want ErrClosed", err)
	}

	re := openAt(t, path, &Options{NoSync: true})
	for o := range out {
		_, err := re.Head(o.task)
		switch {
		case o.err == nil && err != nil:
			t.Errorf("acknowledged append to %s is gone: %v", o.task, err)
		case errors.Is(o.err, ErrClosed) && !errors.Is(err, ErrTaskNotFound):
			t.Errorf("append to %s refused with ErrClosed but stored (%v)", o.task, err)
		case o.err != nil && !errors.Is(o.err, ErrClosed):
			t.Errorf("append to %s: %v", o.task, o.err)
		}
	}
}
