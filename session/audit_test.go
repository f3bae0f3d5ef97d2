package session

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/tasklog/tasklog/audit"
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/store"
)

// TestAuditLoadsAndHeld follows two rules through a hook-driven task: the API rule tasklog
// delivers, then a compaction takes out of the model's context, and Claude Code's own rule the
// agent reports loading at the session's start (late, after the first request). An agent that
// reports no loads (Codex) gets null, never a guess, and no missed_by_agent finding.
func TestAuditLoadsAndHeld(t *testing.T) {
	type cell struct {
		loaded, held *bool
		delivered    bool
		findings     []audit.Kind
	}
	yes, no := true, false
	tests := []struct {
		agent agentlog.Agent
		load  bool
		// want[request][rule name]
		want []map[string]cell
	}{
		{agentlog.ClaudeCode, true, []map[string]cell{
			{"api": {&no, &yes, true, []audit.Kind{audit.MissedByAgent}}, "testing": {&yes, &yes, false, nil}},
			{"api": {&no, &no, false, []audit.Kind{audit.MissedByAgent}}, "testing": {&yes, &yes, false, nil}},
		}},
		{agentlog.Codex, false, []map[string]cell{
			{"api": {nil, &yes, true, nil}, "testing": {nil, &yes, true, nil}},
			{"api": {nil, nil, false, nil}, "testing": {nil, nil, false, nil}},
		}},
	}
	for _, tt := range tests {
		t.Run(string(tt.agent), func(t *testing.T) {
			ctx := context.Background()
			db := openDB(t)
			a := openAgent(t, db, tt.agent)
			deliverAfter(t, a, "t1", "/ws/src/api/a.ts")
			recs := []agentlog.Record{{Key: "compact", Payload: &events.Compaction{Trigger: "auto"}}}
			if tt.load {
				recs = append([]agentlog.Record{{Key: "load", Payload: &events.InstructionsLoaded{
					Path: "/ws/.claude/rules/testing.md", MemoryType: "Project", Reason: "session_start"}}}, recs...)
			}
			recs = append(recs, toolRecord("t2", "/ws/src/api/b.ts"))
			rep := auditAfter(t, db, a, recs)
			if len(rep.Requests) != len(tt.want) {
				t.Fatalf("%d requests, want %d", len(rep.Requests), len(tt.want))
			}
			str := func(b *bool) string { return yesNoString(b) }
			for i, want := range tt.want {
				for _, e := range rep.Requests[i].Rules {
					w, ok := want[e.Rule]
					if !ok {
						continue
					}
					if str(e.AgentLoaded) != str(w.loaded) || str(e.Held) != str(w.held) || e.Delivered != w.delivered ||
						len(e.Findings) != len(w.findings) || len(w.findings) > 0 && e.Findings[0] != w.findings[0] {
						t.Errorf("request %d, %s: loaded %s, held %s, delivered %v, findings %v; want %s, %s, %v, %v", i+1, e.Rule,
							str(e.AgentLoaded), str(e.Held), e.Delivered, e.Findings, str(w.loaded), str(w.held), w.delivered, w.findings)
					}
				}
			}
			w, err := Why(ctx, db, a.Task(), 2, "api", AuditOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(w.Delivery, "tasklog delivered it at seq ") ||
				!strings.Contains(w.Delivery, " into prompt 0, request 1, but a compaction (seq ") ||
				!strings.HasSuffix(w.Delivery, ") took it out of the model's context since.") {
				t.Errorf("why api at request 2: %q, want the delivery a compaction took out", w.Delivery)
			}
			if rep.Workspace.Source != "none" || rep.Workspace.Note == "" {
				t.Errorf("without a workspace the never_applicable check says it did not run: %+v", rep.Workspace)
			}
		})
	}
}

func yesNoString(b *bool) string {
	switch {
	case b == nil:
		return "null"
	case *b:
		return "true"
	}
	return "false"
}

// TestAuditByNameAndDuplicate: a rule delivered by name only is delivered but not held (the
// model has its address, not its text); a rule whose text another included rule carries is a
// duplicate finding.
func TestAuditByNameAndDuplicate(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	a := openAgent(t, db, agentlog.ClaudeCode)
	if got := deliverAfter(t, a, "d1", "/ws/docs/guide.md"); !slices.Contains(got, "docs") {
		t.Fatalf("delivered %v, want docs by name", got)
	}
	rep, err := Audit(ctx, db, a.Task(), AuditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range rep.Requests[0].Rules {
		if e.Rule == "docs" && (!e.Delivered || e.Held == nil || *e.Held) {
			t.Errorf("docs delivered by name: delivered %v, held %s; want delivered, not held", e.Delivered, yesNoString(e.Held))
		}
	}
	byName := false
	for _, f := range rep.Findings {
		byName = byName || f.Rule == "docs" && f.Kind == audit.MissedByAgent && strings.Contains(f.Evidence, "by name and rule:// address only")
	}
	if !byName {
		t.Errorf("no missed_by_agent finding saying docs went by name: %+v", rep.Findings)
	}

	db2 := openDB(t)
	same := fstest.MapFS{
		".clinerules/style.md":     {Data: []byte("Use tabs.\n")},
		".tasklog/rules/style2.md": {Data: []byte("Use tabs.\n")},
	}
	b, err := OpenAgent(ctx, db2, agentlog.TaskID(agentlog.Codex, "s2"), AgentOptions{Agent: agentlog.Codex,
		Started: &events.TaskStarted{Roots: []string{"/ws"}, Cwd: "/ws", Runtime: events.Runtime{Name: string(agentlog.Codex)}},
		RootFS:  func(string) fs.FS { return same }})
	if err != nil {
		t.Fatal(err)
	}
	deliverAfter(t, b, "x1", "/ws/a.ts")
	rep, err = Audit(ctx, db2, b.Task(), AuditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].Kind != audit.Duplicate || !strings.Contains(rep.Findings[0].Evidence, "its text is the same as that of ") {
		t.Errorf("findings %+v, want one duplicate", rep.Findings)
	}
}

// TestLoadKeys checks the names an agent's load answers for: a file of the user's own memory
// also under its "~/" names, which a global rule's id uses.
func TestLoadKeys(t *testing.T) {
	for _, tc := range []struct {
		memory, path string
		want         []string
	}{
		{"Project", "/w/.claude/rules/a.md", []string{"/w/.claude/rules/a.md"}},
		{"User", "/home/me/.claude/rules/a.md", []string{"/home/me/.claude/rules/a.md",
			"~/home/me/.claude/rules/a.md", "~/me/.claude/rules/a.md", "~/.claude/rules/a.md", "~/rules/a.md", "~/a.md"}},
		{"user", "/h/QWEN.md", []string{"/h/QWEN.md", "~/h/QWEN.md", "~/QWEN.md"}},
		{"User", "/h/", []string{"/h/", "~/h/"}},
	} {
		got := loadKeys(&events.InstructionsLoaded{Path: tc.path, MemoryType: tc.memory})
		if !slices.Equal(got, tc.want) {
			t.Errorf("loadKeys(%s %s) = %q, want %q", tc.memory, tc.path, got, tc.want)
		}
	}
}

// TestWhyAgentFile: asked about a name that is no rule but a file the agent reported loading by
// itself (Gemini CLI's GEMINI.md), Why still fails with ErrNoRule and names the agent's loads of
// that name; about any other name, only ErrNoRule.
func TestWhyAgentFile(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	a := openAgent(t, db, agentlog.Gemini)
	if _, err := a.RecordHook(ctx, []agentlog.Record{
		{Key: "load1", Payload: &events.InstructionsLoaded{Path: "/ws/GEMINI.md", MemoryType: "Project", Reason: "session_start"}},
		{Key: "load2", Payload: &events.InstructionsLoaded{Path: "/ws/src/api/GEMINI.md", MemoryType: "Project", Reason: "nested_traversal"}},
	}); err != nil {
		t.Fatal(err)
	}
	deliverAfter(t, a, "t1", "/ws/src/api/a.ts")
	tests := []struct {
		name string
		want []string // in the error, in order; nil: the plain ErrNoRule
	}{
		{"GEMINI", []string{"gemini reported loading, by itself, /ws/GEMINI.md (session_start, instructions_loaded at seq ",
			"/ws/src/api/GEMINI.md (nested_traversal, ", "no rule file tasklog reads"}},
		{"src/api/GEMINI", []string{"by itself, /ws/src/api/GEMINI.md (nested_traversal, "}},
		{"EMINI", nil},
		{"nope", nil},
	}
	for _, tt := range tests {
		_, err := Why(ctx, db, a.Task(), 1, tt.name, AuditOptions{})
		if !errors.Is(err, ErrNoRule) {
			t.Fatalf("why %s: %v, want ErrNoRule", tt.name, err)
		}
		msg, at := err.Error(), 0
		if tt.want == nil && strings.Contains(msg, "reported loading") {
			t.Errorf("why %s: %q names a load of another file", tt.name, msg)
		}
		for _, w := range tt.want {
			i := strings.Index(msg[at:], w)
			if i < 0 {
				t.Errorf("why %s: %q, want %q after offset %d", tt.name, msg, w, at)
				break
			}
			at += i + len(w)
		}
		if tt.name == "src/api/GEMINI" && strings.Contains(msg, "session_start") {
			t.Errorf("why %s: %q names the root GEMINI.md", tt.name, msg)
		}
	}
}

// A file the agent loaded by itself reaches the model whatever tasklog decided: two CLAUDE.md
// files of the same text, both loaded by Claude Code, are a duplicate the model has twice; a
// .claude/rules file hidden by a Cursor rule of its name is still in the model's context. The
// findings say so rather than "it goes into the prompt once" or "never reaches the model".
func TestAuditFindingsOfFilesTheAgentLoaded(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ws    fstest.MapFS
		loads []string
		kind  audit.Kind
		want  string
	}{
		{"duplicate", fstest.MapFS{"CLAUDE.md": {Data: []byte("Same memory text.\n")}, ".claude/CLAUDE.md": {Data: []byte("Same memory text.\n")}},
			[]string{"/ws/CLAUDE.md", "/ws/.claude/CLAUDE.md"}, audit.Duplicate,
			"claude-code loaded this file by itself too, so the model has the text twice"},
		{"shadowed", fstest.MapFS{".claude/rules/testing.md": {Data: []byte("Claude testing rule.\n")},
			".cursor/rules/testing.mdc": {Data: []byte("---\nalwaysApply: true\n---\nCursor testing rule.\n")}},
			[]string{"/ws/.claude/rules/testing.md"}, audit.Shadowed,
			"but claude-code loaded this file by itself, so the model has both texts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := openDB(t)
			a, err := OpenAgent(ctx, db, agentlog.TaskID(agentlog.ClaudeCode, tc.name), AgentOptions{Agent: agentlog.ClaudeCode,
				Started: &events.TaskStarted{Roots: []string{"/ws"}, Cwd: "/ws", Runtime: events.Runtime{Name: "claude-code"}},
				RootFS:  func(string) fs.FS { return tc.ws }})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			var recs []agentlog.Record
			for i, p := range tc.loads {
				recs = append(recs, agentlog.Record{Key: "load" + strconv.Itoa(i), Payload: &events.InstructionsLoaded{Path: p, MemoryType: "Project", Reason: "session_start"}})
			}
			rep := auditAfter(t, db, a, recs)
			var got []string
			for _, f := range rep.Findings {
				if f.Kind == tc.kind {
					got = append(got, f.Evidence)
				}
			}
			if len(got) != 1 || !strings.Contains(got[0], tc.want) {
				t.Errorf("%s findings: %q, want one saying %q", tc.kind, got, tc.want)
			}
		})
	}
}

