package natsstore

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// natsServerBinary finds a nats-server on PATH or in $(go env GOPATH)/bin.
func natsServerBinary() string {
	if p, err := exec.LookPath("nats-server"); err == nil {
		return p
	}
	gopath, err := exec.Command("go", "env", "GOPATH").Output()
	if err != nil {
		return ""
	}
	p := filepath.Join(string(gopath[:len(gopath)-1]), "bin", "nats-server")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// The store against a real nats-server process configured as the package doc says (JetStream,
// sync_interval always), reached over TCP with nothing but its URL.
func TestRealServer(t *testing.T) {
	bin := natsServerBinary()
	if bin == "" {
		t.Skip("nats-server is not installed (go install github.com/nats-io/nats-server/v2@v2.15.2)")
	}
	dir := t.TempDir()
	port := freePort(t)
	conf := filepath.Join(dir, "nats.conf")
	err := os.WriteFile(conf, fmt.Appendf(nil, "listen: 127.0.0.1:%d\njetstream {\n  store_dir: %q\n  sync_interval: always\n}\n", port, filepath.Join(dir, "js")), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", conf)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	var s *Store
	for deadline := time.Now().Add(slow); ; {
		if s, err = Open(url, &Options{Timeout: 10 * time.Second}); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the nats-server did not come up: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer s.Close()
	if s.Path() != url+"/"+DefaultStream {
		t.Errorf("Path() = %q, want %q", s.Path(), url+"/"+DefaultStream)
	}
	task := uuid.New()
	mustAppend(t, s, task, 0, notes(t, 3, "over tcp")...)
	mustAppend(t, s, task, 3, note(t, 4, strings.Repeat("large ", 400_000)))
	if err := s.Verify(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	tasks, err := s.Tasks()
	if err != nil || len(tasks) != 1 || tasks[0].Task != task || tasks[0].Events != 4 {
		t.Fatalf("tasks %+v, %v", tasks, err)
	}
}
