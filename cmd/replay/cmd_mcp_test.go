package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The monorepo session's task, recorded by mcpFixture.
const mcpTask = "0b3c7f2a-1d4e-4f5a-9b6c-7d8e9f0a1b2c"

// mcpWorkspace is the monorepo's rules plus an on-request rule, a rule a higher-precedence one
// of the same name shadows, and a rule whose name needs escaping in a URI.
var mcpWorkspace = map[string]string{
	".cursor/rules/style.mdc":   "---\ndescription: How CSS classes are named\nalwaysApply: false\n---\nUse BEM: block__element--modifier.\n",
	".clinerules/api notes.md":  "---\npaths: [\"services/**\"]\n---\nDocument every route.\n",
	".cursor/rules/general.mdc": "---\nalwaysApply: true\n---\nThe Cursor general rule.\n",
}

type mcpFixtureT struct {
	ws, db string
	cfg    mcpConfig
}

// mcpFixture records the monorepo session into a database against a copy of its workspace
// (with mcpWorkspace added) mapped to its recorded root /ws.
func mcpFixture(t *testing.T) mcpFixtureT {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	src := filepath.Join(repoRoot(t), "testdata", "workspaces", "monorepo", "ws")
	if err := os.CopyFS(ws, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	for name, body := range mcpWorkspace {
		mcpWriteFile(t, filepath.Join(ws, name), body)
	}
	db := filepath.Join(dir, "tasklog.db")
	script := filepath.Join(repoRoot(t), "testdata", "sessions", "monorepo.jsonl")
	mcpRecordInto(t, db, script, ws)
	cfg := mcpConfig{db: db, timeout: time.Second, agent: "claude-code"}
	cfg.wf.roots = multiFlag{"/ws=" + ws}
	return mcpFixtureT{ws: ws, db: db, cfg: cfg}
}

func mcpRecordInto(t *testing.T, db, script, ws string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"record", script, "--root", "/ws=" + ws, "--db", db}, &stdout, &stderr); code != 0 {
		t.Fatalf("record %s: exit %d: %s", script, code, stderr.String())
	}
}

func mcpWriteFile(t *testing.T, name, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// mcpConnect serves cfg in process and connects the SDK's client to it in memory.
func mcpConnect(t *testing.T, cfg mcpConfig) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := newMCPServer(cfg).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// mcpCallTool calls a tool and decodes its structured result into out; it returns the text.
func mcpCallTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) string {
	t.Helper()
	text, isErr := mcpCallToolRaw(t, cs, name, args, out)
	if isErr {
		t.Fatalf("%s(%v): tool error: %s", name, args, text)
	}
	return text
}

// mcpCallToolRaw calls a tool and reports its text and whether it is a tool error.
func mcpCallToolRaw(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if out != nil && !res.IsError {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: structured content %s: %v", name, b, err)
		}
	}
	return text.String(), res.IsError
}

func TestMCPResources(t *testing.T) {
	f := mcpFixture(t)
	cs := mcpConnect(t, f.cfg)
	ctx := context.Background()
	byURI := map[string]*mcp.Resource{}
	var uris []string
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		byURI[r.URI] = r
		uris = append(uris, r.URI)
	}
	shadowedURI := "rule://cline:/ws/.clinerules/general.md"
	if byURI[shadowedURI] == nil {
		shadowedURI = "rule://cursor:/ws/.cursor/rules/general.mdc"
	}
	want := []string{"rule://api%20notes", "rule://backend", "rule://frontend", "rule://general", "rule://style", shadowedURI}
	slices.Sort(want)
	if !slices.Equal(uris, want) {
		t.Fatalf("resources:\n got %q\nwant %q", uris, want)
	}
	if d := byURI["rule://style"].Description; d != "How CSS classes are named" {
		t.Errorf("on-request rule's description = %q, want its frontmatter description", d)
	}
	if d := byURI[shadowedURI].Description; !strings.Contains(d, "shadowed by") {
		t.Errorf("shadowed rule's description = %q, want it to say by which rule", d)
	}
	var templates []string
	for rt, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		templates = append(templates, rt.URITemplate)
	}
	if !slices.Equal(templates, []string{"rule://{+name}"}) {
		t.Errorf("templates = %q", templates)
	}

	tests := []struct{ uri, want string }{
		{"rule://frontend", "Components live in apps/web/src/components"},
		{"rule://style", "Use BEM"},
		{"rule://api%20notes", "Document every route."},
	}
	for _, tt := range tests {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: tt.uri})
		if err != nil {
			t.Errorf("read %s: %v", tt.uri, err)
			continue
		}
		if len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, tt.want) {
			t.Errorf("read %s = %+v, want text with %q", tt.uri, res.Contents, tt.want)
		}
	}
	// The winner of a shadowed name and the shadowed rule are different bodies.
	winner, _ := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "rule://general"})
	loser, _ := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: shadowedURI})
	if winner == nil || loser == nil || winner.Contents[0].Text == loser.Contents[0].Text {
		t.Errorf("rule://general and %s read the same body", shadowedURI)
	}
}

