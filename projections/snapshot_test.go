package projections

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/events"
)

func TestDecodeConfig(t *testing.T) {
	def := DefaultConfig()
	tests := []struct {
		raw     string
		want    Config
		wantErr string // substring; "" for success
	}{
		{"", def, ""},
		{"null", def, ""},
		{"{}", def, ""},
		{`{"max_paths":5}`, Config{MaxPaths: 5, MaxSources: 8, ToolTurns: 3, UserMessages: 1, SnapshotEvery: 256}, ""},
		{`{"tool_turns":0,"user_messages":2,"snapshot_every":0,"max_sources":1}`,
			Config{MaxPaths: 100, MaxSources: 1, ToolTurns: 0, UserMessages: 2, SnapshotEvery: 0}, ""},
		{`{"max_path":5}`, Config{}, `unknown field "max_path"`},
		{`{"max_paths":-1}`, Config{}, "max_paths is -1"},
		{`{"max_paths":0}`, Config{}, "max_paths is 0"},
		{`{"tool_turns":-3}`, Config{}, "tool_turns is -3"},
		{`{"max_sources":0}`, Config{}, "max_sources is 0"},
		{`{"max_paths":"5"}`, Config{}, "max_paths"},
		{`{"max_paths":1.5}`, Config{}, "max_paths"},
		{`[]`, Config{}, "object"},
		{`{} {}`, Config{}, "trailing"},
	}
	for _, tt := range tests {
		got, err := DecodeConfig(json.RawMessage(tt.raw))
		if tt.wantErr == "" {
			if err != nil || got != tt.want {
				t.Errorf("DecodeConfig(%s) = %+v, %v, want %+v", tt.raw, got, err, tt.want)
			}
			continue
		}
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("DecodeConfig(%s) error = %v, want ErrConfig mentioning %q", tt.raw, err, tt.wantErr)
		}
	}
}

func TestRestoreErrors(t *testing.T) {
	b := newLog(t, ws, "")
	b.tool("read_file", `{"path":"a.ts"}`)
	good, err := b.fold().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	other := bytes.Replace(good, fmt.Appendf(nil, `{"version":%d,`, Version), fmt.Appendf(nil, `{"version":%d,`, Version+1), 1)
	badRoot := bytes.Replace(good, []byte(`"root":0`), []byte(`"root":9`), 1)
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"other version", other, ErrSnapshotVersion},
		{"not json", []byte("nope"), ErrSnapshotCorrupt},
		{"no version", []byte(`{}`), ErrSnapshotCorrupt},
		{"unknown field", bytes.Replace(good, []byte(`"started"`), []byte(`"x":1,"started"`), 1), ErrSnapshotCorrupt},
		{"root out of range", badRoot, ErrSnapshotCorrupt},
	}
	for _, tt := range tests {
		if _, err := Restore(tt.b); !errors.Is(err, tt.want) {
			t.Errorf("%s: Restore = %v, want %v", tt.name, err, tt.want)
		}
	}
}

// TestIncrementalFoldResume is the property the session relies on: for random logs, the context
// (with its dropped counts) after every event is the same bytes whether the Task was applied
// event by event, folded from scratch up to that event, or restored from a snapshot taken at any
// earlier cut and fed the tail; and the snapshots themselves agree byte for byte.
func TestIncrementalFoldResume(t *testing.T) {
	seeds := uint64(10)
	if testing.Short() {
		seeds = 3
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 0x7a5c))
			b := randomLog(t, r, 120)
			n := len(b.evs)
			incremental := New()
			want := make([][]byte, n+1) // want[i]: after i events
			snaps := make([][]byte, n+1)
			var reused []byte
			for i := 0; i <= n; i++ {
				if i > 0 {
					if err := incremental.Apply(b.evs[i-1]); err != nil {
						t.Fatal(err)
					}
				}
				want[i] = contextJSON(t, incremental)
				s, err := incremental.Marshal()
				if err != nil {
					t.Fatal(err)
				}
				snaps[i] = s
				// Encoded in the memory of the snapshot before, as a session does, and as
				// json.Marshal encodes the state.
				if reused, err = incremental.AppendMarshal(reused[:0]); err != nil || !bytes.Equal(reused, s) {
					t.Fatalf("after %d events: AppendMarshal %s (%v), Marshal %s", i, reused, err, s)
				}
				if plain, err := json.Marshal(incremental.snapshot()); err != nil || !bytes.Equal(plain, s) {
					t.Fatalf("after %d events: json.Marshal %s (%v), Marshal %s", i, plain, err, s)
				}
			}
			for i := 0; i <= n; i += 1 + r.IntN(7) {
				full := New()
				for _, ev := range b.evs[:i] {
					if err := full.Apply(ev); err != nil {
						t.Fatal(err)
					}
				}
				if got := contextJSON(t, full); !bytes.Equal(got, want[i]) {
					t.Fatalf("full fold of %d events:\n%s\nincremental:\n%s", i, got, want[i])
				}
			}
			for cut := 0; cut <= n; cut++ {
				resumed, err := Restore(snaps[cut])
				if err != nil {
					t.Fatalf("restore at %d: %v", cut, err)
				}
				for i := cut; i <= n; i++ {
					if i > cut {
						if err := resumed.Apply(b.evs[i-1]); err != nil {
							t.Fatalf("resumed at %d, event %d: %v", cut, i, err)
						}
					}
					if got := contextJSON(t, resumed); !bytes.Equal(got, want[i]) {
						t.Fatalf("resumed at %d, after %d events:\n%s\nincremental:\n%s", cut, i, got, want[i])
					}
				}
				if s, _ := resumed.Marshal(); !bytes.Equal(s, snaps[n]) {
					t.Fatalf("resumed at %d: final snapshot differs", cut)
				}
			}
		})
	}
}

