package hookconf

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tasklog/tasklog/session/serve/wire"
)

func TestRuntimeDir(t *testing.T) {
	base := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", base)
	dir, err := RuntimeDir()
	if err != nil || dir != filepath.Join(base, "tasklog") {
		t.Fatalf("RuntimeDir = %q, %v; want %s", dir, err, filepath.Join(base, "tasklog"))
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("the folder: %v, %v; want mode 0700", st.Mode(), err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := RuntimeDir(); err == nil || !strings.Contains(err.Error(), ErrNotPrivate.Error()) {
		t.Fatalf("a folder others may enter: %v, want it refused", err)
	}
	t.Setenv("XDG_RUNTIME_DIR", "relative")
	if dir, err := RuntimeDir(); err != nil || dir != wire.PrivateDir() {
		t.Fatalf("with a relative XDG_RUNTIME_DIR: %q, %v; want %s", dir, err, wire.PrivateDir())
	}
}

// TestServerUnanswered: the note lasts ServerSkip, belongs to one database, and is not taken
// from a folder others may enter.
func TestServerUnanswered(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	db, other := filepath.Join(t.TempDir(), "a.db"), filepath.Join(t.TempDir(), "b.db")
	if ServerUnanswered(db) {
		t.Fatal("unanswered before any note")
	}
	MarkServerUnanswered(db)
	if !ServerUnanswered(db) || ServerUnanswered(other) {
		t.Fatalf("after the note: %v for its database, %v for another; want true, false", ServerUnanswered(db), ServerUnanswered(other))
	}
	p, err := serverMarker(db, false)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-ServerSkip - time.Second)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	if ServerUnanswered(db) {
		t.Fatal("a note older than ServerSkip still counts")
	}
	MarkServerUnanswered(db)
	os.Chmod(filepath.Dir(p), 0o777)
	if ServerUnanswered(db) {
		t.Fatal("a note in a folder others may enter counts")
	}
}

func TestServerTimedOut(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{&wire.Error{Code: "timeout"}, true},
		{&wire.Error{Code: "busy"}, false},
		{os.ErrDeadlineExceeded, true},
		{&os.PathError{Op: "connect", Path: "x", Err: os.ErrDeadlineExceeded}, true},
		{context.DeadlineExceeded, false}, // the hook's own budget, spent before it asked
		{&os.PathError{Op: "connect", Path: "x", Err: syscall.ECONNREFUSED}, false},
		{errors.New("receive hook: EOF"), false},
	} {
		if got := ServerTimedOut(tt.err); got != tt.want {
			t.Errorf("ServerTimedOut(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// privateLog sets the temporary directory to a new folder and returns it and where the log of
// this user's private folder in it is.
func privateLog(t *testing.T) (tmp, log string) {
	t.Helper()
	tmp = t.TempDir()
	t.Setenv("TMPDIR", tmp)
	return tmp, filepath.Join(tmp, "tasklog-"+strconv.Itoa(os.Getuid()), LogName)
}

// mode is the permission bits of p, or -1 when it is missing.
func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	st, err := os.Lstat(p)
	if err != nil {
		return ^os.FileMode(0)
	}
	return st.Mode().Perm()
}

// The log beside the database is written when it can be, created owner-only.
func TestAppendLogBesideTheDatabase(t *testing.T) {
	tmp, private := privateLog(t)
	dbDir := t.TempDir()
	AppendLog(filepath.Join(dbDir, "tasks.db"), "one\n")
	AppendLog(filepath.Join(dbDir, "tasks.db"), "two\n")
	got, err := os.ReadFile(filepath.Join(dbDir, LogName))
	if err != nil || string(got) != "one\ntwo\n" {
		t.Fatalf("log beside the database: %q, %v", got, err)
	}
	if m := mode(t, filepath.Join(dbDir, LogName)); m != 0o600 {
		t.Errorf("log mode %v, want 0600", m)
	}
	if _, err := os.Lstat(private); err == nil {
		t.Errorf("%s written too", private)
	}
	if _, err := os.Lstat(filepath.Join(tmp, LogName)); err == nil {
		t.Errorf("the shared temporary folder's %s written", LogName)
	}
}

// When the database's folder cannot be written, the log goes to this user's private folder of
// the temporary directory (made 0700, the log 0600), never to a fixed name in the shared one.
func TestAppendLogFallsBackToThePrivateFolder(t *testing.T) {
	tmp, private := privateLog(t)
	AppendLog(filepath.Join(t.TempDir(), "missing", "tasks.db"), "fault\n")
	got, err := os.ReadFile(private)
	if err != nil || string(got) != "fault\n" {
		t.Fatalf("private log: %q, %v", got, err)
	}
	if m := mode(t, filepath.Dir(private)); m != 0o700 {
		t.Errorf("private folder mode %v, want 0700", m)
	}
	if m := mode(t, private); m != 0o600 {
		t.Errorf("private log mode %v, want 0600", m)
	}
	if _, err := os.Lstat(filepath.Join(tmp, LogName)); err == nil {
		t.Errorf("the shared temporary folder's %s written", LogName)
	}
}

// A log name that is a link is not followed: the file it points to is left as it was and the
// line goes to the private folder's log instead.
func TestAppendLogDoesNotFollowALink(t *testing.T) {
	_, private := privateLog(t)
	dbDir, elsewhere := t.TempDir(), t.TempDir()
	victim := filepath.Join(elsewhere, "victim.txt")
	if err := os.WriteFile(victim, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dbDir, LogName)); err != nil {
		t.Skip("symlinks unsupported:", err)
	}
	// The private folder's log is a planted link too: the line is dropped rather than written
	// through it.
	if err := os.MkdirAll(filepath.Dir(private), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, private); err != nil {
		t.Fatal(err)
	}
	AppendLog(filepath.Join(dbDir, "tasks.db"), "fault\n")
	if got, _ := os.ReadFile(victim); string(got) != "keep\n" {
		t.Errorf("the link's target was written: %q", got)
	}
}

// A private folder that others may enter, or a log file of another user, is not written.
func TestAppendLogRefusesFoldersAndFilesNotPrivate(t *testing.T) {
	t.Run("folder open to others", func(t *testing.T) {
		_, private := privateLog(t)
		if err := os.Mkdir(filepath.Dir(private), 0o777); err != nil {
			t.Fatal(err)
		}
		os.Chmod(filepath.Dir(private), 0o777) // whatever the umask
		AppendLog(filepath.Join(t.TempDir(), "missing", "tasks.db"), "fault\n")
		if _, err := os.Lstat(private); err == nil {
			t.Errorf("%s written in a folder others may enter", private)
		}
	})
	t.Run("folder of another user", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("only root can give a folder to another user")
		}
		_, private := privateLog(t)
		if err := os.Mkdir(filepath.Dir(private), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(filepath.Dir(private), 65534, 65534); err != nil {
			t.Skip("chown:", err)
		}
		AppendLog(filepath.Join(t.TempDir(), "missing", "tasks.db"), "fault\n")
		if _, err := os.Lstat(private); err == nil {
			t.Errorf("%s written in another user's folder", private)
		}
	})
	t.Run("log file of another user", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("only root can give a file to another user")
		}
		privateLog(t)
		dbDir := t.TempDir()
		planted := filepath.Join(dbDir, LogName)
		if err := os.WriteFile(planted, nil, 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(planted, 65534, 65534); err != nil {
			t.Skip("chown:", err)
		}
		AppendLog(filepath.Join(dbDir, "tasks.db"), "fault\n")
		if got, _ := os.ReadFile(planted); len(got) != 0 {
			t.Errorf("another user's log was written: %q", got)
		}
	})
	t.Run("named pipe", func(t *testing.T) {
		_, private := privateLog(t)
		dbDir := t.TempDir()
		if err := syscall.Mkfifo(filepath.Join(dbDir, LogName), 0o600); err != nil {
			t.Skip("named pipes unsupported:", err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			AppendLog(filepath.Join(dbDir, "tasks.db"), "fault\n")
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second): // not a measure of speed: a way to fail instead of hanging
			if w, err := os.OpenFile(filepath.Join(dbDir, LogName), os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
				defer w.Close()
			}
			t.Fatal("AppendLog blocks on a named pipe where its log is")
		}
		if got, _ := os.ReadFile(private); !strings.Contains(string(got), "fault") {
			t.Errorf("private log %q: want the line", got)
		}
	})
}
