package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
)

// TestCIJaegerWait runs the bounded wait of .ci/run for the Jaeger build (.ci/jaeger.bash) with
// fake builds: one that succeeds, one that fails (its output is shown), and one that never ends,
// with a child of its own as go build has compilers: at the deadline the build and its child
// are stopped and one line says the test did not run.
func TestCIJaegerWait(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid is not installed (util-linux)")
	}
	lib := filepath.Join(testenv.RepoRoot(t), ".ci", "jaeger.bash")
	for _, tc := range []struct {
		name, build string
		rc          string
		says        string
	}{
		{"succeeds", "echo built", "rc=0", ""},
		{"fails", "echo 'go: module lookup disabled'; exit 3", "rc=1", "Jaeger's build failed (exit 3); TestOtelJaeger did not run. The end of its output:\ngo: module lookup disabled\n"},
		{"too slow", "sleep 1000 & echo $! >\"$CHILD\"; sleep 1000", "rc=2", "Jaeger could not be built in time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			child := filepath.Join(t.TempDir(), "child")
			script := `source "$1"
jaeger_build_start bash -c "$2"
echo "build=$jaeger_pid"
jaeger_build_wait $((SECONDS + 1)) && rc=0 || rc=$?
echo "rc=$rc"`
			cmd := exec.Command("bash", "-c", script, "bash", lib, tc.build)
			cmd.Env = append(os.Environ(), "CHILD="+child)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if !strings.Contains(string(out), "\n"+tc.rc+"\n") || !strings.Contains(string(out), tc.says) {
				t.Fatalf("the wait printed\n%s\nwant %s and %q", out, tc.rc, tc.says)
			}
			if tc.says == "" && strings.Contains(string(out), "did not run") {
				t.Fatalf("a build that succeeded printed\n%s\nwant no word of the test not running", out)
			}
			if tc.rc != "rc=2" {
				return
			}
			// The build and the child it started are stopped (gone or a zombie).
			build, _ := strings.CutPrefix(strings.Fields(string(out))[0], "build=")
			b, err := os.ReadFile(child)
			if err != nil {
				t.Fatalf("the fake build did not start its child: %v", err)
			}
			for _, pid := range []string{build, strings.TrimSpace(string(b))} {
				if _, err := strconv.Atoi(pid); err != nil {
					t.Fatalf("pid %q: %v\n%s", pid, err, out)
				}
				deadline := time.Now().Add(20 * time.Second)
				for alive(pid) {
					if time.Now().After(deadline) {
						t.Fatalf("process %s of the build still runs after the wait stopped it", pid)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
}

// alive tells whether process pid exists and is not a zombie.
func alive(pid string) bool {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || !strings.HasPrefix(s[i+1:], " Z")
}
