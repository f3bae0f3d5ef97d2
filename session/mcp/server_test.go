package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// The monorepo session's task, recorded by newFixture.
const fixtureTask = "0b3c7f2a-1d4e-4f5a-9b6c-7d8e9f0a1b2c"

// fixtureRules is the monorepo's rules plus an on-request rule, a rule a higher-precedence one
// of the same name shadows, and a rule whose name needs escaping in a URI.
var fixtureRules = map[string]string{
	".cursor/rules/style.mdc":   "---\ndescription: How CSS classes are named\nalwaysApply: false\n---\nUse BEM: block__element--modifier.\n",
	".clinerules/api notes.md":  "---\npaths: [\"services/**\"]\n---\nDocument every route.\n",
	".cursor/rules/general.mdc": "---\nalwaysApply: true\n---\nThe Cursor general rule.\n",
}

type fixture struct {
	ws, db string
	cfg    Config
}

// newFixture records the monorepo session into a database against a copy of its workspace
// (with fixtureRules added) mapped to its recorded root /ws.
func newFixture(t testing.TB) fixture {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	src := testdataPath(t, "workspaces", "monorepo", "ws")
	if err := os.CopyFS(ws, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	for name, body := range fixtureRules {
		writeFile(t, filepath.Join(ws, name), body)
	}
	db := filepath.Join(dir, "tasklog.db")
	script := testdataPath(t, "sessions", "monorepo.jsonl")
	recordInto(t, db, script, ws)
	cfg := fileConfig(db, session.Folders{Roots: []string{"/ws=" + ws}})
	return fixture{ws: ws, db: db, cfg: cfg}
}

// testdataPath is a path under the repository's testdata folder.
func testdataPath(t testing.TB, elem ...string) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join(append([]string{"..", "..", "testdata"}, elem...)...))
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// recordAs records the monorepo session again into the fixture's database as task id, with
// extra lines of script after it.
func recordAs(t testing.TB, f fixture, id uuid.UUID, extra ...string) {
	t.Helper()
	src, err := os.ReadFile(testdataPath(t, "sessions", "monorepo.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), id.String()+".jsonl")
	writeFile(t, script, strings.Replace(string(src), fixtureTask, id.String(), 1)+strings.Join(extra, ""))
	recordInto(t, f.db, script, f.ws)
}

// recordInto records a script into the database db, its root /ws read from the folder ws, as
// 'replay record' does.
func recordInto(t testing.TB, db, script, ws string) {
	t.Helper()
	in, err := os.Open(script)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	st, err := store.Open(db, &store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	folders := session.Folders{Roots: []string{"/ws=" + ws}}
	s, err := session.RunScript(context.Background(), st, in, script, session.ScriptOptions{Roots: folders.SessionRoots})
	if s != nil {
		s.Close()
	}
	if err != nil {
		t.Fatalf("record %s: %v", script, err)
	}
}

// openFile opens the database file path read-only, as 'replay mcp --db path' does, waiting at
// most timeout for a file another process holds.
func openFile(path string, timeout time.Duration) func() (store.Store, error) {
	return func() (store.Store, error) {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w at %s", ErrNoLog, path)
		}
		return store.Open(path, &store.Options{Timeout: timeout, ReadOnly: true})
	}
}

// fileConfig is a server over the database file db.
func fileConfig(db string, folders session.Folders) Config {
	return Config{Store: db, Open: openFile(db, time.Second), Folders: folders, Agent: "claude-code"}
}

func writeFile(t testing.TB, name, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// connect serves cfg in process and connects the SDK's client to it in memory.
func connect(t testing.TB, cfg Config) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	srv, release := New(cfg)
	t.Cleanup(release)
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// callTool calls a tool and decodes its structured result into out; it returns the text.
func callTool(t testing.TB, cs *sdk.ClientSession, name string, args map[string]any, out any) string {
	t.Helper()
	text, isErr := callToolRaw(t, cs, name, args, out)
	if isErr {
		t.Fatalf("%s(%v): tool error: %s", name, args, text)
	}
	return text
}

// callToolRaw calls a tool and reports its text and whether it is a tool error.
func callToolRaw(t testing.TB, cs *sdk.ClientSession, name string, args map[string]any, out any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
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
	f := newFixture(t)
	cs := connect(t, f.cfg)
	ctx := context.Background()
	byURI := map[string]*sdk.Resource{}
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
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: tt.uri})
		if err != nil {
			t.Errorf("read %s: %v", tt.uri, err)
			continue
		}
		if len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, tt.want) {
			t.Errorf("read %s = %+v, want text with %q", tt.uri, res.Contents, tt.want)
		}
	}
	// The winner of a shadowed name and the shadowed rule are different bodies.
	winner, _ := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "rule://general"})
	loser, _ := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: shadowedURI})
	if winner == nil || loser == nil || winner.Contents[0].Text == loser.Contents[0].Text {
		t.Errorf("rule://general and %s read the same body", shadowedURI)
	}
}