func TestMCPResourceErrors(t *testing.T) {
	f := mcpFixture(t)
	cs := mcpConnect(t, f.cfg)
	ctx := context.Background()
	_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "rule://nope"})
	if err == nil || !strings.Contains(err.Error(), `no rule "nope"`) ||
		!strings.Contains(err.Error(), "the rules are: api notes, backend, frontend, general, style") {
		t.Errorf("read rule://nope: %v, want an error naming the rules there are", err)
	}
	_, err = cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: "%%%"})
	if err == nil || !strings.Contains(err.Error(), "invalid cursor") {
		t.Errorf("list with a bad cursor: %v, want invalid cursor", err)
	}
}

// TestMCPResourcePages lists 120 rules in pages and reads every one back.
func TestMCPResourcePages(t *testing.T) {
	ws := t.TempDir()
	for i := range 120 {
		mcpWriteFile(t, filepath.Join(ws, ".clinerules", fmt.Sprintf("r%03d.md", i)), fmt.Sprintf("Rule %d.\n", i))
	}
	cs := mcpConnect(t, mcpConfig{db: filepath.Join(ws, "none.db"), wf: workspaceFlags{workspace: ws}})
	ctx := context.Background()
	var pages []int
	var uris []string
	cursor := ""
	for {
		res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, len(res.Resources))
		for _, r := range res.Resources {
			uris = append(uris, r.URI)
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	if !slices.Equal(pages, []int{50, 50, 20}) {
		t.Errorf("pages of %v resources, want 50, 50, 20", pages)
	}
	if len(uris) != 120 || !slices.IsSorted(uris) || len(slices.Compact(slices.Clone(uris))) != 120 {
		t.Fatalf("got %d resources (sorted %v), want 120 distinct, sorted", len(uris), slices.IsSorted(uris))
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uris[119]})
	if err != nil || res.Contents[0].Text != "Rule 119." {
		t.Errorf("read %s = %v, %v", uris[119], res, err)
	}
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "rule://r999"})
	if err == nil || !strings.Contains(err.Error(), "and 100 more") {
		t.Errorf("read rule://r999: %v, want a mcpBounded list of the rules", err)
	}
}

func TestMCPTools(t *testing.T) {
	f := mcpFixture(t)
	cs := mcpConnect(t, f.cfg)
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
		if tool.InputSchema == nil || tool.OutputSchema == nil || tool.Description == "" {
			t.Errorf("tool %s: want an input schema, an output schema and a description", tool.Name)
		}
	}
	if want := []string{"explain", "rules_for", "timeline", "whatif"}; !slices.Equal(names, want) {
		t.Errorf("tools = %q, want %q", names, want)
	}
}

