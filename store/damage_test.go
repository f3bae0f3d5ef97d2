package store

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// A file that is not a task log says what it is.
func TestOpenSaysWhatTheFileIs(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string { return writeFile(t, dir, name, data) }
	random := make([]byte, 32<<10)
	rand.Read(random)
	random[0] = 0xff // not a gzip or text start by chance
	sqlite := append([]byte("SQLite format 3\x00"), make([]byte, 8192)...)
	tests := []struct {
		name string
		path string
		opts *Options
		text string
	}{
		{"empty, read-only", write("empty.db", nil), &Options{ReadOnly: true}, "the file is empty (0 bytes), not a task log database"},
		{"text", write("notes.db", []byte("hello, I am not a database\n")), nil, `the file is text (27 bytes) starting "hello, I am not a database", not a task log database`},
		{"text, read-only", write("notes2.db", []byte("hello\n")), &Options{ReadOnly: true}, `the file is text (6 bytes) starting "hello"`},
		{"random bytes", write("random.db", random), nil, "the file (32768 bytes) does not start with a bbolt header: its first bytes are ff"},
		{"SQLite", write("sqlite.db", sqlite), nil, "the file is an SQLite database"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := Open(tt.path, tt.opts)
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, ErrNotDatabase) {
				t.Errorf("error %q is not ErrNotDatabase", err)
			}
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("open task log %q: ", tt.path)) || !strings.Contains(err.Error(), tt.text) {
				t.Errorf("error %q\nwant the file and %q", err, tt.text)
			}
			if strings.Contains(err.Error(), "bad file descriptor") {
				t.Errorf("error %q speaks of file descriptors", err)
			}
		})
	}
}

// Opened for writing, an empty file becomes a new task log: it holds nothing to lose.
func TestOpenEmptyFileForWritingCreates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	db := openAt(t, path, &Options{NoSync: true})
	mustAppend(t, db, uuid.New(), 0, msg(t, 1, "first"))
}

// damageFixture writes a task long enough that its bucket has a branch page over leaf pages,
// and returns the file, the task and the id of a leaf page of the task's log.
func damageFixture(t *testing.T) (path string, task uuid.UUID, leaf uint64, pageSize int) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "tasks.db")
	db := openAt(t, path, &Options{NoSync: true})
	// Uncompressed records, so that the test finds an event's text on its page.
	db.noCompress = true
	task = uuid.New()
	for i := range 6 {
		mustAppend(t, db, task, uint64(i*50), msgs(t, 50, strings.Repeat("z", 300))...)
	}
	db.Close()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pr, root, d := readMeta(f)
	if d != nil {
		t.Fatal(d)
	}
	value, d := pr.find(root, task[:])
	if d != nil || len(value) < bucketHeaderSize {
		t.Fatalf("task bucket: %v %x", d, value)
	}
	sub := binary.LittleEndian.Uint64(value)
	p, d := pr.read(sub)
	if d != nil || binary.LittleEndian.Uint16(p[8:]) != branchPageFlag {
		t.Fatalf("the task's root page %d is not a branch page (%v)", sub, d)
	}
	leaf = binary.LittleEndian.Uint64(p[pageHeaderSize+2*elementSize+8:])
	return path, task, leaf, int(pr.pageSize)
}

// A page whose header or elements are damaged: every call that reads it returns an error that
// names the file, the task and the page, and wraps ErrCorrupt; nothing panics.
func TestDamagedPageNamesFilePageAndTask(t *testing.T) {
	tests := []struct {
		name    string
		damage  func(page []byte)
		problem string
	}{
		{"type flags", func(p []byte) { p[8] = 0x5a }, "neither branch nor leaf"},
		{"element count", func(p []byte) { binary.LittleEndian.PutUint16(p[10:], 0xfff0) }, "more than fit in it"},
		{"element position", func(p []byte) { binary.LittleEndian.PutUint32(p[pageHeaderSize+3*elementSize+4:], 0x7fffff00) }, "points outside the page"},
		{"page id", func(p []byte) { p[0] ^= 0x40 }, "its header says it is page"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, task, leaf, pageSize := damageFixture(t)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			tt.damage(data[int(leaf)*pageSize : int(leaf+1)*pageSize])
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			db := openAt(t, path, &Options{NoSync: true})
			var readErr error
			for _, err := range db.Events(context.Background(), task, 1) {
				if err != nil {
					readErr = err
					break
				}
			}
			verr := db.Verify(context.Background(), task)
			for name, err := range map[string]error{"Events": readErr, "Verify": verr} {
				if !errors.Is(err, ErrCorrupt) {
					t.Errorf("%s: error %v, want ErrCorrupt", name, err)
					continue
				}
				for _, want := range []string{path, "task " + task.String(), fmt.Sprintf("page %d: ", leaf), tt.problem} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%s: error %q\ndoes not mention %q", name, err, want)
					}
				}
			}
			t.Log(verr)
		})
	}
}

// A byte flipped inside an event's stored bytes is found by Verify, which names the task and
// the seq, and shows both hashes in full when the bytes still decode.
func TestFlippedByteInADataPage(t *testing.T) {
	path, task, leaf, pageSize := damageFixture(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := data[int(leaf)*pageSize : int(leaf+1)*pageSize]
	// The values are packed after the element headers; "zzz…" is in every event's text.
	i := strings.LastIndex(string(page), strings.Repeat("z", 300))
	if i < 0 {
		t.Fatal("no event text on the leaf page")
	}
	page[i+150] = 'Z'
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	db := openAt(t, path, &Options{NoSync: true})
	err = db.Verify(context.Background(), task)
	var ve *VerifyError
	if !errors.As(err, &ve) || ve.Task != task {
		t.Fatalf("Verify = %v, want a VerifyError for the task", err)
	}
	if !strings.Contains(ve.Problem, "hash mismatch: stored ") || len(strings.Fields(ve.Problem)[3]) != 65 {
		t.Errorf("problem %q does not show both hashes in full", ve.Problem)
	}
	t.Log(err)
}
