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

	"github.com/google/uuid"
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
func mcpFixture(t testing.TB) mcpFixtureT {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	src := mcpTestdata(t, "workspaces", "monorepo", "ws")
	if err := os.CopyFS(ws, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	for name, body := range mcpWorkspace {
		mcpWriteFile(t, filepath.Join(ws, name), body)
	}
	db := filepath.Join(dir, "tasklog.db")
	script := mcpTestdata(t, "sessions", "monorepo.jsonl")
	mcpRecordInto(t, db, script, ws)
	cfg := mcpConfig{db: db, timeout: time.Second, agent: "claude-code"}
	cfg.wf.roots = multiFlag{"/ws=" + ws}
	return mcpFixtureT{ws: ws, db: db, cfg: cfg}
}

// mcpTestdata is a path under the repository's testdata folder.
func mcpTestdata(t testing.TB, elem ...string) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join(append([]string{"..", "..", "testdata"}, elem...)...))
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// mcpRecordAs records the monorepo session again into the fixture's database as task id, with
// extra lines of script after it.
func mcpRecordAs(t testing.TB, f mcpFixtureT, id uuid.UUID, extra ...string) {
	t.Helper()
	src, err := os.ReadFile(mcpTestdata(t, "sessions", "monorepo.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), id.String()+".jsonl")
	mcpWriteFile(t, script, strings.Replace(string(src), mcpTask, id.String(), 1)+strings.Join(extra, ""))
	mcpRecordInto(t, f.db, script, f.ws)
}

func mcpRecordInto(t testing.TB, db, script, ws string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"record", script, "--root", "/ws=" + ws, "--db", db}, &stdout, &stderr); code != 0 {
		t.Fatalf("record %s: exit %d: %s", script, code, stderr.String())
	}
}

func mcpWriteFile(t testing.TB, name, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// mcpConnect serves cfg in process and connects the SDK's client to it in memory.
func mcpConnect(t testing.TB, cfg mcpConfig) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	srv, release := newMCPServer(cfg)
	t.Cleanup(release)
	ss, err := srv.Connect(ctx, st, nil)
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
func mcpCallTool(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any, out any) string {
	t.Helper()
	text, isErr := mcpCallToolRaw(t, cs, name, args, out)
	if isErr {
		t.Fatalf("%s(%v): tool error: %s", name, args, text)
	}
	return text
}

// mcpCallToolRaw calls a tool and reports its text and whether it is a tool error.
func mcpCallToolRaw(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any, out any) (string, bool) {
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
	cs := mcpConnect(t, mcpManyRules(t, 120))
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

// mcpManyRules is a server for a workspace of n always-on rules, r000 to r<n-1>.
func mcpManyRules(t *testing.T, n int) mcpConfig {
	ws := t.TempDir()
	for i := range n {
		mcpWriteFile(t, filepath.Join(ws, ".clinerules", fmt.Sprintf("r%03d.md", i)), fmt.Sprintf("Rule %d.\n", i))
	}
	return mcpConfig{db: filepath.Join(ws, "none.db"), wf: workspaceFlags{workspace: ws}}
}

// TestMCPRulesForBounded: 120 rules apply, the answer holds 50 and says how many it left out.
func TestMCPRulesForBounded(t *testing.T) {
	var out mcpRulesForOut
	text := mcpCallTool(t, mcpConnect(t, mcpManyRules(t, 120)), "rules_for", map[string]any{"paths": []string{"a.go"}}, &out)
	if len(out.Apply) != 50 || out.Omitted["apply"] != 70 || out.Apply[49].Name != "r049" {
		t.Errorf("apply holds %d rules (last %s), omitted %v; want 50, r049, apply: 70", len(out.Apply), out.Apply[len(out.Apply)-1].Name, out.Omitted)
	}
	if !strings.Contains(text, "120 rules apply to a.go") || !strings.Contains(text, "(70 more rules left out of apply)") {
		t.Errorf("text does not say what it left out:\n%s", text)
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
	if want := []string{"audit", "explain", "rules_for", "timeline", "whatif", "why"}; !slices.Equal(names, want) {
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
	id := mcpSessionTask("claude-code", "sess-toggled")
	mcpRecordAs(t, f, id, `{"type":"rule_toggled","time":"2026-11-02T09:02:00Z","data":{"rule":"cline:/ws/.clinerules/frontend.md","enabled":false}}`+"\n")

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

// TestMCPRulesForBeforeTheLog: before the hooks have written the agent session's task (or the
// database), rules_for answers from the rule files alone; a task given explicitly must exist.
func TestMCPRulesForBeforeTheLog(t *testing.T) {
	f := mcpFixture(t)
	tests := []struct {
		name    string
		cfg     func(*mcpConfig)
		wantErr string
	}{
		{"session without a log", func(c *mcpConfig) { c.session = "not-yet" }, ""},
		{"no database yet", func(c *mcpConfig) { c.session, c.db = "not-yet", filepath.Join(t.TempDir(), "none.db") }, ""},
		{"--task that does not exist", func(c *mcpConfig) { c.task = "ffff" }, `--task names task "ffff"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := f.cfg
			tt.cfg(&cfg)
			var out mcpRulesForOut
			text, isErr := mcpCallToolRaw(t, mcpConnect(t, cfg), "rules_for", map[string]any{"paths": []string{"apps/web/a.tsx"}}, &out)
			switch {
			case tt.wantErr != "" && (!isErr || !strings.Contains(text, tt.wantErr)):
				t.Errorf("rules_for = %q, want an error with %q", text, tt.wantErr)
			case tt.wantErr == "" && (isErr || out.Task != "" || len(out.Apply) == 0):
				t.Errorf("rules_for = %q (task %q), want the rules without a task", text, out.Task)
			}
		})
	}
}
