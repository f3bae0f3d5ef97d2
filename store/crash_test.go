package store

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
)

// A child process appends durably and reports every acknowledged event; it is killed with
// SIGKILL mid-stream. Every event it reported must be in the reopened log, at the seq reported,
// and every log must verify.
func TestKilledWriterLosesNothingAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	path := filepath.Join(t.TempDir(), "tasks.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=append", "TASKLOG_STORE_DB="+path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	type ack struct {
		seq uint64
		id  string
	}
	acked := make(map[uuid.UUID][]ack)
	lines := bufio.NewScanner(stdout)
	deadline := time.Now().Add(30 * time.Second)
	n := 0
	// At least 100 acknowledgements however slow the machine; up to 400 while time allows.
	for n < 400 && (n < 100 || time.Now().Before(deadline)) && lines.Scan() {
		f := strings.Fields(lines.Text())
		if len(f) != 3 {
			t.Fatalf("child said %q", lines.Text())
		}
		task, err := uuid.Parse(f[0])
		if err != nil {
			t.Fatal(err)
		}
		seq, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		acked[task] = append(acked[task], ack{seq, f[2]})
		n++
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Acknowledgements already in the pipe when the child died count too.
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		if len(f) == 3 {
			task, _ := uuid.Parse(f[0])
			seq, _ := strconv.ParseUint(f[1], 10, 64)
			acked[task] = append(acked[task], ack{seq, f[2]})
			n++
		}
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child was not killed mid-stream: %v", err)
	}
	if n < 100 {
		t.Fatalf("child acknowledged only %d appends", n)
	}

	db := openAt(t, path, nil)
	for task, acks := range acked {
		if err := db.Verify(context.Background(), task); err != nil {
			t.Error(err)
		}
		stored := collect(t, db, task, 1)
		for _, a := range acks {
			if a.seq > uint64(len(stored)) {
				t.Errorf("task %s: acknowledged seq %d is lost (log has %d)", task, a.seq, len(stored))
				continue
			}
			if got := stored[a.seq-1].ID.String(); got != a.id {
				t.Errorf("task %s seq %d: id %s, acknowledged %s", task, a.seq, got, a.id)
			}
		}
	}
	t.Logf("%d acknowledged appends over %d tasks survived SIGKILL", n, len(acked))
}
