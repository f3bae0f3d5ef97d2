package session

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/audit"
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/rules"
	"github.com/tasklog/tasklog/store"
)

// rules1Log is a Cursor task recorded under rules/1: the user attached a manual rule
// (.cursor/rules/deploy.mdc) and a Cline rule gives paths twice, which later versions decide
// otherwise (rules/2 and rules/3: the first paths read, a duplicate_key diagnostic; rules/4: the
// rule always on, as Cline's YAML reader rejects the block).
var rules1Log = filepath.Join("..", "testdata", "logs", "rules1", "cursor-manual-duplicate-key.jsonl")

// A task recorded under rules/1 and carried on under rules/2 holds decisions of both; each
// replays as its engine decided, and only the later one includes the attached manual rule.
func TestEngineVersionsInOneTask(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	task := importLog(t, db, rules1Log)
	// The workspace the log recorded, with the rule files it recorded.
	shop := fstest.MapFS{}
	for ev, err := range db.Events(ctx, task, 1) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != events.TypeRulesSnapshot {
			continue
		}
		p, _ := ev.Payload()
		files, err := LoadSnapshot(db, p.(*events.RulesSnapshot).Files)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			shop[f.Path] = &fstest.MapFile{Data: f.Content}
		}
	}
	if len(shop) != 2 {
		t.Fatalf("the log's rule files: %v, want deploy.mdc and api.md", shop)
	}
	a, err := OpenAgent(ctx, db, task, AgentOptions{Agent: agentlog.Cursor, RootFS: func(string) fs.FS { return shop }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.RecordHook(ctx, []agentlog.Record{toolRecord("toolu_read_2", "/home/dev/shop/Makefile")}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Decide(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(ctx, db, task)
	if err != nil || !rep.OK() || rep.Decisions != 2 {
		t.Fatalf("Verify = %+v, %v; want both decisions reproduced", rep, err)
	}
	var engines []string
	deploy := map[string]bool{}
	recs, err := Decisions(ctx, db, task)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		d := rec.Decision
		engines = append(engines, d.Engine)
		for _, o := range d.Included {
			if o.Name == "deploy" {
				deploy[d.Engine] = true
			}
		}
		// rules/1 saw nothing wrong with the Cline rule's paths given twice; today Cline's
		// reading rejects its frontmatter (rules/2 and rules/3 said duplicate_key).
		diags := mustJSON(t, d.Diagnostics)
		dup, rejected := strings.Contains(diags, rules.DiagDuplicateKey), strings.Contains(diags, `gives the key \"paths\" twice`)
		if dup || rejected != (d.Engine == rules.EngineVersion) {
			t.Errorf("decision of %s: duplicate_key diagnostic %v, Cline's rejection %v:\n%s", d.Engine, dup, rejected, diags)
		}
	}
	if strings.Join(engines, " ") != rules.EngineV1+" "+rules.EngineVersion || deploy[rules.EngineV1] || !deploy[rules.EngineVersion] {
		t.Errorf("engines %v, deploy included under %v; want rules/1 then today's, deploy under today's only", engines, deploy)
	}
}

// importLog imports the one task of the log at path into db.
func importLog(t *testing.T, db store.Store, path string) uuid.UUID {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	imported, err := Import(context.Background(), db, f, path, ImportOptions{})
	if err != nil || len(imported) != 1 {
		t.Fatalf("import %s: %v, %v", path, imported, err)
	}
	return imported[0].Task
}

// rules2ClineLog is a Cline task recorded under rules/2 over a legacy .clinerules file scoped
// to services/api/**, which rules/2 sent as written, always on, and rules/3 scopes by its paths.
var rules2ClineLog = filepath.Join("..", "testdata", "logs", "rules2", "cline-legacy-file.jsonl")

// The task carried on under rules/3: its four rules/2 decisions replay as always-on, the new
// decision includes the file for the path its paths match, and with the file's text after the
// --- block as the rule's body.
func TestLegacyClineFileAcrossVersions(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	task := importLog(t, db, rules2ClineLog)
	ws := fstest.MapFS{".clinerules": &fstest.MapFile{Data: []byte("---\npaths:\n  - \"services/api/**\"\n---\n" +
		"Validate every request body against the shared schema in services/api/schema.ts.\n")}}
	s, err := Open(ctx, db, task, Options{Roots: []Root{{Path: "/ws", FS: ws}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.ToolCall(ctx, "read_file", "call_3", json.RawMessage(`{"path":"services/api/schema.ts"}`)); err != nil {
		t.Fatal(err)
	}
	d, err := s.Decide(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, res := range d.Rules.Results {
		if res.Rule.Name != "clinerules" {
			continue
		}
		found = true
		if !res.Included || res.Reason != rules.ReasonMatched || res.Rule.Body != "Validate every request body against the shared schema in services/api/schema.ts." {
			t.Errorf("rules/3: included %v (%s), body %q; want matched by its paths, the text after the --- block", res.Included, res.Reason, res.Rule.Body)
		}
	}
	if !found {
		t.Fatalf("no clinerules rule in the rules/3 decision: %v", d.Rules.Results)
	}
	rep, err := Verify(ctx, db, task)
	if err != nil || !rep.OK() || rep.Decisions != 5 {
		t.Fatalf("Verify = %+v, %v; want all five decisions reproduced", rep, err)
	}
	recs, err := Decisions(ctx, db, task)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rec := range recs {
		for _, o := range rec.Decision.Included {
			if o.Name == "clinerules" {
				got = append(got, rec.Decision.Engine+" "+o.Reason)
			}
		}
	}
	want := "rules/2 always, rules/2 always, rules/2 always, rules/2 always, " + rules.EngineVersion + " matched"
	if strings.Join(got, ", ") != want {
		t.Errorf("clinerules in the decisions: %s\nwant %s", strings.Join(got, ", "), want)
	}
}

// rules2ClaudeLog is a Claude Code task recorded under rules/2 by its hooks over the same
// .clinerules file: rules/2 delivered the file as written, --- block included, at the first
// prompt, in a workspace with no services/api folder.
var rules2ClaudeLog = filepath.Join("..", "testdata", "logs", "rules2", "claude-code-clinerules-frontmatter.jsonl")

// What a rules/2 decision delivered renders again as it was delivered, and the audit of a task
// whose last decision is of rules/2 reads the file as rules/2 did: an always-on rule, never
// "never applicable" for want of a file its paths match.
func TestLegacyClineFileDeliveredUnderRules2(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	task := importLog(t, db, rules2ClaudeLog)
	var deliveries []uint64
	for ev, err := range db.Events(ctx, task, 1) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == events.TypeDelivery {
			deliveries = append(deliveries, ev.Seq)
		}
	}
	if len(deliveries) == 0 {
		t.Fatal("the log holds no delivery")
	}
	text, err := DeliveryText(ctx, db, task, deliveries[0])
	if err != nil || !strings.Contains(text, "---\npaths:\n  - \"services/api/**\"\n---\nValidate every request body") {
		t.Fatalf("DeliveryText = %q, %v; want the file as written, --- block included", text, err)
	}
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("# shop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Audit(ctx, db, task, AuditOptions{Workspace: []Root{{Path: "/tmp/fix2/fm", FS: os.DirFS(ws), Dir: ws}}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Workspace.Files == 0 {
		t.Fatalf("the audit listed no workspace file: %+v", rep.Workspace)
	}
	for _, f := range rep.Findings {
		if f.Rule == "clinerules" && f.Kind == audit.NeverApplicable {
			t.Errorf("finding %s; rules/2 read the file as always on", f)
		}
	}
}

// rules2ClaudeRulesLog is a Claude Code task recorded under rules/2 whose .claude/rules/CLAUDE.md
// rules/2 read as a memory file scoped to .claude/rules/**, excluded at both requests.
var rules2ClaudeRulesLog = filepath.Join("..", "testdata", "logs", "rules2", "claude-code-rules-folder-claude-md.jsonl")

// Carried on under rules/3, the task's last decision reads the file as a rule of the folder;
// why of its first, rules/2, decision still explains it as rules/2 read it: by its patterns,
// which a file of the workspace matches.
func TestWhyOfARules2DecisionAfterRules3(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	task := importLog(t, db, rules2ClaudeRulesLog)
	const root = "/tmp/fix2/cr"
	ws := fstest.MapFS{".claude/rules/CLAUDE.md": &fstest.MapFile{Data: []byte("Use tabs for indentation in every file.\n")},
		"README.md": &fstest.MapFile{Data: []byte("# shop\n")}}
	a, err := OpenAgent(ctx, db, task, AgentOptions{Agent: agentlog.ClaudeCode, RootFS: func(string) fs.FS { return ws }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.RecordHook(ctx, []agentlog.Record{toolRecord("toolu_2", root+"/README.md")}); err != nil {
		t.Fatal(err)
	}
	d, err := a.Decide(ctx)
	a.Close()
	if err != nil || d.rec.Engine != rules.EngineVersion {
		t.Fatalf("the carried-on decision: %v, %v", d.rec, err)
	}
	ans, err := Why(ctx, db, task, 1, ".claude/rules/CLAUDE", AuditOptions{Workspace: []Root{{Path: root, FS: ws}}})
	if err != nil {
		t.Fatal(err)
	}
	said := strings.Join(ans.Decision, " ")
	if !strings.Contains(said, "no candidate path matched") || !strings.Contains(said, "A path the patterns match would apply it, in the workspace now: .claude/rules/, .claude/rules/CLAUDE.md.") {
		t.Errorf("why of the rules/2 decision: %q", said)
	}
}
