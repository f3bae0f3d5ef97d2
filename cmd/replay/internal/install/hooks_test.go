package install

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHookCommandClient: with replay-hook installed beside replay, install's hooks run it (not
// for a NATS store, which replay hook serves itself); both forms are recognised as install's,
// so installing again moves the hooks from one to the other.
func TestHookCommandClient(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my bin")
	for _, name := range []string{"replay", "replay-hook"} {
		writeTestFile(t, filepath.Join(dir, name), "", 0o755)
	}
	exe := filepath.Join(dir, "replay")
	if got := hookClientBeside(exe); got != filepath.Join(dir, "replay-hook") {
		t.Fatalf("hookClientBeside(%s) = %q", exe, got)
	}
	tests := []struct{ db, want string }{
		{"", "'" + dir + "/replay-hook' cline"},
		{"/data/t.db", "'" + dir + "/replay-hook' cline --db /data/t.db"},
		{"nats://127.0.0.1:4222", "'" + dir + "/replay' hook cline --store nats://127.0.0.1:4222"},
	}
	for _, tt := range tests {
		c := newHookCommand(exe, "cline", tt.db, "")
		if c.line != tt.want {
			t.Errorf("command = %s, want %s", c.line, tt.want)
		}
		for _, line := range []string{c.line, "/usr/bin/replay hook cline", "/opt/replay-hook cline --db /x.db"} {
			if !c.ours(line) {
				t.Errorf("%s is not recognised as install's", line)
			}
		}
		for _, line := range []string{"/opt/replay-hook codex", "/opt/replay-hook", "/opt/other cline", "/usr/bin/replay mcp cline"} {
			if c.ours(line) {
				t.Errorf("%s is taken for install's cline hook", line)
			}
		}
	}
	if err := os.Chmod(filepath.Join(dir, "replay-hook"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := newHookCommand(exe, "cline", "", ""); c.line != "'"+dir+"/replay' hook cline" {
		t.Errorf("with a replay-hook that cannot be run: %s, want replay hook", c.line)
	}
}
