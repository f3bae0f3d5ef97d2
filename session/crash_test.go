package session

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

const crashEnv = "TASKLOG_SESSION_CRASH_CHILD"

// TestMain lets the test binary double as the child process the crash test kills.
func TestMain(m *testing.M) {
	if path := os.Getenv(crashEnv); path != "" {
		crashChild(path)
		return
	}
	os.Exit(m.Run())
}

// crashChild records and decides in a loop with durable appends, changing a rule file before
// every decision so each one appends a rules_snapshot with it, and prints each decision's turn
// once Decide has returned.
func crashChild(path string) {
	ctx := context.Background()
	db, err := store.Open(path, nil)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	fsys := clineWorkspace()
	s, err := Open(ctx, db, uuid.MustParse("9f9f9f9f-0000-4000-8000-000000000001"), Options{Roots: []Root{{Path: "/ws", FS: fsys}}})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	for i := 0; ; i++ {
		fsys[".clinerules/general.md"] = &fstest.MapFile{Data: []byte(fmt.Sprintf("Version %d of the rule.\n", i))}
		if _, err := s.ToolCall(ctx, "read_file", "", json.RawMessage(`{"path":"apps/web/a.ts"}`)); err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
		d, err := s.Decide(ctx)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
		fmt.Println("decided", d.Turn)
	}
}

func TestCrashDuringDecide(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crash.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	acked := 0
	deadline := time.Now().Add(20 * time.Second)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "error") {
			t.Fatalf("child: %s", line)
		}
		turn, _ := strconv.Atoi(strings.TrimPrefix(line, "decided "))
		acked = turn
		if acked >= 25 || time.Now().After(deadline) {
			break
		}
	}
	// Kill while the child is somewhere inside its next record or decide.
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if acked == 0 {
		t.Fatal("the child acknowledged no decision")
	}
	db, err := store.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	task := uuid.MustParse("9f9f9f9f-0000-4000-8000-000000000001")
	if err := db.Verify(ctx, task); err != nil {
		t.Fatalf("log does not verify after the crash: %v", err)
	}
	snapshots := map[uint64]bool{}
	decisions := 0
	for ev, err := range db.Events(ctx, task, 1) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case events.TypeRulesSnapshot:
			snapshots[ev.Seq] = true
		case events.TypeDecision:
			p, _ := ev.Payload()
			d := p.(*events.Decision)
			decisions++
			if d.Snapshot != ev.Seq-1 || !snapshots[d.Snapshot] {
				t.Errorf("decision at seq %d refers to snapshot %d, which is not the event before it", ev.Seq, d.Snapshot)
			}
		}
	}
	if decisions < acked {
		t.Errorf("the log holds %d decisions; the child had acknowledged %d", decisions, acked)
	}
	rep, err := Replay(ctx, db, task, ReplayOptions{})
	if err != nil || !rep.OK() {
		t.Errorf("replay after the crash: %v %+v", err, rep.Changes)
	}
	t.Logf("killed after %d acknowledged decisions; log holds %d", acked, decisions)
}