// auditAfter records one hook's records into a, decides, and audits the task.
func auditAfter(t *testing.T, db store.Store, a *AgentSession, recs []agentlog.Record) *AuditReport {
	t.Helper()
	ctx := context.Background()
	if _, err := a.RecordHook(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Decide(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := Audit(ctx, db, a.Task(), AuditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// A nested .cursor/rules folder's rule must meet its folder's scope and its own globs, anchored
// there: the audit calls it never applicable when its own globs match nothing of the workspace,
// though its folder holds files.
func TestAuditNestedRuleNeverApplicableByItsOwnGlobs(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	rulesFS := nestedCursorRule()
	a, _ := readInNestedFolder(t, db, rulesFS)
	rep, err := Audit(ctx, db, a.Task(), AuditOptions{Workspace: []Root{{Path: "/ws", FS: rulesFS}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range rep.Findings {
		if f.Kind == audit.NeverApplicable {
			got = append(got, f.Rule+": "+f.Evidence)
		}
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], `apps/api/db: its patterns "apps/api/src/db/**/*.ts" match no file or folder of the workspace`) {
		t.Errorf("never_applicable findings %q; want the nested rule's own globs named", got)
	}
}

// TestWhyNestedRuleNamesPathsOfEveryCondition asks why a nested .cursor/rules rule did not
// apply after a read in its folder that its own globs do not match: the paths the answer says
// would apply it meet both its folder and its globs, not the folder alone; a rule whose globs
// list no pattern is applied by no path, and the answer names none.
func TestWhyNestedRuleNamesPathsOfEveryCondition(t *testing.T) {
	for _, tc := range []struct {
		name, globs string
		want        string // the answer's last sentence
	}{
		{"its globs match a file of its folder", "src/db/**/*.ts",
			"A path the patterns match would apply it, in the workspace now: apps/api/src/db/users.ts."},
		{"its globs list no pattern", `" , "`, "tasklog did not apply it: no candidate path matched"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := openDB(t)
			rulesFS := nestedCursorRule()
			rulesFS["apps/api/.cursor/rules/db.mdc"].Data = []byte("---\nglobs: " + tc.globs + "\n---\nUse the query builder.\n")
			rulesFS["apps/api/src/db/users.ts"] = &fstest.MapFile{Data: []byte("export {}\n")}
			rulesFS["apps/web/src/db/cache.ts"] = &fstest.MapFile{Data: []byte("export {}\n")}
			a, d := readInNestedFolder(t, db, rulesFS)
			w, err := Why(ctx, db, a.Task(), d.Turn, "apps/api/db", AuditOptions{Workspace: []Root{{Path: "/ws", FS: rulesFS}}})
			if err != nil {
				t.Fatal(err)
			}
			if len(w.Decision) == 0 || !strings.HasPrefix(w.Decision[len(w.Decision)-1], tc.want) {
				t.Errorf("why apps/api/db: %q; want it to end with %q", w.Decision, tc.want)
			}
		})
	}
}

// nestedCursorRule is a workspace whose apps/api holds a .cursor/rules folder with one rule,
// scoped by its globs (anchored at apps/api) to apps/api/src/db, and a readme beside it.
func nestedCursorRule() fstest.MapFS {
	return fstest.MapFS{
		"apps/api/.cursor/rules/db.mdc": {Data: []byte("---\nglobs: src/db/**/*.ts\n---\nUse the query builder.\n")},
		"apps/api/readme.md":            {Data: []byte("api\n")},
	}
}

// readInNestedFolder records, in a Cursor task over rulesFS, a Read of apps/api/readme.md (in
// the nested rule's folder, outside its globs) and decides.
func readInNestedFolder(t *testing.T, db store.Store, rulesFS fstest.MapFS) (*AgentSession, *Decision) {
	t.Helper()
	ctx := context.Background()
	a, err := OpenAgent(ctx, db, agentlog.TaskID(agentlog.Cursor, "nested"), AgentOptions{Agent: agentlog.Cursor,
		Started: &events.TaskStarted{Roots: []string{"/ws"}, Cwd: "/ws", Runtime: events.Runtime{Name: "cursor"}},
		RootFS:  func(string) fs.FS { return rulesFS }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if _, err := a.RecordHook(ctx, []agentlog.Record{toolRecord("r1", "/ws/apps/api/readme.md")}); err != nil {
		t.Fatal(err)
	}
	d, err := a.Decide(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return a, d
}