func TestMCPResourceErrors(t *testing.T) {
	f := newFixture(t)
	cs := connect(t, f.cfg)
	ctx := context.Background()
	_, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "rule://nope"})
	if err == nil || !strings.Contains(err.Error(), `no rule "nope"`) ||
		!strings.Contains(err.Error(), "the rules are: api notes, backend, frontend, general, style") {
		t.Errorf("read rule://nope: %v, want an error naming the rules there are", err)
	}
	_, err = cs.ListResources(ctx, &sdk.ListResourcesParams{Cursor: "%%%"})
	if err == nil || !strings.Contains(err.Error(), "invalid cursor") {
		t.Errorf("list with a bad cursor: %v, want invalid cursor", err)
	}
}

// TestMCPResourcePages lists 120 rules in pages and reads every one back.
func TestMCPResourcePages(t *testing.T) {
	cs := connect(t, manyRules(t, 120))
	ctx := context.Background()
	var pages []int
	var uris []string
	cursor := ""
	for {
		res, err := cs.ListResources(ctx, &sdk.ListResourcesParams{Cursor: cursor})
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
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uris[119]})
	if err != nil || res.Contents[0].Text != "Rule 119." {
		t.Errorf("read %s = %v, %v", uris[119], res, err)
	}
	_, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "rule://r999"})
	if err == nil || !strings.Contains(err.Error(), "and 100 more") {
		t.Errorf("read rule://r999: %v, want a bounded list of the rules", err)
	}
}

// manyRules is a server for a workspace of n always-on rules, r000 to r<n-1>.
func manyRules(t *testing.T, n int) Config {
	ws := t.TempDir()
	for i := range n {
		writeFile(t, filepath.Join(ws, ".clinerules", fmt.Sprintf("r%03d.md", i)), fmt.Sprintf("Rule %d.\n", i))
	}
	return fileConfig(filepath.Join(ws, "none.db"), session.Folders{Workspace: ws})
}

// TestMCPRulesForBounded: 120 rules apply, the answer holds 50 and says how many it left out.
func TestMCPRulesForBounded(t *testing.T) {
	var out RulesForOut
	text := callTool(t, connect(t, manyRules(t, 120)), "rules_for", map[string]any{"paths": []string{"a.go"}}, &out)
	if len(out.Apply) != 50 || out.Omitted["apply"] != 70 || out.Apply[49].Name != "r049" {
		t.Errorf("apply holds %d rules (last %s), omitted %v; want 50, r049, apply: 70", len(out.Apply), out.Apply[len(out.Apply)-1].Name, out.Omitted)
	}
	if !strings.Contains(text, "120 rules apply to a.go") || !strings.Contains(text, "(70 more rules left out of apply)") {
		t.Errorf("text does not say what it left out:\n%s", text)
	}
}

