package serve

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocTranscript runs the transcript of docs/server.md against a server set up as the page
// says (a database in /tmp/tx, the workspace /tmp/tx/shop with its rule scoped to src/api/**),
// and compares every answer with the page's, the process id and the folder aside.
func TestDocTranscript(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "server.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(page), "A transcript (a server on `/tmp/tx/tasklog.db`")
	if !ok {
		t.Fatal("docs/server.md: no transcript")
	}
	_, rest, _ = strings.Cut(rest, "```\n→ ")
	block, _, _ := strings.Cut("→ "+rest, "```")

	dir := filepath.Join(t.TempDir(), "tx")
	for name, content := range map[string]string{
		"shop/.clinerules/api.md": "---\npaths: [\"src/api/**\"]\n---\nAPI handlers return JSON errors with a code.\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rc := rawDial(t, serveAt(t, filepath.Join(dir, "tasklog.db"), Options{NoSync: true}))

	// canonical is an answer as the page would show it: the folder as /tmp/tx, the pid as the
	// page's, keys in order.
	canonical := func(line string, pid any) string {
		var v map[string]any
		if err := json.Unmarshal([]byte(strings.ReplaceAll(line, dir, "/tmp/tx")), &v); err != nil {
			t.Fatalf("answer %s: %v", line, err)
		}
		if r, ok := v["result"].(map[string]any); ok && r["pid"] != nil {
			r["pid"] = pid
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(v)
		return strings.TrimSpace(b.String())
	}
	var sent string
	var pid any
	asked := 0
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		switch {
		case strings.HasPrefix(line, "→ "):
			sent = strings.TrimPrefix(line, "→ ")
			if _, err := rc.Write([]byte(strings.ReplaceAll(sent, "/tmp/tx", dir) + "\n")); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(line, "← "):
			want := strings.TrimPrefix(line, "← ")
			if pid == nil {
				var hello struct{ Result struct{ Pid any } }
				json.Unmarshal([]byte(want), &hello)
				pid = hello.Result.Pid
			}
			got, err := rc.r.ReadString('\n')
			if err != nil {
				t.Fatalf("%s: %v", sent, err)
			}
			asked++
			if g, w := canonical(got, pid), canonical(want, pid); g != w {
				t.Errorf("%s\nanswered %s\nthe page %s", sent, g, w)
			}
		default:
			t.Fatalf("transcript line %q is neither sent nor received", line)
		}
	}
	if asked < 10 {
		t.Fatalf("%d answers compared, want the page's 11", asked)
	}
}
