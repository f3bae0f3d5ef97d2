package mcp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMCPExplain(t *testing.T) {
	f := newFixture(t)
	cfg := f.cfg
	cfg.Task = "0b3c"
	cs := connect(t, cfg)

	var out ExplainOut
	text := callTool(t, cs, "explain", map[string]any{"turn": 2, "rule": "backend"}, &out)
	if !strings.Contains(text, "prompt 1, request 2 (turn 2): backend (cline:/ws/.clinerules/backend.md) was included: matched") ||
		!strings.Contains(text, "paths services/api/** matched services/api/routes.ts, from tool_call read_file at seq") {
		t.Errorf("explain turn 2 backend:\n%s", text)
	}
	if out.Task != fixtureTask || len(out.Included) != 1 || out.Included[0].Name != "backend" || len(out.Excluded) != 0 ||
		len(out.Included[0].Matched) != 1 || len(out.Included[0].Matched[0].Evidence) == 0 {
		t.Errorf("explain turn 2 backend: %+v", out)
	}

	out = ExplainOut{}
	text = callTool(t, cs, "explain", map[string]any{"turn": 5}, &out)
	names := func(os []Outcome) (n []string) {
		for _, o := range os {
			n = append(n, o.Name)
		}
		return n
	}
	if !slices.Contains(names(out.Included), "frontend") || !slices.Contains(names(out.Excluded), "backend") {
		t.Errorf("turn 5: included %v, excluded %v", names(out.Included), names(out.Excluded))
	}
	if !strings.Contains(text, "+ frontend: matched") || !strings.Contains(text, "- no_match: ") {
		t.Errorf("turn 5 text:\n%s", text)
	}

	// A prompt names its last request; prompt and request name one.
	out = ExplainOut{}
	text = callTool(t, cs, "explain", map[string]any{"prompt": 1}, &out)
	if out.Turn != 3 || out.Prompt != 1 || out.Request != 3 || !strings.HasPrefix(text, "prompt 1, request 3 (turn 3) of task") {
		t.Errorf("explain prompt 1: turn %d, prompt %d, request %d:\n%s", out.Turn, out.Prompt, out.Request, text)
	}
	out = ExplainOut{}
	callTool(t, cs, "explain", map[string]any{"prompt": 1, "request": 2}, &out)
	if out.Turn != 2 {
		t.Errorf("explain prompt 1, request 2: turn %d, want 2", out.Turn)
	}

	// Another task named in the call wins over the current one.
	if text, isErr := callToolRaw(t, cs, "explain", map[string]any{"turn": 1, "task": "ffff"}, nil); !isErr ||
		!strings.Contains(text, `the call names task "ffff"`) || !strings.Contains(text, fixtureTask) {
		t.Errorf("explain in task ffff = %q, want an error naming the tasks there are", text)
	}
}

func TestMCPExplainErrors(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name string
		cfg  func(*Config)
		args map[string]any
		want []string
	}{
		{"no such turn", func(c *Config) { c.Task = fixtureTask }, map[string]any{"turn": 9},
			[]string{"has no decision at turn 9", "it has decisions at turns 1 to 5"}},
		{"no such prompt", func(c *Config) { c.Task = fixtureTask }, map[string]any{"prompt": 7},
			[]string{"has no decision at prompt 7", "its decisions are in prompts 1 to 2"}},
		{"turn and prompt", func(c *Config) { c.Task = fixtureTask }, map[string]any{"prompt": 1, "turn": 2},
			[]string{"give turn or prompt, not both"}},
		{"no such rule", func(c *Config) { c.Task = fixtureTask }, map[string]any{"turn": 2, "rule": "nope"},
			[]string{`decided about no rule "nope"`, "backend", "frontend", "style"}},
		{"no current task", func(*Config) {}, map[string]any{"turn": 1},
			[]string{"no current task", fixtureTask + " (", "events, turn "}},
		{"the session's task has no log", func(c *Config) { c.Session = "never-ran" }, map[string]any{"turn": 1},
			[]string{"the task of claude-code session never-ran", "has no log in", fixtureTask}},
		{"no database", func(c *Config) {
			none := filepath.Join(t.TempDir(), "none.db")
			c.Task, c.Store, c.Open = fixtureTask, none, openFile(none, time.Second)
		},
			map[string]any{"turn": 1}, []string{"no task log at"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := f.cfg
			tt.cfg(&cfg)
			text, isErr := callToolRaw(t, connect(t, cfg), "explain", tt.args, nil)
			if !isErr {
				t.Fatalf("explain(%v) succeeded: %s", tt.args, text)
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("error %q lacks %q", text, w)
				}
			}
		})
	}
}

