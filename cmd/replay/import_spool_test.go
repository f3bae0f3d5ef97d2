package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
)

// spoolCopies lists the copies in the spool folder of TMPDIR tmp.
func spoolCopies(t *testing.T, tmp string) []string {
	t.Helper()
	got, err := filepath.Glob(filepath.Join(tmp, fmt.Sprintf("tasklog-%d", os.Getuid()), spoolPrefix+"*"+spoolSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// startPipeImport starts 'replay import -' reading from a pipe that stays open after the first
// lines of a log, and returns once the process has made its copy of the input: once the spool
// folder holds copies copies.
func startPipeImport(t *testing.T, bin, tmp string, copies int) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "import", "-", "--db", filepath.Join(t.TempDir(), "t.db"))
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	log, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "testdata", "logs", "monorepo.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Write(log[:len(log)/2]); err != nil {
		t.Fatal(err)
	}
	// Wait for the copy: a condition, with room for a slow machine.
	deadline := time.Now().Add(60 * time.Second)
	for len(spoolCopies(t, tmp)) < copies {
		if time.Now().After(deadline) {
			t.Fatalf("no copy of the piped input appeared in %s", tmp)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cmd
}

// TestImportCopyRemovedOnSignal: SIGINT and SIGTERM end an import of a pipe with its copy
// removed; a copy left by SIGKILL is removed by the next import, even one of a regular file.
func TestImportCopyRemovedOnSignal(t *testing.T) {
	bin := testenv.ReplayBinary(t)
	for _, tt := range []struct {
		sig  syscall.Signal
		exit int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}, {syscall.SIGHUP, 129}} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			tmp := t.TempDir()
			cmd := startPipeImport(t, bin, tmp, 1)
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tt.exit {
				t.Errorf("exit: %v, want status %d", err, tt.exit)
			}
			if left := spoolCopies(t, tmp); len(left) != 0 {
				t.Errorf("%v left %v", tt.sig, left)
			}
		})
	}
	t.Run("SIGKILL", func(t *testing.T) {
		tmp := t.TempDir()
		cmd := startPipeImport(t, bin, tmp, 1)
		cmd.Process.Kill()
		cmd.Wait()
		if left := spoolCopies(t, tmp); len(left) != 1 {
			t.Fatalf("after SIGKILL the folder holds %v, want the one copy", left)
		}
		next := func() {
			t.Helper()
			cmd := exec.Command(bin, "import", filepath.Join(testenv.RepoRoot(t), "testdata", "logs", "toggle.jsonl"),
				"--db", filepath.Join(t.TempDir(), "t.db"))
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("the next import: %v\n%s", err, out)
			}
		}
		next()
		if left := spoolCopies(t, tmp); len(left) != 0 {
			t.Fatalf("the next import left %v", left)
		}
		// The copy of an import still running is not stale: its process holds the lock.
		running := startPipeImport(t, bin, tmp, 1)
		next()
		if left := spoolCopies(t, tmp); len(left) != 1 {
			t.Fatalf("the next import removed the running import's copy: the folder holds %v", left)
		}
		running.Process.Kill()
		running.Wait()
	})
}

// TestImportSpoolRefusesAnotherUsersFolder: a spool folder owned by another user is refused,
// and its files are left alone. Changing a folder's owner needs root.
func TestImportSpoolRefusesAnotherUsersFolder(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give a folder to another user")
	}
	s := &importSpool{dir: filepath.Join(t.TempDir(), "tasklog-0"), files: map[string]*os.File{}}
	if err := os.Mkdir(s.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(s.dir, spoolPrefix+"1"+spoolSuffix)
	if err := os.WriteFile(stale, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(s.dir, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	defer s.close()
	_, err := s.create()
	if !errors.Is(err, errSpoolFolder) || !strings.Contains(err.Error(), "is owned by uid 4242, not by you (uid 0)") {
		t.Errorf("create: %v", err)
	}
	s.sweep()
	if _, err := os.Stat(stale); err != nil {
		t.Errorf("the sweep touched another user's folder: %v", err)
	}
}
