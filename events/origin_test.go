package events

import (
	"strings"
	"testing"
)

// TestTaskStartedOrigin: the machine and user of task_started are recorded and read back; a
// task_started without them (every log recorded before they were kept) keeps its bytes.
func TestTaskStartedOrigin(t *testing.T) {
	tests := []struct {
		name string
		p    *TaskStarted
		data string
	}{
		{"none", &TaskStarted{Roots: []string{"/ws"}, Runtime: Runtime{Name: "claude-code"}, OS: "linux"},
			`{"roots":["/ws"],"runtime":{"name":"claude-code"},"os":"linux"}`},
		{"both", &TaskStarted{Roots: []string{"/ws"}, Runtime: Runtime{Name: "claude-code"}, OS: "linux", Session: "s1", Machine: "build-7", User: "ana"},
			`{"roots":["/ws"],"runtime":{"name":"claude-code"},"os":"linux","session":"s1","machine":"build-7","user":"ana"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := New(tt.p)
			if err != nil {
				t.Fatal(err)
			}
			if string(e.Data) != tt.data {
				t.Fatalf("data %s, want %s", e.Data, tt.data)
			}
			p, err := e.Payload()
			if err != nil {
				t.Fatal(err)
			}
			got := p.(*TaskStarted)
			if got.Machine != tt.p.Machine || got.User != tt.p.User {
				t.Fatalf("read back machine %q user %q, want %q %q", got.Machine, got.User, tt.p.Machine, tt.p.User)
			}
			s := Summary(e)
			if tt.p.Machine != "" && !strings.Contains(s, "; machine build-7; user ana") {
				t.Fatalf("summary %q does not name the machine and user", s)
			}
		})
	}
}
