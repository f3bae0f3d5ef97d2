package session

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/rules"
)

// rules1Log is a Cursor task recorded under rules/1: the user attached a manual rule
// (.cursor/rules/deploy.mdc) and a Cline rule gives paths twice, which rules/2 decides otherwise
// (the rule included; a duplicate_key diagnostic).
var rules1Log = filepath.Join("..", "testdata", "logs", "rules1", "cursor-manual-duplicate-key.jsonl")

// A task recorded under rules/1 and carried on under rules/2 holds decisions of both; each
// replays as its engine decided, and only the later one includes the attached manual rule.
func TestEngineVersionsInOneTask(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	f, err := os.Open(rules1Log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	imported, err := Import(ctx, db, f, rules1Log, ImportOptions{})
	if err != nil || len(imported) != 1 {
		t.Fatalf("import: %v, %v", imported, err)
	}
	task := imported[0].Task
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
		if dup := strings.Contains(mustJSON(t, d.Diagnostics), rules.DiagDuplicateKey); dup != (d.Engine == rules.EngineVersion) {
			t.Errorf("decision of %s: duplicate_key diagnostic %v", d.Engine, dup)
		}
	}
	if strings.Join(engines, " ") != rules.EngineV1+" "+rules.EngineVersion || deploy[rules.EngineV1] || !deploy[rules.EngineVersion] {
		t.Errorf("engines %v, deploy included under %v; want rules/1 then rules/2, deploy under rules/2 only", engines, deploy)
	}
}
