package natsstore

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/tasklog/tasklog/events"
)

// helperEnv makes the test binary run as a helper process (see TestMain).
const helperEnv = "TASKLOG_NATSSTORE_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(appendHelper())
	}
	os.Exit(m.Run())
}

// appendHelper is a process appending n events to its own task and n to a task it shares with
// the other helpers, printing "TASK SEQ ID" for every acknowledged event and "conflicts N" at
// the end. Its first append to the shared task expects an empty task, whatever the others did:
// all but one helper must get a conflict there.
func appendHelper() int {
	url, own, shared := os.Getenv("TASKLOG_NATS_URL"), uuid.MustParse(os.Getenv("TASKLOG_NATS_OWN")), uuid.MustParse(os.Getenv("TASKLOG_NATS_SHARED"))
	n, _ := strconv.Atoi(os.Getenv("TASKLOG_NATS_N"))
	s, err := Open(url, nil)
	for deadline := time.Now().Add(time.Minute); err != nil && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		s, err = Open(url, nil) // a cluster electing a leader
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	var conflicts atomic.Int64
	var ownHead, sharedHead uint64
	for i := range n {
		for _, target := range []struct {
			task uuid.UUID
			head *uint64
		}{{own, &ownHead}, {shared, &sharedHead}} {
			ev, err := events.New(&events.UserMessage{Text: fmt.Sprintf("process %d event %d", os.Getpid(), i)})
			if err == nil {
				ev.Turn, ev.Time = i+1, time.Now()
				ev.ID, err = testIDs.New(ev.Time)
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			a, err := appendUntilAcked(context.Background(), s, target.task, target.head, []events.Event{ev}, &conflicts)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			for _, e := range a.Events {
				fmt.Fprintf(out, "%s %d %s\n", target.task, e.Seq, e.ID)
			}
		}
	}
	fmt.Fprintf(out, "conflicts %d\n", conflicts.Load())
	return 0
}

// startListeningServer runs a JetStream server on a free port of 127.0.0.1, for other processes.
func startListeningServer(t testing.TB) string {
	t.Helper()
	port := freePort(t)
	runServer(t, &server.Options{ServerName: "tasklog-processes", Host: "127.0.0.1", Port: port, StoreDir: t.TempDir()})
	return fmt.Sprintf("nats://127.0.0.1:%d", port)
}

// Several processes append to tasks of their own and to one they share: the shared task sees
// expected-version conflicts, and no acknowledged event is lost or stored twice.
func TestProcessesAppend(t *testing.T) {
	url := startListeningServer(t) + "/PROCS"
	// Create the stream once, so the helpers race on appends, not on creating it.
	check, err := Open(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	processesAppend(t, url, check, 3, 25, nil)
}

// processesAppend runs procs helper processes appending n events each to a task of its own and
// n to one they share, calls during (when not nil) with the tasks while they run and the
// function it returns once they are done, and checks that every acknowledged event is stored
// once, in order, and that each log verifies.
func processesAppend(t *testing.T, url string, check *Store, procs, n int, during func(shared uuid.UUID, own []uuid.UUID) (after func())) {
	t.Helper()
	shared := uuid.New()
	own := make([]uuid.UUID, procs)
	cmds := make([]*exec.Cmd, procs)
	outs := make([]*bytes.Buffer, procs)
	for i := range procs {
		own[i] = uuid.New()
		cmds[i] = exec.Command(os.Args[0], "-test.run=^$")
		cmds[i].Env = append(os.Environ(), helperEnv+"=1", "TASKLOG_NATS_URL="+url,
			"TASKLOG_NATS_OWN="+own[i].String(), "TASKLOG_NATS_SHARED="+shared.String(), "TASKLOG_NATS_N="+strconv.Itoa(n))
		outs[i] = new(bytes.Buffer)
		cmds[i].Stdout = outs[i]
		cmds[i].Stderr = os.Stderr
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
		cmd := cmds[i]
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				cmd.Process.Kill()
				cmd.Wait()
			}
		})
	}
	after := func() {}
	if during != nil {
		after = during(shared, own)
	}
	acked := map[uuid.UUID]map[uint64]string{}
	conflicts := 0
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper %d: %v", i, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(outs[i].String()), "\n") {
			f := strings.Fields(line)
			if len(f) == 2 && f[0] == "conflicts" {
				c, _ := strconv.Atoi(f[1])
				conflicts += c
				continue
			}
			task, seq := uuid.MustParse(f[0]), mustUint(t, f[1])
			if acked[task] == nil {
				acked[task] = map[uint64]string{}
			}
			if old, ok := acked[task][seq]; ok && old != f[2] {
				t.Errorf("task %s seq %d acknowledged to two processes as %s and %s", task, seq, old, f[2])
			}
			acked[task][seq] = f[2]
		}
	}
	after()
	if conflicts < procs-1 {
		t.Errorf("%d conflicts; the helpers' first appends to the shared task all expected it empty, so at least %d must conflict", conflicts, procs-1)
	}
	if got := len(acked[shared]); got != procs*n {
		t.Errorf("shared task: %d events acknowledged, want %d", got, procs*n)
	}
	for _, task := range append([]uuid.UUID{shared}, own...) {
		stored := 0
		for ev, err := range check.Events(context.Background(), task, 1) {
			if err != nil {
				t.Fatal(err)
			}
			stored++
			if id := acked[task][ev.Seq]; id != ev.ID.String() {
				t.Errorf("task %s seq %d: stored %s, acknowledged %q", task, ev.Seq, ev.ID, id)
			}
		}
		if stored != len(acked[task]) {
			t.Errorf("task %s: %d events stored, %d acknowledged", task, stored, len(acked[task]))
		}
		if err := check.Verify(context.Background(), task); err != nil {
			t.Error(err)
		}
	}
	t.Logf("%d processes, %d conflicts on the shared task", procs, conflicts)
}

func mustUint(t *testing.T, s string) uint64 {
	t.Helper()
	u, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