func TestMCPRulesFor(t *testing.T) {
	f := mcpFixture(t)
	cs := mcpConnect(t, f.cfg)
	var out mcpRulesForOut
	abs := filepath.Join(f.ws, "services", "api", "routes.ts")
	text := mcpCallTool(t, cs, "rules_for", map[string]any{"paths": []string{"apps/web/src/App.tsx", abs, "../outside.md"}}, &out)

	apply := map[string]mcpRule{}
	for _, r := range out.Apply {
		apply[r.Name] = r
	}
	fe, ok := apply["frontend"]
	if !ok || len(fe.Matched) != 1 || fe.Matched[0].Pattern != "apps/web/**" || fe.Matched[0].Path != "apps/web/src/App.tsx" {
		t.Errorf("frontend: %+v, want applying, apps/web/** matched apps/web/src/App.tsx", fe)
	}
	if be := apply["backend"]; len(be.Matched) != 1 || be.Matched[0].Path != "services/api/routes.ts" {
		t.Errorf("backend: %+v, want the absolute path in the workspace folder matched as services/api/routes.ts", be)
	}
	if g := apply["general"]; g.Reason != "always" || g.URI != "rule://general" {
		t.Errorf("general: %+v, want always, rule://general", g)
	}
	if len(out.OnRequest) != 1 || out.OnRequest[0].Name != "style" || out.OnRequest[0].URI != "rule://style" ||
		out.OnRequest[0].Description != "How CSS classes are named" {
		t.Errorf("on_request = %+v, want style with its description and address", out.OnRequest)
	}
	if last := out.Paths[len(out.Paths)-1]; last.Dropped != "dotdot" {
		t.Errorf("../outside.md: %+v, want dropped (dotdot)", last)
	}
	for _, want := range []string{`frontend (rule://frontend): matched — paths "apps/web/**" matched apps/web/src/App.tsx`,
		"on request: style (rule://style): How CSS classes are named", "left out ../outside.md: dotdot"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}

	// Only the web app: the backend rule does not apply and says which patterns missed.
	out = mcpRulesForOut{}
	mcpCallTool(t, cs, "rules_for", map[string]any{"paths": []string{"apps/web/"}}, &out)
	var miss *mcpRule
	for i := range out.NotApply {
		if out.NotApply[i].Name == "backend" {
			miss = &out.NotApply[i]
		}
	}
	if miss == nil || miss.Reason != "no_match" || !slices.Equal(miss.Patterns, []string{"services/api/**"}) {
		t.Errorf("backend for apps/web/: %+v, want no_match with its pattern", miss)
	}

	for _, args := range []map[string]any{{"paths": []string{}}, {"paths": make([]string, 101)}} {
		if text, isErr := mcpCallToolRaw(t, cs, "rules_for", args, nil); !isErr || !strings.Contains(text, "paths:") {
			t.Errorf("rules_for(%d paths) = %q, want an error about paths", len(args["paths"].([]string)), text)
		}
	}
}

// TestMCPRulesForToggles: with a current task, a rule the task turned off does not apply.
func TestMCPRulesForToggles(t *testing.T) {
	f := mcpFixture(t)
	script := filepath.Join(t.TempDir(), "toggled.jsonl")
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "sessions", "monorepo.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	id := mcpSessionTask("claude-code", "sess-toggled")
	s := strings.Replace(string(src), mcpTask, id.String(), 1)
	s += `{"type":"rule_toggled","time":"2026-11-02T09:02:00Z","data":{"rule":"cline:/ws/.clinerules/frontend.md","enabled":false}}` + "\n"
	mcpWriteFile(t, script, s)
	mcpRecordInto(t, f.db, script, f.ws)

	cfg := f.cfg
	cfg.session = "sess-toggled"
	var out mcpRulesForOut
	mcpCallTool(t, mcpConnect(t, cfg), "rules_for", map[string]any{"paths": []string{"apps/web/src/App.tsx"}}, &out)
	if out.Task != id.String() {
		t.Errorf("task = %q, want the agent session's task %s", out.Task, id)
	}
	for _, r := range out.Apply {
		if r.Name == "frontend" {
			t.Errorf("frontend applies, but the session's task turned it off")
		}
	}
	found := false
	for _, r := range out.NotApply {
		found = found || r.Name == "frontend" && r.Reason == "toggled_off"
	}
	if !found {
		t.Errorf("not_applying = %+v, want frontend toggled_off", out.NotApply)
	}
}