// TestMCPSessionTask: the task the hooks of the same agent session write is the current one.
func TestMCPSessionTask(t *testing.T) {
	f := newFixture(t)
	id := sessionTask("claude-code", "sess-1")
	recordAs(t, f, id)
	cfg := f.cfg
	cfg.Session = "sess-1"
	var out TimelineOut
	callTool(t, connect(t, cfg), "timeline", map[string]any{"last": 1}, &out)
	if out.Task != id.String() {
		t.Errorf("timeline of task %s, want the session's task %s", out.Task, id)
	}
}

func TestMCPWhatif(t *testing.T) {
	f := newFixture(t)
	cfg := f.cfg
	cfg.Task = fixtureTask
	cs := connect(t, cfg)
	billing := "---\npaths: [\"services/billing/**\"]\n---\nBilling only.\n"

	var out WhatifOut
	text := callTool(t, cs, "whatif", map[string]any{"rule_file": ".clinerules/backend.md", "content": billing}, &out)
	if out.Changed != 3 || out.Decisions != 5 || out.Drift != 0 {
		t.Errorf("whatif backend → billing: %d of %d change (drift %d), want 3 of 5:\n%s", out.Changed, out.Decisions, out.Drift, text)
	}
	for _, c := range out.Changes {
		if c.Rule != "backend" || c.Recorded != "included" || c.Now != "excluded (no_match)" {
			t.Errorf("change %v, want backend included → excluded (no_match)", c)
		}
	}
	if !slices.Equal(out.Rules, []string{"cline:/ws/.clinerules/backend.md"}) ||
		!strings.HasPrefix(text, "3 of 5 decisions of task "+fixtureTask+" would change if /ws/.clinerules/backend.md read so") {
		t.Errorf("whatif: rules %v, text:\n%s", out.Rules, text)
	}
	// The file itself is unchanged: what-if writes nothing.
	if b, _ := os.ReadFile(filepath.Join(f.ws, ".clinerules", "backend.md")); strings.Contains(string(b), "billing") {
		t.Errorf("whatif wrote the rule file")
	}

	// A new rule file for every path, by its absolute name: it would join every decision.
	out = WhatifOut{}
	callTool(t, cs, "whatif", map[string]any{"rule_file": filepath.Join(f.ws, ".clinerules", "new.md"), "content": "Always this.\n"}, &out)
	if out.Changed != 5 || len(out.Changes) != 5 || out.Changes[0].Rule != "new" || out.Changes[0].Recorded != "absent" {
		t.Errorf("whatif new rule: %+v, want 5 decisions with it absent → included", out)
	}

	// Another file changed on disk since the task ran is drift, not this file's change.
	writeFile(t, filepath.Join(f.ws, ".clinerules", "frontend.md"), "---\npaths: [\"nothing/**\"]\n---\nGone.\n")
	out = WhatifOut{}
	callTool(t, cs, "whatif", map[string]any{"rule_file": ".clinerules/backend.md", "content": billing}, &out)
	if out.Changed != 3 || out.Drift == 0 {
		t.Errorf("whatif with frontend.md edited on disk: %d turns change, drift %d; want 3 and some drift", out.Changed, out.Drift)
	}
	for _, c := range out.Changes {
		if c.Rule != "backend" {
			t.Errorf("change %v is the edited frontend.md's, not backend.md's", c)
		}
	}
}

