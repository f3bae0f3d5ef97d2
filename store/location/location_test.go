package location

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/store"
)

// TestSelect: which store the flags and the environment select.
func TestSelect(t *testing.T) {
	tests := []struct {
		name          string
		db            string
		dbSet         bool
		store         string
		storeSet      bool
		env           string
		want, wantErr string
		shared        bool
	}{
		{name: "default file", db: "tasklog.db", want: "tasklog.db"},
		{name: "--db", db: "a.db", dbSet: true, want: "a.db"},
		{name: "--store nats", db: "tasklog.db", store: "nats://h:4222/S", storeSet: true, want: "nats://h:4222/S", shared: true},
		{name: "--store file", db: "tasklog.db", store: "b.db", storeSet: true, want: "b.db"},
		{name: "env", db: "tasklog.db", env: "nats://h:4222", want: "nats://h:4222", shared: true},
		{name: "--db beats env", db: "a.db", dbSet: true, env: "nats://h:4222", want: "a.db"},
		{name: "--store beats env", db: "tasklog.db", store: "nats://x:1", storeSet: true, env: "nats://h:4222", want: "nats://x:1", shared: true},
		{name: "both flags", db: "a.db", dbSet: true, store: "nats://h:1", storeSet: true, wantErr: "--db and --store name two stores"},
		{name: "unknown kind", db: "tasklog.db", store: "redis://h", storeSet: true, wantErr: `--store: unknown kind of store "redis://h"`},
		{name: "bad env", db: "tasklog.db", env: "http://h", wantErr: "$TASKLOG_STORE: unknown kind of store"},
		{name: "empty --store", db: "tasklog.db", store: "", storeSet: true, wantErr: "--store: empty store"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(Env, tt.env)
			got, err := Select(tt.db, tt.dbSet, tt.store, tt.storeSet, true)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got.String() != tt.want || got.Shared() != tt.shared {
				t.Fatalf("got %q (shared %v), %v; want %q (shared %v)", got, got.Shared(), err, tt.want, tt.shared)
			}
			wantFlag := "--db"
			if tt.shared {
				wantFlag = "--store"
			}
			if got.Flag() != wantFlag || FlagFor(got.String()) != wantFlag {
				t.Errorf("flag %s, want %s", got.Flag(), wantFlag)
			}
		})
	}
	t.Run("environment not used", func(t *testing.T) {
		t.Setenv(Env, "nats://h:4222")
		if got, err := Select("tasklog.db", false, "", false, false); err != nil || got.String() != "tasklog.db" {
			t.Errorf("got %q, %v; want the file", got, err)
		}
	})
}

func mustParse(t *testing.T, s string) Location {
	t.Helper()
	l, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestSideFile: a NATS store's local files are in one folder per stream, the default stream's
// whether the URL names it or not, and never beside $TASKLOG_DB; a file's are beside it.
func TestSideFile(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/data")
	a := mustParse(t, "nats://127.0.0.1:4222").SideFile()
	if b := mustParse(t, "nats://127.0.0.1:4222/TASKLOG").SideFile(); a != b {
		t.Errorf("the default stream has two folders: %s and %s", a, b)
	}
	if b := mustParse(t, "nats://127.0.0.1:4222/?replicas=3").SideFile(); a != b {
		t.Errorf("?replicas gives the stream another folder: %s and %s", a, b)
	}
	if c := mustParse(t, "nats://127.0.0.1:4222/OTHER").SideFile(); a == c {
		t.Errorf("two streams share the folder %s", a)
	}
	if !strings.HasPrefix(a, "/data/tasklog/nats-") || filepath.Base(a) != "tasklog" {
		t.Errorf("side file %s, want /data/tasklog/nats-HASH/tasklog", a)
	}
	if got := File("/x/tasklog.db").SideFile(); got != "/x/tasklog.db" {
		t.Errorf("a file's side file is %s, want the file", got)
	}
}

// TestWithDefaultStream: a server URL without a stream gets the one given, its query kept; a
// URL with one, and a file, stay as they are.
func TestWithDefaultStream(t *testing.T) {
	tests := []struct{ in, want string }{
		{"nats://h:4222", "nats://h:4222/DEMO"},
		{"nats://h:4222/", "nats://h:4222/DEMO"},
		{"nats://h:4222?replicas=3", "nats://h:4222/DEMO?replicas=3"},
		{"nats://h:4222/MINE", "nats://h:4222/MINE"},
		{"demo.db", "demo.db"},
	}
	for _, tt := range tests {
		if got := mustParse(t, tt.in).WithDefaultStream("DEMO").String(); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestAbs: a relative file becomes absolute; a URL stays as written.
func TestAbs(t *testing.T) {
	if got := File("a.db").Abs().String(); !filepath.IsAbs(got) || filepath.Base(got) != "a.db" {
		t.Errorf("File(a.db).Abs() = %s", got)
	}
	if got := mustParse(t, "nats://h:4222").Abs().String(); got != "nats://h:4222" {
		t.Errorf("a URL made absolute: %s", got)
	}
}

// TestOpenFile: a file is opened as the options say: never created when it must exist, its
// folder made on request, read-only when asked.
func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	l := File(filepath.Join(dir, "sub", "tasklog.db"))
	if l.Exists() {
		t.Fatal("a file not there exists")
	}
	if _, err := l.Open(Options{ReadOnly: true, MustExist: true}); !errors.Is(err, ErrNoLog) || !strings.Contains(err.Error(), l.String()) {
		t.Fatalf("open a missing file that must exist: %v; want ErrNoLog naming it", err)
	}
	if _, err := os.Stat(filepath.Dir(l.String())); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("opening a missing file created its folder: %v", err)
	}
	if _, err := l.Open(Options{}); err == nil {
		t.Fatal("a file in a folder that does not exist was opened without MakeDir")
	}
	db, err := l.Open(Options{MakeDir: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if !l.Exists() {
		t.Fatal("the file opened does not exist")
	}
	ro, err := l.Open(Options{ReadOnly: true, MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.PutBlob([]byte("x")); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("write to a read-only open: %v, want store.ErrReadOnly", err)
	}
}

// TestServerExists: a server's log counts as there, so that a writing verb never removes it.
func TestServerExists(t *testing.T) {
	if !mustParse(t, "nats://127.0.0.1:1/S").Exists() {
		t.Error("a server's log does not exist")
	}
}