func TestMCPExplain(t *testing.T) {
	f := mcpFixture(t)
	cfg := f.cfg
	cfg.task = "0b3c"
	cs := mcpConnect(t, cfg)

	var out mcpExplainOut
	text := mcpCallTool(t, cs, "explain", map[string]any{"turn": 2, "rule": "backend"}, &out)
	if !strings.Contains(text, "turn 2: backend (cline:/ws/.clinerules/backend.md) was included: matched") ||
		!strings.Contains(text, "paths services/api/** matched services/api/routes.ts, from tool_call read_file at seq") {
		t.Errorf("explain turn 2 backend:\n%s", text)
	}
	if out.Task != mcpTask || len(out.Included) != 1 || out.Included[0].Name != "backend" || len(out.Excluded) != 0 ||
		len(out.Included[0].Matched) != 1 || len(out.Included[0].Matched[0].Evidence) == 0 {
		t.Errorf("explain turn 2 backend: %+v", out)
	}

	out = mcpExplainOut{}
	text = mcpCallTool(t, cs, "explain", map[string]any{"turn": 5}, &out)
	names := func(os []mcpOutcome) (n []string) {
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

	// Another task named in the call wins over the current one.
	if text, isErr := mcpCallToolRaw(t, cs, "explain", map[string]any{"turn": 1, "task": "ffff"}, nil); !isErr ||
		!strings.Contains(text, `the call names task "ffff"`) || !strings.Contains(text, mcpTask) {
		t.Errorf("explain in task ffff = %q, want an error naming the tasks there are", text)
	}
}

func TestMCPExplainErrors(t *testing.T) {
	f := mcpFixture(t)
	tests := []struct {
		name string
		cfg  func(*mcpConfig)
		args map[string]any
		want []string
	}{
		{"no such turn", func(c *mcpConfig) { c.task = mcpTask }, map[string]any{"turn": 9},
			[]string{"has no decision at turn 9", "it has decisions at turns 1 to 5"}},
		{"no such rule", func(c *mcpConfig) { c.task = mcpTask }, map[string]any{"turn": 2, "rule": "nope"},
			[]string{`decided about no rule "nope"`, "backend", "frontend", "style"}},
		{"no current task", func(*mcpConfig) {}, map[string]any{"turn": 1},
			[]string{"no current task", mcpTask + " (", "events, turn "}},
		{"the session's task has no log", func(c *mcpConfig) { c.session = "never-ran" }, map[string]any{"turn": 1},
			[]string{"the task of claude-code session never-ran", "has no log in", mcpTask}},
		{"no database", func(c *mcpConfig) { c.task, c.db = mcpTask, filepath.Join(t.TempDir(), "none.db") },
			map[string]any{"turn": 1}, []string{"no task log at"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := f.cfg
			tt.cfg(&cfg)
			text, isErr := mcpCallToolRaw(t, mcpConnect(t, cfg), "explain", tt.args, nil)
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
	f := mcpFixture(t)
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "sessions", "monorepo.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	id := mcpSessionTask("claude-code", "sess-1")
	script := filepath.Join(t.TempDir(), "session.jsonl")
	mcpWriteFile(t, script, strings.Replace(string(src), mcpTask, id.String(), 1))
	mcpRecordInto(t, f.db, script, f.ws)
	cfg := f.cfg
	cfg.session = "sess-1"
	var out mcpTimelineOut
	mcpCallTool(t, mcpConnect(t, cfg), "timeline", map[string]any{"last": 1}, &out)
	if out.Task != id.String() {
		t.Errorf("timeline of task %s, want the session's task %s", out.Task, id)
	}
}

func TestMCPWhatif(t *testing.T) {
	f := mcpFixture(t)
	cfg := f.cfg
	cfg.task = mcpTask
	cs := mcpConnect(t, cfg)
	billing := "---\npaths: [\"services/billing/**\"]\n---\nBilling only.\n"

	var out mcpWhatifOut
	text := mcpCallTool(t, cs, "whatif", map[string]any{"rule_file": ".clinerules/backend.md", "content": billing}, &out)
	if out.Changed != 3 || out.Decisions != 5 || out.Drift != 0 {
		t.Errorf("whatif backend → billing: %d of %d change (drift %d), want 3 of 5:\n%s", out.Changed, out.Decisions, out.Drift, text)
	}
	for _, c := range out.Changes {
		if c.Rule != "backend" || c.Recorded != "included" || c.Now != "excluded (no_match)" {
			t.Errorf("change %v, want backend included → excluded (no_match)", c)
		}
	}
	if !slices.Equal(out.Rules, []string{"cline:/ws/.clinerules/backend.md"}) ||
		!strings.HasPrefix(text, "3 of 5 decisions of task "+mcpTask+" would change if /ws/.clinerules/backend.md read so") {
		t.Errorf("whatif: rules %v, text:\n%s", out.Rules, text)
	}
	// The file itself is unchanged: what-if writes nothing.
	if b, _ := os.ReadFile(filepath.Join(f.ws, ".clinerules", "backend.md")); strings.Contains(string(b), "billing") {
		t.Errorf("whatif wrote the rule file")
	}

	// A new rule file for every path, by its absolute name: it would join every decision.
	out = mcpWhatifOut{}
	mcpCallTool(t, cs, "whatif", map[string]any{"rule_file": filepath.Join(f.ws, ".clinerules", "new.md"), "content": "Always this.\n"}, &out)
	if out.Changed != 5 || len(out.Changes) != 5 || out.Changes[0].Rule != "new" || out.Changes[0].Recorded != "absent" {
		t.Errorf("whatif new rule: %+v, want 5 decisions with it absent → included", out)
	}

	// Another file changed on disk since the task ran is drift, not this file's change.
	mcpWriteFile(t, filepath.Join(f.ws, ".clinerules", "frontend.md"), "---\npaths: [\"nothing/**\"]\n---\nGone.\n")
	out = mcpWhatifOut{}
	mcpCallTool(t, cs, "whatif", map[string]any{"rule_file": ".clinerules/backend.md", "content": billing}, &out)
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
	f := mcpFixture(t)
	cfg := f.cfg
	cfg.task = mcpTask
	cs := mcpConnect(t, cfg)
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
		text, isErr := mcpCallToolRaw(t, cs, "whatif", map[string]any{"rule_file": tt.file, "content": tt.content}, nil)
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
	f := mcpFixture(t)
	cfg := f.cfg
	cfg.task = mcpTask
	cs := mcpConnect(t, cfg)

	var all mcpTimelineOut
	text := mcpCallTool(t, cs, "timeline", nil, &all)
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
	var paged []mcpTimelineTurn
	cursor := ""
	for range 10 {
		var page mcpTimelineOut
		args := map[string]any{"last": 2}
		if cursor != "" {
			args["cursor"] = cursor
		}
		mcpCallTool(t, cs, "timeline", args, &page)
		paged = append(slices.Clone(page.Lines), paged...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if !slices.Equal(paged, all.Lines) {
		t.Errorf("paged:\n%v\nwant:\n%v", paged, all.Lines)
	}

	for _, args := range []map[string]any{{"last": 101}, {"cursor": "bogus"}, {"cursor": mcpTimelineCursor(mcpSessionTask("x", "y"), 3)}} {
		if text, isErr := mcpCallToolRaw(t, cs, "timeline", args, nil); !isErr {
			t.Errorf("timeline(%v) succeeded: %s", args, text)
		}
	}
}

// TestMCPOpensPerCall: between calls the server holds no lock on the database, so another
// process can open it for writing.
func TestMCPOpensPerCall(t *testing.T) {
	f := mcpFixture(t)
	cfg := f.cfg
	cfg.task = mcpTask
	cs := mcpConnect(t, cfg)
	mcpCallTool(t, cs, "timeline", map[string]any{"last": 1}, nil)
	script := filepath.Join(t.TempDir(), "second.jsonl")
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "sessions", "monorepo.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	second := mcpSessionTask("claude-code", "second")
	mcpWriteFile(t, script, strings.Replace(string(src), mcpTask, second.String(), 1))
	mcpRecordInto(t, f.db, script, f.ws) // fails if the server still holds the file
	var out mcpTimelineOut
	mcpCallTool(t, cs, "timeline", map[string]any{"task": second.String()}, &out)
	if out.Task != second.String() || out.Turns != 5 {
		t.Errorf("the task written between calls: %+v", out)
	}
}