func TestMCPTools(t *testing.T) {
	f := newFixture(t)
	cs := connect(t, f.cfg)
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
	f := newFixture(t)
	cs := connect(t, f.cfg)
	var out RulesForOut
	abs := filepath.Join(f.ws, "services", "api", "routes.ts")
	text := callTool(t, cs, "rules_for", map[string]any{"paths": []string{"apps/web/src/App.tsx", abs, "../outside.md"}}, &out)

	apply := map[string]RuleAnswer{}
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

	// Every path left out: the answer says so, and counts one rule in the singular.
	text = callTool(t, cs, "rules_for", map[string]any{"paths": []string{"../outside.md", "/etc/passwd"}}, &out)
	if !strings.Contains(text, "1 rule applies to a request about no path (every path given was left out)") {
		t.Errorf("every path left out, text:\n%s", text)
	}

	// Only the web app: the backend rule does not apply and says which patterns missed.
	out = RulesForOut{}
	callTool(t, cs, "rules_for", map[string]any{"paths": []string{"apps/web/"}}, &out)
	var miss *RuleAnswer
	for i := range out.NotApply {
		if out.NotApply[i].Name == "backend" {
			miss = &out.NotApply[i]
		}
	}
	if miss == nil || miss.Reason != "no_match" || !slices.Equal(miss.Patterns, []string{"services/api/**"}) {
		t.Errorf("backend for apps/web/: %+v, want no_match with its pattern", miss)
	}

	// A nested .cursor/rules folder's rule that does not apply: its folder and its own globs,
	// both of which a path must meet, apart.
	writeFile(t, filepath.Join(f.ws, "apps", "api", ".cursor", "rules", "db.mdc"), "---\nglobs: src/db/**/*.ts\n---\nUse the query builder.\n")
	out = RulesForOut{}
	callTool(t, cs, "rules_for", map[string]any{"paths": []string{"apps/api/readme.md"}}, &out)
	miss = nil
	for i := range out.NotApply {
		if out.NotApply[i].Name == "apps/api/db" {
			miss = &out.NotApply[i]
		}
	}
	if miss == nil || miss.Reason != "no_match" || !slices.Equal(miss.Within, []string{"apps/api/**"}) ||
		!slices.Equal(miss.Patterns, []string{"apps/api/src/db/**/*.ts"}) {
		t.Errorf("apps/api/db for apps/api/readme.md: %+v, want no_match within apps/api/** with its own pattern", miss)
	}

	for _, args := range []map[string]any{{"paths": []string{}}, {"paths": make([]string, 101)}} {
		if text, isErr := callToolRaw(t, cs, "rules_for", args, nil); !isErr || !strings.Contains(text, "paths:") {
			t.Errorf("rules_for(%d paths) = %q, want an error about paths", len(args["paths"].([]string)), text)
		}
	}
}

// TestMCPRulesForToggles: with a current task, a rule the task turned off does not apply.
func TestMCPRulesForToggles(t *testing.T) {
	f := newFixture(t)
	id := sessionTask("claude-code", "sess-toggled")
	recordAs(t, f, id, `{"type":"rule_toggled","time":"2026-11-02T09:02:00Z","data":{"rule":"cline:/ws/.clinerules/frontend.md","enabled":false}}`+"\n")

	cfg := f.cfg
	cfg.Session = "sess-toggled"
	var out RulesForOut
	callTool(t, connect(t, cfg), "rules_for", map[string]any{"paths": []string{"apps/web/src/App.tsx"}}, &out)
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
	f := newFixture(t)
	tests := []struct {
		name    string
		cfg     func(*Config)
		wantErr string
	}{
		{"session without a log", func(c *Config) { c.Session = "not-yet" }, ""},
		{"no database yet", func(c *Config) {
			none := filepath.Join(t.TempDir(), "none.db")
			c.Session, c.Store, c.Open = "not-yet", none, openFile(none, time.Second)
		}, ""},
		{"--task that does not exist", func(c *Config) { c.Task = "ffff" }, `--task names task "ffff"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := f.cfg
			tt.cfg(&cfg)
			var out RulesForOut
			text, isErr := callToolRaw(t, connect(t, cfg), "rules_for", map[string]any{"paths": []string{"apps/web/a.tsx"}}, &out)
			switch {
			case tt.wantErr != "" && (!isErr || !strings.Contains(text, tt.wantErr)):
				t.Errorf("rules_for = %q, want an error with %q", text, tt.wantErr)
			case tt.wantErr == "" && (isErr || out.Task != "" || len(out.Apply) == 0):
				t.Errorf("rules_for = %q (task %q), want the rules without a task", text, out.Task)
			}
		})
	}
}
