package hookconf

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

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