// randomLog makes a log that exercises every source, the windows and the caps: small caps, few
// distinct paths so they repeat, roots in both spellings, and paths that are dropped.
func randomLog(tb testing.TB, r *rand.Rand, n int) *logBuilder {
	roots := []string{"/ws/app", `C:\Users\dev\lib`, "/ws/app/nested"}[:1+r.IntN(3)]
	cfg := fmt.Sprintf(`{"max_paths":%d,"max_sources":%d,"tool_turns":%d,"user_messages":%d}`,
		1+r.IntN(8), 1+r.IntN(4), r.IntN(4), r.IntN(3))
	b := newLog(tb, roots, cfg)
	path := func() string {
		names := []string{"a.ts", "src/b.go", "src/c/", "nested/d.md", "../x.ts", "/ws/app/e.ts",
			`C:\Users\dev\lib\f.py`, "c:/Users/dev/lib/g/", "/tmp/h.ts", "~/i.ts", "file:///ws/app/j%20k.ts",
			"/ws/app/nested/l.ts", "https://x/y", "/ws/app"}
		return names[r.IntN(len(names))]
	}
	for range n {
		switch r.IntN(12) {
		case 0, 1:
			b.user(fmt.Sprintf("edit %s and %s, see @/%s", path(), path(), strings.TrimLeft(path(), "/")))
		case 2:
			b.add(&events.Mention{Path: path()})
		case 3, 4:
			b.add(&events.ToolCall{Tool: "read_file", Params: json.RawMessage(fmt.Sprintf(`{"path":%q}`, path()))})
		case 5:
			b.tool("Bash", `{"command":`+quote("cat "+strings.ReplaceAll(path(), `\`, "/")+" "+path())+`}`)
		case 6:
			b.add(&events.ToolCall{Tool: "list_files", Params: json.RawMessage(fmt.Sprintf(`{"path":%q}`, path())),
				Cwd: []string{"", "/ws/app/src", "nested"}[r.IntN(3)]})
		case 7:
			b.add(&events.TabSnapshot{Open: []string{path(), path(), path()}, Visible: []string{path()}})
		case 8:
			b.add(&events.FileWrite{Path: path(), Op: []string{events.OpCreate, events.OpEdit, events.OpDelete}[r.IntN(3)]})
		case 9, 10:
			b.decide()
		case 11:
			switch r.IntN(3) {
			case 0:
				b.add(&events.SettingsChanged{Mode: []string{"act", "plan"}[r.IntN(2)], Model: fmt.Sprint("m", r.IntN(3))})
			case 1:
				b.add(&events.RuleToggled{Rule: fmt.Sprint("r", r.IntN(3)), Enabled: r.IntN(2) == 0})
			default:
				b.add(&events.RuleTriggered{Rule: fmt.Sprint("r", r.IntN(3)), Name: "n", Source: "s", Match: "m"})
			}
		}
	}
	return b
}

// Next is Context and Dropped built in one pass; it must give exactly what they give, on a log
// that drops paths for several reasons (outside the root, .., over the cap).
func TestNextIsContextAndDropped(t *testing.T) {
	evs := realisticLog(t, 3000)
	task := New()
	sawDrops := false
	for i, ev := range evs {
		if err := task.Apply(ev); err != nil {
			t.Fatal(err)
		}
		if i%97 != 0 {
			continue
		}
		ctx, dropped := task.Next()
		sawDrops = sawDrops || len(dropped) > 0
		if !reflect.DeepEqual(ctx, task.Context()) || !reflect.DeepEqual(dropped, task.Dropped()) {
			t.Fatalf("after seq %d: Next differs from Context and Dropped", ev.Seq)
		}
	}
	if !sawDrops {
		t.Fatal("the log dropped no path: the test compares nothing of Dropped")
	}
}
