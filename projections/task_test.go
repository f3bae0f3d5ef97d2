package projections

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/rules"
)

var ws = []string{"/ws/app", "/ws/lib"}

func TestEachSource(t *testing.T) {
	tests := []struct {
		name  string
		build func(b *logBuilder)
		want  []rules.ContextPath
	}{
		{"prose", func(b *logBuilder) { b.user("fix src/a.ts and @/docs/x.md") }, []rules.ContextPath{
			{Path: "docs/x.md", Root: "/ws/app", Sources: []rules.Source{{Kind: rules.SourceProse, Seq: 2, Turn: 1}}},
			{Path: "src/a.ts", Root: "/ws/app", Sources: []rules.Source{{Kind: rules.SourceProse, Seq: 2, Turn: 1}}},
		}},
		{"mention resolved", func(b *logBuilder) {
			b.user("look")
			b.add(&events.Mention{Path: "/src/a.ts", Resolved: "/ws/lib/src/a.ts"})
		}, []rules.ContextPath{
			{Path: "src/a.ts", Root: "/ws/lib", Sources: []rules.Source{{Kind: rules.SourceMention, Seq: 3, Turn: 1, Detail: "/src/a.ts"}}},
		}},
		{"mention unresolved is workspace-relative", func(b *logBuilder) {
			b.user("look")
			b.add(&events.Mention{Path: "/src/a.ts"})
		}, []rules.ContextPath{
			{Path: "src/a.ts", Root: "/ws/app", Sources: []rules.Source{{Kind: rules.SourceMention, Seq: 3, Turn: 1, Detail: "/src/a.ts"}}},
		}},
		{"tool call with cwd", func(b *logBuilder) {
			b.add(&events.ToolCall{Tool: "read_file", Params: json.RawMessage(`{"path":"util.go"}`), Cwd: "/ws/lib"})
		}, []rules.ContextPath{
			{Path: "util.go", Root: "/ws/lib", Sources: []rules.Source{{Kind: rules.SourceTool, Seq: 2, Turn: 1, Detail: "read_file"}}},
		}},
		{"shell", func(b *logBuilder) { b.tool("Bash", `{"command":"cat src/a.ts"}`) }, []rules.ContextPath{
			{Path: "src/a.ts", Root: "/ws/app", Sources: []rules.Source{{Kind: rules.SourceShell, Seq: 2, Turn: 1, Detail: "Bash"}}},
		}},
		{"tabs", func(b *logBuilder) {
			b.add(&events.TabSnapshot{Open: []string{"/ws/app/a.ts", "/ws/app/b.ts"}, Visible: []string{"/ws/app/b.ts"}})
		}, []rules.ContextPath{
			{Path: "a.ts", Root: "/ws/app", Sources: []rules.Source{{Kind: rules.SourceTab, Seq: 2, Turn: 1, Detail: "open"}}},
			{Path: "b.ts", Root: "/ws/app", Sources: []rules.Source{
				{Kind: rules.SourceTab, Seq: 2, Turn: 1, Detail: "open"}, {Kind: rules.SourceTab, Seq: 2, Turn: 1, Detail: "visible"}}},
		}},
		{"file write", func(b *logBuilder) { b.add(&events.FileWrite{Path: "/ws/app/new.ts", Op: events.OpCreate}) }, []rules.ContextPath{
			{Path: "new.ts", Root: "/ws/app", Sources: []rules.Source{{Kind: rules.SourceFileWrite, Seq: 2, Turn: 1, Detail: "create"}}},
		}},
		{"sources merge across kinds, oldest first", func(b *logBuilder) {
			b.user("edit src/a.ts")
			b.tool("read_file", `{"path":"src/a.ts"}`)
			b.add(&events.FileWrite{Path: "src/a.ts", Op: events.OpEdit})
		}, []rules.ContextPath{
			{Path: "src/a.ts", Root: "/ws/app", Sources: []rules.Source{
				{Kind: rules.SourceProse, Seq: 2, Turn: 1},
				{Kind: rules.SourceTool, Seq: 3, Turn: 1, Detail: "read_file"},
				{Kind: rules.SourceFileWrite, Seq: 4, Turn: 1, Detail: "edit"}}},
		}},
		{"same path in two roots", func(b *logBuilder) {
			b.add(&events.FileWrite{Path: "/ws/lib/x.go", Op: events.OpEdit})
			b.add(&events.FileWrite{Path: "/ws/app/x.go", Op: events.OpEdit})
		}, []rules.ContextPath{
			{Path: "x.go", Root: "/ws/app", Sources: []rules.Source{{Kind: rules.SourceFileWrite, Seq: 3, Turn: 1, Detail: "edit"}}},
			{Path: "x.go", Root: "/ws/lib", Sources: []rules.Source{{Kind: rules.SourceFileWrite, Seq: 2, Turn: 1, Detail: "edit"}}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newLog(t, ws, "")
			tt.build(b)
			got := b.fold().Context().Paths
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("paths =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

func TestContextSettings(t *testing.T) {
	b := newLog(t, ws, "")
	b.add(&events.SettingsChanged{Mode: "plan", Provider: "anthropic", Model: "claude-sonnet-4-5"})
	b.add(&events.SettingsChanged{Mode: "act"})
	c := b.fold().Context()
	want := rules.EvaluationContext{Paths: []rules.ContextPath{}, Mode: "act", Provider: "anthropic",
		Model: "claude-sonnet-4-5", OS: "linux"}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("context = %+v, want %+v", c, want)
	}
}

func TestWindows(t *testing.T) {
	b := newLog(t, ws, "")
	check := func(step string, want ...string) {
		t.Helper()
		if got := pathsOf(b.fold().Context()); !slices.Equal(got, want) {
			t.Errorf("%s: paths %q, want %q", step, got, want)
		}
	}
	b.user("edit prose1.md")
	b.add(&events.Mention{Path: "/mention1.md"})
	b.tool("read_file", `{"path":"tool1.ts"}`)
	b.add(&events.FileWrite{Path: "write1.ts", Op: events.OpEdit})
	b.add(&events.TabSnapshot{Open: []string{"tab1.ts"}})
	check("turn 1", "mention1.md", "prose1.md", "tab1.ts", "tool1.ts", "write1.ts")

	b.decide() // turn 2: the user turn goes on, so prose and mention still count
	check("turn 2", "mention1.md", "prose1.md", "tab1.ts", "tool1.ts", "write1.ts")

	b.user("now something else")
	check("next user message", "tab1.ts", "tool1.ts", "write1.ts")

	b.add(&events.TabSnapshot{Open: []string{"tab2.ts"}, Visible: []string{}})
	check("tab replaced", "tab2.ts", "tool1.ts", "write1.ts")

	b.decide() // turn 3: tool1 (turn 1) counts for turns 1, 2 and 3
	check("turn 3", "tab2.ts", "tool1.ts", "write1.ts")
	b.decide() // turn 4
	check("turn 4: tool target gone", "tab2.ts", "write1.ts")
	for range 20 {
		b.decide()
	}
	check("file write kept", "tab2.ts", "write1.ts")
}

func TestToolWindowKeepsOnlyRecentSources(t *testing.T) {
	b := newLog(t, ws, "")
	b.tool("read_file", `{"path":"a.ts"}`) // turn 1
	b.decide()
	b.decide()
	b.decide()
	b.tool("read_file", `{"path":"a.ts"}`) // turn 4: the turn 1 source is out of the window
	got := b.fold().Context().Paths
	want := []rules.Source{{Kind: rules.SourceTool, Seq: 6, Turn: 4, Detail: "read_file"}}
	if len(got) != 1 || !reflect.DeepEqual(got[0].Sources, want) {
		t.Errorf("paths = %+v, want a.ts with %+v", got, want)
	}
}

func TestCapKeepsNewest(t *testing.T) {
	b := newLog(t, ws, "")
	for i := range 150 {
		b.tool("read_file", fmt.Sprintf(`{"path":"f%03d.ts"}`, i))
	}
	task := b.fold()
	got := pathsOf(task.Context())
	var want []string
	for i := 50; i < 150; i++ {
		want = append(want, fmt.Sprintf("f%03d.ts", i))
	}
	if !slices.Equal(got, want) {
		t.Errorf("kept %d paths %q…, want the newest 100 %q…", len(got), got[:3], want[:3])
	}
	if d := task.Dropped(); !reflect.DeepEqual(d, []events.Count{{Name: ReasonOverCap, N: 50}}) {
		t.Errorf("dropped = %v, want over_cap 50", d)
	}
}

func TestCapKeepsByConfidence(t *testing.T) {
	b := newLog(t, ws, `{"max_paths":3}`)
	b.user("see prose.md")
	b.add(&events.Mention{Path: "mention.md"})
	b.tool("Bash", `{"command":"cat shell.md"}`)
	b.add(&events.TabSnapshot{Open: []string{"tab.md"}})
	b.add(&events.FileWrite{Path: "write.md", Op: events.OpEdit})
	b.tool("read_file", `{"path":"tool.md"}`)
	task := b.fold()
	if got, want := pathsOf(task.Context()), []string{"mention.md", "tool.md", "write.md"}; !slices.Equal(got, want) {
		t.Errorf("paths %q, want %q", got, want)
	}
	if d := task.Dropped(); !reflect.DeepEqual(d, []events.Count{{Name: ReasonOverCap, N: 3}}) {
		t.Errorf("dropped = %v, want over_cap 3", d)
	}
}

func TestSourcesPerPathBounded(t *testing.T) {
	b := newLog(t, ws, "")
	for range 20 {
		b.tool("read_file", `{"path":"a.ts"}`)
	}
	src := b.fold().Context().Paths[0].Sources
	if len(src) != 8 || src[0].Seq != 14 || src[7].Seq != 21 {
		t.Errorf("sources = %+v, want the newest 8 (seq 14..21)", src)
	}
}

func TestDropped(t *testing.T) {
	b := newLog(t, ws, "")
	b.user("look at ~/x.md")
	b.add(&events.Mention{Path: "/etc/passwd", Resolved: "/etc/passwd"})
	b.tool("read_file", `{"path":"../escape.ts"}`)
	b.tool("read_file", `{"path":"/tmp/a.ts"}`)
	b.add(&events.TabSnapshot{Open: []string{"untitled:Untitled-1", "/ws/app"}})
	b.add(&events.FileWrite{Path: "C:x.ts", Op: events.OpCreate})
	task := b.fold()
	want := []events.Count{{Name: ReasonDotDot, N: 1}, {Name: ReasonNotAPath, N: 1},
		{Name: ReasonOutsideRoot, N: 2}, {Name: ReasonRoot, N: 1}, {Name: ReasonUnmappable, N: 1}}
	if d := task.Dropped(); !reflect.DeepEqual(d, want) {
		t.Errorf("dropped = %v, want %v", d, want)
	}
	// Prose (~/x.md is not even extracted: absolute-like) and the mention leave with the user
	// turn; the tool drops with their turns; tab and write drops stay.
	b.user("next")
	for range 3 {
		b.decide()
	}
	want = []events.Count{{Name: ReasonNotAPath, N: 1}, {Name: ReasonRoot, N: 1}, {Name: ReasonUnmappable, N: 1}}
	if d := b.fold().Dropped(); !reflect.DeepEqual(d, want) {
		t.Errorf("after the windows: dropped = %v, want %v", d, want)
	}
}

func TestApplyErrors(t *testing.T) {
	good := newLog(t, ws, "")
	good.user("hi")
	unknown := good.evs[1]
	unknown.Type = "bogus"
	gap := good.evs[1]
	gap.Seq = 5
	wrongTurn := good.evs[1]
	wrongTurn.Turn = 2
	badPayload := good.evs[1]
	badPayload.Data = []byte(`{"text":1}`)
	tests := []struct {
		name  string
		first events.Event // nil Type: apply good.evs[0] first
		ev    events.Event
		want  error
	}{
		{"not started", events.Event{}, good.evs[1], ErrNotStarted},
		{"unknown type", good.evs[0], unknown, events.ErrUnknownType},
		{"started twice", good.evs[0], func() events.Event { e := good.evs[0]; e.Seq = 2; return e }(), ErrStartedTwice},
		{"gap", good.evs[0], gap, ErrOutOfOrder},
		{"wrong turn", good.evs[0], wrongTurn, ErrOutOfOrder},
		{"invalid payload", good.evs[0], badPayload, events.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := New()
			if tt.first.Type != "" {
				if err := task.Apply(tt.first); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := task.Marshal()
			err := task.Apply(tt.ev)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Apply = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("seq %d (%s)", tt.ev.Seq, tt.ev.Type)) {
				t.Errorf("error %q does not name the event", err)
			}
			if after, _ := task.Marshal(); string(after) != string(before) {
				t.Errorf("a failed Apply changed the state")
			}
		})
	}
}

func TestDecisionTurnMustMatch(t *testing.T) {
	b := newLog(t, ws, "")
	ev, err := events.New(&events.Decision{Turn: 2, Engine: "x"})
	if err != nil {
		t.Fatal(err)
	}
	ev.Seq, ev.Turn = 2, 1
	if err := b.fold().Apply(ev); !errors.Is(err, ErrOutOfOrder) {
		t.Errorf("Apply = %v, want ErrOutOfOrder", err)
	}
}

func TestBadConfigFailsTaskStarted(t *testing.T) {
	ev, err := events.New(&events.TaskStarted{Roots: ws, Config: json.RawMessage(`{"max_paths":-1}`)})
	if err != nil {
		t.Fatal(err)
	}
	ev.Seq, ev.Turn = 1, 1
	if err := New().Apply(ev); !errors.Is(err, ErrConfig) {
		t.Errorf("Apply = %v, want ErrConfig", err)
	}
}

func TestBookkeeping(t *testing.T) {
	b := newLog(t, ws, `{"tool_turns":5}`)
	b.add(&events.RuleToggled{Rule: "a", Enabled: false})
	b.add(&events.RuleToggled{Rule: "b", Enabled: true})
	b.add(&events.RuleToggled{Rule: "a", Enabled: true})
	files := []events.SnapshotFile{{Provider: "cline", Scope: "workspace", Path: ".clinerules/x.md", Blob: strings.Repeat("ab", 32), Size: 3}}
	snap := b.add(&events.RulesSnapshot{Files: files})
	b.decide()
	b.add(&events.RuleTriggered{Rule: "r", Name: "r", Source: "s", Match: "m"})
	b.add(&events.RuleTriggered{Rule: "r", Name: "r", Source: "s", Match: "m"})
	task := b.fold()
	if got := task.Toggles(); !reflect.DeepEqual(got, map[string]bool{"a": true, "b": true}) {
		t.Errorf("toggles = %v", got)
	}
	if on, ok := task.Toggled("a"); !on || !ok {
		t.Errorf("Toggled(a) = %v, %v", on, ok)
	}
	if _, ok := task.Toggled("zzz"); ok {
		t.Errorf("Toggled(zzz) reports a toggle")
	}
	if seq, f := task.LastSnapshot(); seq != snap.Seq || !reflect.DeepEqual(f, files) {
		t.Errorf("LastSnapshot = %d %v", seq, f)
	}
	if task.Decisions() != 1 || task.Turn() != 2 || task.TriggerCount("r") != 2 || task.TriggerCount("x") != 0 {
		t.Errorf("decisions %d turn %d triggers %d", task.Decisions(), task.Turn(), task.TriggerCount("r"))
	}
	if task.LastSeq() != uint64(len(b.evs)) || task.Config().ToolTurns != 5 || task.Config().MaxPaths != 100 {
		t.Errorf("last seq %d config %+v", task.LastSeq(), task.Config())
	}
	if !slices.Equal(task.Roots(), ws) || task.Runtime().Name != "test" {
		t.Errorf("roots %v runtime %v", task.Roots(), task.Runtime())
	}
}

func TestFold(t *testing.T) {
	b := newLog(t, ws, "")
	b.user("edit a/b.ts")
	task, err := Fold(func(yield func(events.Event, error) bool) {
		for _, ev := range b.evs {
			if !yield(ev, nil) {
				return
			}
		}
	})
	if err != nil || !slices.Equal(pathsOf(task.Context()), []string{"a/b.ts"}) {
		t.Fatalf("Fold = %v, %v", task, err)
	}
	boom := errors.New("boom")
	_, err = Fold(func(yield func(events.Event, error) bool) { yield(events.Event{}, boom) })
	if !errors.Is(err, boom) {
		t.Errorf("Fold of a failing log = %v, want boom", err)
	}
}