func TestMCPWhatifErrors(t *testing.T) {
	f := newFixture(t)
	cfg := f.cfg
	cfg.Task = fixtureTask
	cs := connect(t, cfg)
	tests := []struct {
		file, content string
		want          []string
	}{
		{"notes/backend.md", "x", []string{"notes/backend.md is not in a folder rules are read from", "/ws/.clinerules/backend.md"}},
		{"../escape.md", "x", []string{"not a file inside the workspace"}},
		{"/elsewhere/.clinerules/x.md", "x", []string{"outside the workspace roots"}},
		{"~/rules.md", "x", []string{"reads no global rules"}},
		{".clinerules/big.md", strings.Repeat("x", 300<<10), []string{"content: 307200 bytes"}},
	}
	for _, tt := range tests {
		text, isErr := callToolRaw(t, cs, "whatif", map[string]any{"rule_file": tt.file, "content": tt.content}, nil)
		if !isErr {
			t.Errorf("whatif(%s) succeeded: %s", tt.file, text)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(text, w) {
				t.Errorf("whatif(%s) error %q lacks %q", tt.file, text, w)
			}
		}
	}
}

func TestMCPTimeline(t *testing.T) {
	f := newFixture(t)
	cfg := f.cfg
	cfg.Task = fixtureTask
	cs := connect(t, cfg)

	var all TimelineOut
	text := callTool(t, cs, "timeline", nil, &all)
	if all.Turns != 5 || len(all.Lines) != 5 || all.NextCursor != "" {
		t.Fatalf("timeline: %d turns, %d lines, cursor %q; want 5, 5, none\n%s", all.Turns, len(all.Lines), all.NextCursor, text)
	}
	first := all.Lines[0].Line
	for _, want := range []string{"turn 1", `"Add a settings page under apps/web/src/pages`, "rules: frontend, general"} {
		if !strings.Contains(first, want) {
			t.Errorf("turn 1 line %q lacks %q", first, want)
		}
	}
	if !strings.Contains(all.Lines[1].Line, "2 tool calls: read_file") {
		t.Errorf("turn 2 line %q, want its tool calls", all.Lines[1].Line)
	}

	// Paged two at a time from the latest back, the pages cover every turn once, in order.
	var paged []TimelineTurn
	cursor := ""
	for range 10 {
		var page TimelineOut
		args := map[string]any{"last": 2}
		if cursor != "" {
			args["cursor"] = cursor
		}
		callTool(t, cs, "timeline", args, &page)
		paged = append(slices.Clone(page.Lines), paged...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if !slices.Equal(paged, all.Lines) {
		t.Errorf("paged:\n%v\nwant:\n%v", paged, all.Lines)
	}

	for _, args := range []map[string]any{{"last": 101}, {"cursor": "bogus"}, {"cursor": timelineCursor(sessionTask("x", "y"), 3)}} {
		if text, isErr := callToolRaw(t, cs, "timeline", args, nil); !isErr {
			t.Errorf("timeline(%v) succeeded: %s", args, text)
		}
	}
}

// TestMCPOpensPerCall: between calls the server holds no lock on the database, so another
// process can open it for writing.
func TestMCPOpensPerCall(t *testing.T) {
	f := newFixture(t)
	cfg := f.cfg
	cfg.Task = fixtureTask
	cs := connect(t, cfg)
	callTool(t, cs, "timeline", map[string]any{"last": 1}, nil)
	second := sessionTask("claude-code", "second")
	recordAs(t, f, second) // fails if the server still holds the file
	var out TimelineOut
	callTool(t, cs, "timeline", map[string]any{"task": second.String()}, &out)
	if out.Task != second.String() || out.Turns != 5 {
		t.Errorf("the task written between calls: %+v", out)
	}
}
