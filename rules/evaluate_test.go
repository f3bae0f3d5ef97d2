package rules

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func ctxPaths(paths ...string) EvaluationContext {
	var ctx EvaluationContext
	for i, p := range paths {
		ctx.Paths = append(ctx.Paths, ContextPath{Path: p, Sources: []Source{{Kind: SourceProse, Seq: uint64(i + 1), Turn: 1}}})
	}
	return ctx
}

func clineFile(name, content string) File {
	return File{Provider: ProviderCline, Scope: ScopeWorkspace, Root: "/ws", Path: ".clinerules/" + name, Content: []byte(content)}
}

func resultFor(t *testing.T, d Decision, id string) Result {
	t.Helper()
	for _, r := range d.Results {
		if r.Rule.ID == id {
			return r
		}
	}
	t.Fatalf("no result for %s", id)
	return Result{}
}

// The cases of Cline's rule-conditionals.test.ts (evaluateRuleConditionals with paths).
func TestClineConditionals(t *testing.T) {
	tests := []struct {
		name        string
		frontmatter string
		paths       []string
		included    bool
		reason      string
		matched     []string
	}{
		{"treats missing paths as universal", "", nil, true, ReasonAlways, nil},
		{"does not activate path-scoped rules with empty context", "paths: [\"src/**\"]", nil, false, ReasonNoEvidence, nil},
		{"matches when any candidate path matches any glob", "paths: [\"src/**\", \"apps/**\"]", []string{"src/index.ts"}, true, ReasonMatched, []string{"src/**"}},
		{"ignores invalid paths type (fail-open)", "paths: \"src/**\"", nil, true, ReasonAlways, nil},
		{"paths: [] never matches", "paths: []", []string{"src/index.ts"}, false, ReasonNoMatch, nil},
		{"no candidate matches", "paths: [\"src/**\"]", []string{"docs/readme.md"}, false, ReasonNoMatch, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content := "Body"
			if tt.frontmatter != "" {
				content = "---\n" + tt.frontmatter + "\n---\nBody"
			}
			rs := Load([]File{clineFile("r.md", content)})
			d := rs.Evaluate(ctxPaths(tt.paths...), nil)
			res := d.Results[0]
			if res.Included != tt.included || res.Reason != tt.reason {
				t.Fatalf("included=%v reason=%s (%s), want %v %s", res.Included, res.Reason, res.Detail, tt.included, tt.reason)
			}
			var got []string
			for _, ar := range d.ConditionalRulesApplied() {
				for _, mc := range ar.MatchedConditions {
					if mc.Condition == CondPaths {
						got = append(got, mc.Values...)
					}
				}
			}
			if !slices.Equal(got, tt.matched) {
				t.Errorf("matched paths conditions %v, want %v", got, tt.matched)
			}
		})
	}
}

// Cline's rule-loading.test.ts: a universal and a scoped rule in .clinerules/.
func TestClineRuleLoading(t *testing.T) {
	fsys := fstest.MapFS{
		".clinerules/universal.md": {Data: []byte("Always on")},
		".clinerules/scoped.md":    {Data: []byte("---\npaths:\n  - \"src/**\"\n---\n\nOnly for src")},
	}
	files, err := Collect(Workspace{Roots: []Root{{Name: "/ws", FS: fsys}}})
	if err != nil {
		t.Fatal(err)
	}
	rs := Load(files)
	d1 := rs.Evaluate(ctxPaths("src/index.ts"), Toggles{})
	c1 := d1.RenderCline()
	for _, want := range []string{".clinerules/universal.md\nAlways on", ".clinerules/scoped.md\nOnly for src"} {
		if !strings.Contains(c1, want) {
			t.Errorf("content %q lacks %q", c1, want)
		}
	}
	if strings.Contains(c1, "paths:") {
		t.Errorf("frontmatter leaked into the prompt: %q", c1)
	}
	applied := d1.ConditionalRulesApplied()
	if len(applied) != 1 || applied[0].Name != ".clinerules/scoped.md" {
		t.Errorf("applied = %+v", applied)
	}
	c2 := rs.Evaluate(ctxPaths("docs/readme.md"), Toggles{}).RenderCline()
	if !strings.Contains(c2, "universal.md") || strings.Contains(c2, "scoped.md") {
		t.Errorf("content %q", c2)
	}
}

// A legacy .clinerules file with paths is scoped by them under rules/3 and sent as written,
// always on, under the versions before it; a decision of each version is made as it was, with
// its diagnostics, its rendering and its engine's name. A set without such a file decides a
// rules/2 decision as rules/3 does, under rules/2's name.
func TestEngineVersionsReadTheLegacyClineFile(t *testing.T) {
	legacy := Load([]File{{Provider: ProviderCline, Scope: ScopeWorkspace, Root: "/ws", Path: ".clinerules",
		Content: []byte("---\npaths: [\"services/api/**\"]\n---\nValidate request bodies.")}})
	folder := Load([]File{{Provider: ProviderCline, Scope: ScopeWorkspace, Root: "/ws", Path: ".clinerules/api.md",
		Content: []byte("---\npaths: [\"services/api/**\"]\n---\nValidate request bodies.")}})
	readme := ctxPaths("README.md")
	for _, tc := range []struct {
		engine   string
		rs       *RuleSet
		included bool
		reason   string
		diag     string // a diagnostic the decision carries, if any
		prompt   string // what the Cline rendering holds
	}{
		{EngineVersion, legacy, false, ReasonNoMatch, "", ""},
		{EngineV2, legacy, true, ReasonAlways, DiagLegacyFrontmatter, "---\npaths: [\"services/api/**\"]\n---\nValidate request bodies."},
		{EngineV1, legacy, true, ReasonAlways, DiagLegacyFrontmatter, "---\npaths: [\"services/api/**\"]\n---\nValidate request bodies."},
		{EngineV2, folder, false, ReasonNoMatch, "", ""},
		{"rules/99", legacy, false, ReasonNoMatch, "", ""},
	} {
		d := tc.rs.EvaluateLentAs(tc.engine, Decision{}, nil, nil, readme, nil)
		want := tc.engine
		if want == "rules/99" {
			want = EngineVersion
		}
		res := d.Results[0]
		if d.EngineVersion != want || res.Included != tc.included || res.Reason != tc.reason {
			t.Errorf("%s, %s: engine %s, included %v (%s), want %s, %v (%s)", tc.engine, res.Rule.Path, d.EngineVersion, res.Included, res.Reason, want, tc.included, tc.reason)
		}
		if got := hasCode(d.Diagnostics, DiagLegacyFrontmatter); got != (tc.diag != "") {
			t.Errorf("%s, %s: legacy_frontmatter diagnostic %v", tc.engine, res.Rule.Path, got)
		}
		if got := d.RenderCline(); tc.prompt != "" && !strings.Contains(got, tc.prompt) || tc.prompt == "" && got != "" {
			t.Errorf("%s, %s: the prompt holds %q, want %q", tc.engine, res.Rule.Path, got, tc.prompt)
		}
	}
	if now := legacy.Evaluate(ctxPaths("services/api/routes.ts"), nil).Results[0]; !now.Included || now.Rule.Body != "Validate request bodies." {
		t.Errorf("rules/3 with a path under services/api: included %v, body %q", now.Included, now.Rule.Body)
	}
}

// A Cline file whose frontmatter strict YAML rejects is always on with its whole text under
// rules/4, as Cline sends it, and scoped by its block read line by line under the versions
// before it; a Cursor file with the same kind of block is read line by line under all of them.
func TestEngineVersionsReadClineFrontmatterStrictly(t *testing.T) {
	cline := func(path, content string) File { return workspaceFile(ProviderCline, path, content) }
	rs := Load([]File{
		cline(".clinerules/alias.md", "---\npaths: [**/*.ts]\n---\nUse strict TypeScript."),
		cline(".clinerules/twice.md", "---\npaths:\n  - \"docs/**\"\npaths:\n  - \"src/**\"\n---\nKeep the docs in step."),
		cline(".clinerules", "---\npaths:\n\t- \"api/**\"\n---\nValidate bodies."),
		cline(".clinerules/good.md", "---\npaths:\n  - \"src/**\"\n---\nGood."),
		workspaceFile(ProviderCursor, ".cursor/rules/tsx.mdc", "---\nglobs: **/*.tsx\n---\nTSX."),
	})
	readme := ctxPaths("README.md")
	for _, tc := range []struct {
		engine string
		// applies are the rules that apply to README.md, by name.
		applies string
	}{
		{EngineVersion, "clinerules alias twice"}, // in id order: the legacy file first
		{EngineV3, ""},
		{EngineV2, "clinerules"}, // the legacy file was sent as written before rules/3
		{EngineV1, "clinerules"},
	} {
		d := rs.EvaluateLentAs(tc.engine, Decision{}, nil, nil, readme, nil)
		var applies []string
		for _, r := range d.Results {
			if r.Included {
				applies = append(applies, r.Rule.Name)
			}
		}
		if got := strings.Join(applies, " "); d.EngineVersion != tc.engine || got != tc.applies {
			t.Errorf("%s: engine %s, %q apply to README.md, want %q", tc.engine, d.EngineVersion, got, tc.applies)
		}
		rejected := 0
		for _, dg := range d.Diagnostics {
			if strings.Contains(dg.Message, "Cline") && dg.Code == DiagParseError {
				rejected++
			}
		}
		if want := map[bool]int{true: 3, false: 0}[tc.engine == EngineVersion]; rejected != want {
			t.Errorf("%s: %d parse_error diagnostics naming Cline, want %d: %+v", tc.engine, rejected, want, d.Diagnostics)
		}
	}
	for _, r := range rs.Rules() {
		switch r.Name {
		case "alias":
			if r.Body != "---\npaths: [**/*.ts]\n---\nUse strict TypeScript." || r.Category != CategoryAlways {
				t.Errorf("alias: %s, body %q; want always, the whole file", r.Category, r.Body)
			}
		case "tsx":
			if r.Category != CategoryScoped || r.Body != "TSX." {
				t.Errorf("Cursor's tsx: %s, body %q; want scoped by its globs read line by line", r.Category, r.Body)
			}
		}
	}
	if old := rs.As(EngineV3); old == rs || old.As(EngineVersion) != rs || old.As(EngineV3) != old || rs.As(EngineV3) != old {
		t.Error("As does not hand out one set for each reading, and today's from it")
	}
}

// The root's CLAUDE.local.md is a memory file under rules/4, as Claude Code loads it beside
// CLAUDE.md: a Cursor rule of its name does not hide it. No earlier version collected it; read
// as they would, it is a rule file, hidden by the Cursor rule.
func TestEngineVersionsReadClaudeLocalMD(t *testing.T) {
	rs := Load([]File{
		workspaceFile(ProviderClaude, "CLAUDE.local.md", "My sandbox is localhost:3001."),
		workspaceFile(ProviderCursor, ".cursor/rules/CLAUDE.local.mdc", "---\nalwaysApply: true\n---\nCursor's."),
	})
	for _, tc := range []struct {
		engine   string
		included string
	}{
		{EngineVersion, "CLAUDE.local CLAUDE.local"},
		{EngineV3, "CLAUDE.local"},
	} {
		d := rs.EvaluateLentAs(tc.engine, Decision{}, nil, nil, ctxPaths("README.md"), nil)
		var inc []string
		for _, r := range d.Results {
			if r.Included {
				inc = append(inc, r.Rule.Name)
			}
		}
		if got := strings.Join(inc, " "); got != tc.included {
			t.Errorf("%s: included %q, want %q", tc.engine, got, tc.included)
		}
	}
	for _, r := range rs.Rules() {
		// The name reaches the Cursor rule; the memory file is reached by its id.
		want := map[Provider]string{ProviderClaude: "rule://" + r.ID, ProviderCursor: "rule://CLAUDE.local"}[r.Provider]
		if r.ShadowedBy != "" || r.Address() != want {
			t.Errorf("%s: shadowed by %q, address %s; want not shadowed, at %s", r.ID, r.ShadowedBy, r.Address(), want)
		}
	}
}

// Imports expand in the root's CLAUDE.local.md from rules/4 on, and never in a CLAUDE.local.md
// of .claude/rules, a rule file of that folder, whose body every version keeps as written.
func TestEngineVersionsExpandImportsOfClaudeLocalMD(t *testing.T) {
	claude := func(path, content string) File { return workspaceFile(ProviderClaude, path, content) }
	rs := Load([]File{
		claude("CLAUDE.local.md", "Mine.\n@notes/me.md"),
		claude(".claude/rules/CLAUDE.local.md", "Personal notes.\n@../../AGENTS.md"),
		workspaceFile(ProviderImport, "notes/me.md", "My notes."),
		workspaceFile(ProviderImport, "AGENTS.md", "Team rules."),
	})
	for _, tc := range []struct {
		engine string
		// bodies by rule path
		want map[string]string
	}{
		{EngineVersion, map[string]string{"CLAUDE.local.md": "Mine.\nMy notes.", ".claude/rules/CLAUDE.local.md": "Personal notes.\n@../../AGENTS.md"}},
		{EngineV3, map[string]string{"CLAUDE.local.md": "Mine.\n@notes/me.md", ".claude/rules/CLAUDE.local.md": "Personal notes.\n@../../AGENTS.md"}},
		{EngineV2, map[string]string{"CLAUDE.local.md": "Mine.\n@notes/me.md", ".claude/rules/CLAUDE.local.md": "Personal notes.\n@../../AGENTS.md"}},
	} {
		seen := 0
		for _, r := range rs.As(tc.engine).Rules() {
			want, ok := tc.want[r.Path]
			if ok {
				seen++
			}
			if ok && r.Body != want {
				t.Errorf("%s, %s: body %q, want %q", tc.engine, r.Path, r.Body, want)
			}
			if hasCode(r.Diagnostics, DiagImportMissing) {
				t.Errorf("%s, %s: %+v", tc.engine, r.Path, r.Diagnostics)
			}
		}
		if seen != len(tc.want) {
			t.Errorf("%s: %d of the %d CLAUDE.local.md files read as rules", tc.engine, seen, len(tc.want))
		}
	}
}

// A CLAUDE.md in .claude/rules is a rule of the folder under rules/3 (always on, named by its
// path there), and a memory file scoped to .claude/rules under the versions before it.
func TestEngineVersionsReadClaudeMDInTheRulesFolder(t *testing.T) {
	rs := Load([]File{{Provider: ProviderClaude, Scope: ScopeWorkspace, Root: "/ws", Path: ".claude/rules/CLAUDE.md",
		Content: []byte("Use tabs.")}})
	for _, tc := range []struct {
		engine, name, reason string
		category             Category
	}{
		{EngineVersion, "CLAUDE", ReasonAlways, CategoryAlways},
		{EngineV2, ".claude/rules/CLAUDE", ReasonNoMatch, CategoryScoped},
		{EngineV1, ".claude/rules/CLAUDE", ReasonNoMatch, CategoryScoped},
	} {
		res := rs.EvaluateLentAs(tc.engine, Decision{}, nil, nil, ctxPaths("README.md"), nil).Results[0]
		if res.Rule.Name != tc.name || res.Reason != tc.reason || res.Rule.Category != tc.category {
			t.Errorf("%s: rule %q %s, %s; want %q %s, %s", tc.engine, res.Rule.Name, res.Rule.Category, res.Reason, tc.name, tc.category, tc.reason)
		}
	}
	if rs.As(EngineV2) == rs || rs.As(EngineVersion) != rs {
		t.Error("As: want the earlier reading for rules/2 and the set itself for today's version")
	}
}

// Cline's remote rules: frontmatter in contents, toggles, alwaysEnabled.
func TestRemoteRules(t *testing.T) {
	files, _ := Collect(Workspace{Remote: []RemoteRule{
		{Name: "scoped", Contents: "---\npaths: [\"src/**\"]\n---\nRemote scoped"},
		{Name: "plain", Contents: "Remote plain"},
		{Name: "mandated", Contents: "Org rule", AlwaysEnabled: true},
	}})
	rs := Load(files)
	tg := Toggles{"cline:remote:plain": false, "cline:remote:mandated": false}
	d := rs.Evaluate(ctxPaths("src/a.ts"), tg)
	want := map[string]string{"cline:remote:scoped": ReasonMatched, "cline:remote:plain": ReasonToggledOff, "cline:remote:mandated": ReasonAlways}
	for id, reason := range want {
		if r := resultFor(t, d, id); r.Reason != reason {
			t.Errorf("%s: %s, want %s", id, r.Reason, reason)
		}
	}
	if got := d.RenderCline(); got != "mandated\nOrg rule\n\nscoped\nRemote scoped" {
		t.Errorf("render = %q", got)
	}
	if r := resultFor(t, rs.Evaluate(ctxPaths("docs/a.md"), nil), "cline:remote:scoped"); r.Included {
		t.Errorf("scoped remote rule included for docs/a.md")
	}
}

func TestConditionals(t *testing.T) {
	tests := []struct {
		fm     string
		ctx    EvaluationContext
		reason string
	}{
		{"mode: act", EvaluationContext{Mode: "act"}, ReasonMatched},
		{"mode: act", EvaluationContext{Mode: "plan"}, ReasonConditionFailed},
		{"mode: [act, plan]", EvaluationContext{Mode: "plan"}, ReasonMatched},
		{"mode: act", EvaluationContext{}, ReasonConditionFailed},
		{"mode: 3", EvaluationContext{}, ReasonAlways}, // wrong type: ignored
		{"mode: []", EvaluationContext{Mode: "act"}, ReasonConditionFailed},
		{"provider: [anthropic, openai]", EvaluationContext{Provider: "OpenAI"}, ReasonMatched},
		{"provider: anthropic", EvaluationContext{Provider: "openai"}, ReasonConditionFailed},
		{"model: \"claude-*\"", EvaluationContext{Model: "claude-sonnet-4-5"}, ReasonMatched},
		{"model: \"claude-*\"", EvaluationContext{Model: "anthropic/claude-sonnet-4-5"}, ReasonMatched},
		{"model: \"claude-3-5-sonnet-*\"", EvaluationContext{Model: "gpt-5"}, ReasonConditionFailed},
		{"os: [darwin, linux]", EvaluationContext{OS: "linux"}, ReasonMatched},
		{"os: macos", EvaluationContext{OS: "darwin"}, ReasonMatched},
		{"os: windows", EvaluationContext{OS: "linux"}, ReasonConditionFailed},
		{"paths: [\"src/**\"]\nmode: act", EvaluationContext{Mode: "act", Paths: []ContextPath{{Path: "src/a"}}}, ReasonMatched},
		{"paths: [\"src/**\"]\nmode: act", EvaluationContext{Mode: "plan", Paths: []ContextPath{{Path: "src/a"}}}, ReasonConditionFailed},
		{"unknown: 1", EvaluationContext{}, ReasonAlways},
	}
	for _, tt := range tests {
		rs := Load([]File{clineFile("r.md", "---\n"+tt.fm+"\n---\nBody")})
		if got := rs.Evaluate(tt.ctx, nil).Results[0]; got.Reason != tt.reason {
			t.Errorf("%q with %+v: %s (%s), want %s", tt.fm, tt.ctx, got.Reason, got.Detail, tt.reason)
		}
	}
}

func TestDirectoryEvidence(t *testing.T) {
	rs := Load([]File{clineFile("web.md", "---\npaths: [\"apps/web/**/*.tsx\"]\n---\nWeb")})
	d := rs.Evaluate(ctxPaths("apps/web/"), nil)
	r := d.Results[0]
	if !r.Included || len(r.Matches) != 1 || !r.Matches[0].Below || r.Matches[0].Path != "apps/web/" {
		t.Fatalf("got %+v", r)
	}
	if r.Matches[0].Sources[0].Kind != SourceProse {
		t.Errorf("sources not copied: %+v", r.Matches[0])
	}
}

func TestShadowing(t *testing.T) {
	files := []File{
		{Provider: ProviderCursor, Scope: ScopeWorkspace, Path: ".cursor/rules/style.mdc", Content: []byte("---\nalwaysApply: true\n---\nCursor style")},
		{Provider: ProviderWindsurf, Scope: ScopeWorkspace, Path: ".windsurf/rules/style.md", Content: []byte("Windsurf style")},
		{Provider: ProviderTasklog, Scope: ScopeWorkspace, Path: ".tasklog/rules/empty.md", Content: []byte("---\ndescription: x\n---\n")},
		{Provider: ProviderCline, Scope: ScopeWorkspace, Path: ".clinerules/empty.md", Content: []byte("Runner-up")},
	}
	rs := Load(files)
	d := rs.Evaluate(EvaluationContext{}, nil)
	if r := resultFor(t, d, "windsurf:.windsurf/rules/style.md"); r.Reason != ReasonShadowed || r.ShadowedBy != "cursor:.cursor/rules/style.mdc" {
		t.Errorf("windsurf: %+v", r)
	}
	if r := resultFor(t, d, "tasklog:.tasklog/rules/empty.md"); r.Reason != ReasonEmpty {
		t.Errorf("empty tasklog: %s", r.Reason)
	}
	if r := resultFor(t, d, "cline:.clinerules/empty.md"); r.Reason != ReasonAlways {
		t.Errorf("runner-up erased by an empty winner: %s", r.Reason)
	}
	// Toggles do not resurrect a shadowed rule, and a toggled-off winner is reported so.
	d = rs.Evaluate(EvaluationContext{}, Toggles{"cursor:.cursor/rules/style.mdc": false})
	if r := resultFor(t, d, "cursor:.cursor/rules/style.mdc"); r.Reason != ReasonToggledOff {
		t.Errorf("toggle: %s", r.Reason)
	}
}

func TestResolve(t *testing.T) {
	rs := Load([]File{
		{Provider: ProviderCursor, Scope: ScopeWorkspace, Path: ".cursor/rules/db.mdc", Content: []byte("---\ndescription: Database work\n---\nUse migrations")},
		{Provider: ProviderCursor, Scope: ScopeWorkspace, Path: ".cursor/rules/ui/forms.mdc", Content: []byte("---\ndescription: Forms\n---\nForms body")},
	})
	r, err := rs.Resolve("rule://db")
	if err != nil || r.Body != "Use migrations" || r.Category != CategoryOnRequest {
		t.Fatalf("Resolve = %+v, %v", r, err)
	}
	if r, err := rs.Resolve("rule://ui/forms"); err != nil || r.Body != "Forms body" {
		t.Fatalf("nested: %v %v", r, err)
	}
	_, err = rs.Resolve("rule://DB")
	if !errors.Is(err, ErrRuleNotFound) || !strings.Contains(err.Error(), "available: db, ui/forms") {
		t.Errorf("case-sensitive miss: %v", err)
	}
	if _, err := rs.Resolve("db"); !errors.Is(err, ErrNotRuleURI) {
		t.Errorf("bare name: %v", err)
	}
	tagged := rs.Evaluate(EvaluationContext{}, nil).RenderTagged()
	if !strings.Contains(tagged, "<domain-rules>") || !strings.Contains(tagged, `<rule name="db">`) || strings.Contains(tagged, "<generic-rules>") {
		t.Errorf("tagged = %q", tagged)
	}
}

func TestTriggers(t *testing.T) {
	rs := Load([]File{
		{Provider: ProviderTasklog, Scope: ScopeWorkspace, Path: ".tasklog/rules/no-any.md", Content: []byte("---\ncondition: \": any\\\\b\"\nscope: text\nonce: true\nalwaysApply: true\n---\nDo not use any.")},
		{Provider: ProviderTasklog, Scope: ScopeWorkspace, Path: ".tasklog/rules/bad.md", Content: []byte("---\ncondition: \"(?<=x)\"\n---\nBad regexp")},
	})
	tr := rs.Triggers()
	if len(tr) != 1 || tr[0].Name != "no-any" || tr[0].Scope != "text" || !tr[0].Once || !tr[0].Pattern.MatchString("x: any;") {
		t.Fatalf("triggers = %+v", tr)
	}
	d := rs.Evaluate(EvaluationContext{}, nil)
	if r := resultFor(t, d, "tasklog:.tasklog/rules/no-any.md"); r.Reason != ReasonStream || r.Included {
		t.Errorf("stream rule: %+v", r)
	}
	bad := resultFor(t, d, "tasklog:.tasklog/rules/bad.md")
	if bad.Reason != ReasonAlways || !hasCode(bad.Rule.Diagnostics, DiagBadRegexp) {
		t.Errorf("bad regexp rule: %s %+v", bad.Reason, bad.Rule.Diagnostics)
	}
}

func TestManualMention(t *testing.T) {
	rs := Load([]File{{Provider: ProviderWindsurf, Scope: ScopeWorkspace, Path: ".windsurf/rules/release.md", Content: []byte("---\ntrigger: manual\n---\nRelease steps")}})
	if r := rs.Evaluate(EvaluationContext{}, nil).Results[0]; r.Reason != ReasonManual || r.Included {
		t.Errorf("unmentioned: %+v", r)
	}
	if r := rs.Evaluate(EvaluationContext{Rules: []string{"release"}}, nil).Results[0]; r.Reason != ReasonMentioned || !r.Included {
		t.Errorf("mentioned: %+v", r)
	}
}

// A manual rule whose own file the user mentioned (a Cursor attachment of the rule, an @path of
// it) is included, its match carrying the file's evidence; the file read by a tool, or the same
// path in another root, is no mention.
func TestManualFileMentioned(t *testing.T) {
	rs := Load([]File{
		workspaceFile(ProviderCursor, ".cursor/rules/deploy.mdc", "---\ndescription:\nglobs:\nalwaysApply: false\n---\nDeploy steps"),
		workspaceFile(ProviderWindsurf, ".windsurf/rules/release.md", "---\ntrigger: manual\n---\nRelease steps"),
	})
	const deploy, release = "cursor:/ws/.cursor/rules/deploy.mdc", "windsurf:/ws/.windsurf/rules/release.md"
	mention := Source{Kind: SourceMention, Seq: 7, Turn: 2, Detail: ".cursor/rules/deploy.mdc"}
	read := Source{Kind: SourceTool, Seq: 5, Turn: 2, Detail: "read_file"}
	at := func(root string, srcs ...Source) EvaluationContext {
		return EvaluationContext{Paths: []ContextPath{
			{Path: ".cursor/rules/deploy.mdc", Root: root, Sources: srcs},
			{Path: "src/a.ts", Root: "/ws", Sources: []Source{read}},
		}}
	}
	for _, tc := range []struct {
		name     string
		ctx      EvaluationContext
		included bool
	}{
		{"mentioned", at("/ws", read, mention), true},
		{"read by a tool only", at("/ws", read), false},
		{"mentioned in another root", at("/other", mention), false},
		{"nothing", EvaluationContext{}, false},
	} {
		d := rs.Evaluate(tc.ctx, nil)
		r := resultFor(t, d, deploy)
		if r.Included != tc.included {
			t.Errorf("%s: %+v, included %v", tc.name, r, tc.included)
			continue
		}
		if !tc.included {
			if r.Reason != ReasonManual || r.Matches != nil {
				t.Errorf("%s: %+v, want excluded as manual, no matches", tc.name, r)
			}
			continue
		}
		want := []Match{{Condition: MatchMentioned, Pattern: ".cursor/rules/deploy.mdc", Path: ".cursor/rules/deploy.mdc", Root: "/ws", Sources: []Source{read, mention}}}
		if r.Reason != ReasonMentioned || r.Detail != "its file was mentioned" || !reflect.DeepEqual(r.Matches, want) {
			t.Errorf("%s: %+v, want mentioned with %+v", tc.name, r, want)
		}
		if other := resultFor(t, d, release); other.Included {
			t.Errorf("%s: the other manual rule was included: %+v", tc.name, other)
		}
	}

	// Only the evidence of a manual rule's file can change an outcome between two contexts of
	// the same paths.
	if !rs.SameMentionEvidence(at("/ws", read), at("/ws", read)) {
		t.Error("SameMentionEvidence of equal contexts is false")
	}
	if rs.SameMentionEvidence(at("/ws", read), at("/ws", read, mention)) {
		t.Error("SameMentionEvidence misses a mention of a manual rule's file")
	}
	other := at("/ws", read)
	other.Paths[1].Sources = []Source{read, mention}
	if !rs.SameMentionEvidence(at("/ws", read), other) {
		t.Error("SameMentionEvidence looks at a path that is no manual rule's file")
	}
}

func hasCode(ds []Diagnostic, code string) bool {
	for _, d := range ds {
		if d.Code == code {
			return true
		}
	}
	return false
}

func codes(ds []Diagnostic) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Code)
	}
	return out
}

// Provider semantics: each row is one file as its tool's users write it.
func TestProviderCategories(t *testing.T) {
	tests := []struct {
		provider      Provider
		path, content string
		category      Category
		patterns      []string
		codes         []string
	}{
		{ProviderCursor, ".cursor/rules/a.mdc", "---\ndescription: x\nglobs: *.ts,*.tsx\nalwaysApply: false\n---\nB", CategoryScoped, []string{"*.ts", "*.tsx"},
			[]string{DiagNotStrict, DiagUnquotedStar, DiagCommaString}},
		{ProviderCursor, ".cursor/rules/a.mdc", "---\nglobs: [\"**/*.ts\"]\nalwaysApply: true\n---\nB", CategoryAlways, nil, []string{DiagIgnoredKey}},
		{ProviderCursor, ".cursor/rules/a.mdc", "---\ndescription: when doing X\nglobs:\nalwaysApply: false\n---\nB", CategoryOnRequest, nil, nil},
		{ProviderCursor, ".cursor/rules/a.mdc", "---\ndescription:\nglobs:\nalwaysApply: false\n---\nB", CategoryManual, nil, []string{DiagManualOnly}},
		{ProviderCursor, ".cursor/rules/a.mdc", "---\nglobs: **/*.{ts,tsx,js}\n---\nB", CategoryScoped, []string{"**/*.{ts,tsx,js}"}, []string{DiagNotStrict, DiagUnquotedStar}},
		{ProviderCursor, ".cursorrules", "Plain legacy", CategoryAlways, nil, nil},
		{ProviderWindsurf, ".windsurf/rules/a.md", "---\ntrigger: always_on\n---\nB", CategoryAlways, nil, nil},
		{ProviderWindsurf, ".windsurf/rules/a.md", "---\ntrigger: model_decision\ndescription: d\n---\nB", CategoryOnRequest, nil, nil},
		{ProviderWindsurf, ".windsurf/rules/a.md", "---\ntrigger: glob\nglobs: \"*.py\"\n---\nB", CategoryScoped, []string{"*.py"}, nil},
		{ProviderWindsurf, ".windsurf/rules/a.md", "---\ntrigger: glob\n---\nB", CategoryScoped, nil, []string{DiagEmptyList}},
		{ProviderWindsurf, ".windsurf/rules/a.md", "---\ntrigger: sometimes\n---\nB", CategoryAlways, nil, []string{DiagBadTrigger}},
		{ProviderWindsurf, ".windsurfrules", "Legacy", CategoryAlways, nil, nil},
		{ProviderClaude, ".claude/rules/a.md", "---\npaths: src/**/*.ts, lib/**\n---\nB", CategoryScoped, []string{"src/**/*.ts", "lib/**"}, []string{DiagCommaString}},
		{ProviderClaude, ".claude/rules/a.md", "---\nglobs: [\"apps/**\"]\n---\nB", CategoryAlways, nil, []string{DiagForeignKey}},
		{ProviderClaude, ".claude/rules/a.md", "No frontmatter", CategoryAlways, nil, nil},
		{ProviderCopilot, ".github/instructions/r.instructions.md", "---\napplyTo: '**/*.ts,**/*.tsx'\n---\nB", CategoryScoped, []string{"**/*.ts", "**/*.tsx"}, []string{DiagCommaString}},
		{ProviderCopilot, ".github/instructions/r.instructions.md", "No applyTo", CategoryManual, nil, []string{DiagManualOnly}},
		{ProviderCopilot, ".github/copilot-instructions.md", "Main", CategoryAlways, nil, nil},
		{ProviderAgents, "AGENTS.md", "Root", CategoryAlways, nil, nil},
		{ProviderAgents, "apps/web/AGENTS.md", "Web", CategoryScoped, []string{"apps/web/**"}, nil},
		{ProviderCline, ".clinerules/a.md", "---\nglobs: [\"*\"]\ndescription: d\n---\nB", CategoryAlways, nil, []string{DiagForeignKey}},
		{ProviderCline, ".clinerules/a.md", "---\npaths: [\"\", \"src/**\"]\n---\nB", CategoryScoped, []string{"src/**"}, []string{DiagEmptyPattern}},
		{ProviderCline, ".clinerules/a.md", "---\npaths: [\"/abs/**\"]\n---\nB", CategoryScoped, []string{"/abs/**"}, []string{DiagNeverMatches}},
		{ProviderCline, ".clinerules/a.md", "---\npaths: [invalid\n---\nB", CategoryAlways, nil, []string{DiagParseError}},
		{ProviderTasklog, ".tasklog/rules/a.md", "---\ndescription: d\n---\nB", CategoryOnRequest, nil, nil},
		{ProviderTasklog, ".tasklog/rules/a.md", "---\npaths: [a/**]\nglobs: b/**\napplyTo: c/**\n---\nB", CategoryScoped, []string{"a/**", "b/**", "c/**"}, nil},
		{ProviderTasklog, ".tasklog/rules/a.md", "---\ndescription: d\n---\n", CategoryOnRequest, nil, []string{DiagEmptyBody}},
		{ProviderTasklog, ".tasklog/rules/a.md", "bin\x00ary", CategoryAlways, nil, []string{DiagBinary}},
		{ProviderTasklog, ".tasklog/rules/a.md", "caf\xe9", CategoryAlways, nil, []string{DiagInvalidUTF8}},
	}
	for _, tt := range tests {
		r := Load([]File{{Provider: tt.provider, Scope: ScopeWorkspace, Path: tt.path, Content: []byte(tt.content)}}).Rules()[0]
		got := codes(r.Diagnostics)
		slices.Sort(got)
		want := slices.Clone(tt.codes)
		slices.Sort(want)
		if r.Category != tt.category || !reflect.DeepEqual(r.Patterns(), tt.patterns) || !slices.Equal(got, want) {
			t.Errorf("%s %s %q:\n got %s %q %v\nwant %s %q %v\n%v", tt.provider, tt.path, tt.content, r.Category, r.Patterns(), got, tt.category, tt.patterns, want, r.Diagnostics)
		}
	}
}

func TestDescribeMatches(t *testing.T) {
	m := func(pattern, path string) Match { return Match{Condition: CondPaths, Pattern: pattern, Path: path} }
	tests := []struct {
		name string
		ms   []Match
		want string
	}{
		{"one path", []Match{m("apps/**", "apps/web/a.ts")}, `paths "apps/**" matched apps/web/a.ts`},
		{"a folder that may hold matches", []Match{{Condition: CondPaths, Pattern: "apps/*/src/**", Path: "apps/", Below: true}},
			`paths "apps/*/src/**" could match below apps/`},
		{"a value condition", []Match{{Condition: "mode", Pattern: "act"}}, "mode is act"},
		{"three", []Match{m("a/**", "a/1"), m("a/**", "a/2"), m("b/**", "b/3")},
			`paths "a/**" matched a/1; paths "a/**" matched a/2; paths "b/**" matched b/3`},
		{"more than three are counted", []Match{m("a/**", "a/1"), m("a/**", "a/2"), m("a/**", "a/3"), m("a/**", "a/4"), m("a/**", "a/5")},
			`paths "a/**" matched a/1; paths "a/**" matched a/2; paths "a/**" matched a/3; and 2 more`},
		{"a quote in a pattern", []Match{m(`we"ird/**`, "we\"ird/x")}, `paths "we\"ird/**" matched we"ird/x`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describeMatches(tt.ms); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestEvaluateRemembersMatchesFaithfully evaluates one long-lived rule set against contexts
// that share some paths and not others, and a fresh rule set (nothing remembered) against each:
// the decisions must be the same.
func TestEvaluateRemembersMatchesFaithfully(t *testing.T) {
	files := benchFiles(60)
	pool := benchContext().Paths
	pool = append(pool, ContextPath{Path: "apps/a3/", Root: "/ws"}, ContextPath{Path: "src/mod0/x.ts", Root: "/other"})
	longLived := Load(files)
	r := rand.New(rand.NewPCG(5, 6))
	type outcome struct {
		id, reason, detail string
		included           bool
		matches            []Match
	}
	summary := func(d Decision) []outcome {
		var out []outcome
		for _, res := range d.Results {
			out = append(out, outcome{res.Rule.ID, res.Reason, res.Detail, res.Included, res.Matches})
		}
		return out
	}
	for i := range 200 {
		ctx := EvaluationContext{Mode: []string{"act", "plan"}[i%2]}
		for _, p := range pool {
			if r.IntN(3) == 0 {
				ctx.Paths = append(ctx.Paths, p)
			}
		}
		got := summary(longLived.Evaluate(ctx, nil))
		want := summary(NewLoader(0).Load(files).Evaluate(ctx, nil))
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("context %d: the long-lived rule set decided\n%+v\na fresh one\n%+v", i, got, want)
		}
	}
}

// TestEvaluateAfterIsEvaluate decides a task's contexts one after the other, as a session
// does (a path comes, one goes, a path gets more evidence, the mode changes), each after the
// last decision and into the results array of the one before it, and requires every decision
// and its applied list to be the ones a fresh Evaluate gives; the matches that did not change
// must be the last decision's memory, and the results must be written in the array handed in.
func TestEvaluateAfterIsEvaluate(t *testing.T) {
	files := benchFiles(60)
	pool := benchContext().Paths
	pool = append(pool, ContextPath{Path: "apps/a3/", Root: "/ws"}, ContextPath{Path: "src/mod0/x.ts", Root: "/other"})
	// Rule 9 lists two patterns: it is included by one, the other, or both.
	for range 10 {
		pool = append(pool, ContextPath{Path: "apps/a9/package.json"}, ContextPath{Path: "apps/a9/src/x.ts"})
	}
	rs := Load(files)
	other := Load(files) // the same rules loaded again: another rule set, whose results are not taken
	r := rand.New(rand.NewPCG(7, 8))
	ctx := EvaluationContext{Mode: "act"}
	var last Decision
	var lastApplied, beforeApplied []AppliedRule
	var spare []Result
	shared, written, appliedWritten := 0, 0, 0
	// Every other decision is made with arrays lent for its new matches, full of other matches:
	// what they held must not show.
	junk := Match{Condition: CondPaths, Pattern: "junk/**", Path: "junk/x", Root: "/junk"}
	var lent [][]Match
	used := 0
	lend := func(n int) []Match {
		a := slices.Repeat([]Match{junk}, n+1)
		lent = append(lent, a)
		return a[:0]
	}
	for i := range 300 {
		next := EvaluationContext{Mode: ctx.Mode, Paths: slices.Clone(ctx.Paths)}
		switch step := r.IntN(5); {
		case step == 0 && len(next.Paths) > 0:
			k := r.IntN(len(next.Paths))
			next.Paths = slices.Delete(next.Paths, k, k+1)
		case step == 1 && len(next.Paths) > 0:
			k := r.IntN(len(next.Paths))
			next.Paths[k].Sources = append(slices.Clone(next.Paths[k].Sources), Source{Kind: SourceTool, Seq: uint64(i), Turn: i})
		case step == 2:
			next.Mode = []string{"act", "plan"}[r.IntN(2)]
		default:
			p := pool[r.IntN(len(pool))]
			if !slices.ContainsFunc(next.Paths, func(q ContextPath) bool { return q.Path == p.Path && q.Root == p.Root }) {
				next.Paths = append(next.Paths, p)
				slices.SortFunc(next.Paths, func(a, b ContextPath) int { return strings.Compare(a.Path+"\x00"+a.Root, b.Path+"\x00"+b.Root) })
			}
		}
		ctx = next
		after, foreign := last, i%50 == 49
		if foreign {
			after = other.Evaluate(ctx, nil) // a decision of another rule set is only ignored
		}
		var got Decision
		if i%2 == 0 {
			got = rs.EvaluateAfter(after, spare, ctx, nil)
		} else {
			lent = lent[:0]
			got = rs.EvaluateLent(after, spare, lend, ctx, nil)
			for _, res := range got.Results {
				if len(res.Matches) > 0 && slices.ContainsFunc(lent, func(a []Match) bool { return &a[0] == &res.Matches[0] }) {
					used++
				}
			}
		}
		want := rs.Evaluate(ctx, nil)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("context %d: decided after the last\n%+v\nfresh\n%+v", i, got.Results, want.Results)
		}
		// Every other list is written in the list before the last, full of junk, as a session
		// hands it back.
		var applied []AppliedRule
		if i%2 == 0 {
			applied = got.ConditionalRulesAppliedAfter(after, lastApplied)
		} else {
			spareApplied := beforeApplied[:0]
			for k := range cap(spareApplied) {
				spareApplied[:cap(spareApplied)][k] = AppliedRule{Name: "junk", RuleID: "junk"}
			}
			applied = got.ConditionalRulesAppliedInto(after, lastApplied, spareApplied)
			if cap(spareApplied) > 0 && len(applied) > 0 && &spareApplied[:1][0] == &applied[0] {
				appliedWritten++
			}
		}
		if wantApplied := want.ConditionalRulesApplied(); !reflect.DeepEqual(applied, wantApplied) {
			t.Fatalf("context %d: applied after the last\n%+v\nfresh\n%+v", i, applied, wantApplied)
		}
		if cap(spare) >= len(got.Results) && &spare[:1][0] == &got.Results[0] {
			written++
		}
		for k, res := range got.Results {
			if after.Results != nil && len(res.Matches) > 0 && sameMemory(res.Matches, after.Results[k].Matches) {
				if foreign {
					t.Fatalf("context %d: rule %s took the matches of another rule set's decision", i, res.Rule.ID)
				}
				shared++
			}
		}
		if foreign {
			continue
		}
		// The last decision's array is the next one's, as a session hands it back.
		spare = last.Results
		clear(spare)
		last, lastApplied, beforeApplied = got, applied, lastApplied
	}
	if appliedWritten == 0 {
		t.Fatal("no list of conditional rules applied was written in the array handed in")
	}
	if shared == 0 || written == 0 || used == 0 {
		t.Fatalf("%d rules took the last decision's matches, %d decisions were written in the array handed in and %d matches in an array lent; want some of each",
			shared, written, used)
	}
}

// A rule's remembered description is taken again only for matches that describe the same: a
// change in one of the first three matches, or in how many there are, is described anew.
func TestDetailMemoDescribesAsAnew(t *testing.T) {
	m := func(pattern, path string, below bool) Match {
		return Match{Condition: CondPaths, Pattern: pattern, Path: path, Root: "/ws", Below: below}
	}
	a, b, c := m("src/**", "src/a.ts", false), m("src/**", "src/b.ts", false), m("src/**", "src/c.ts", false)
	d, e := m("src/**", "src/d.ts", false), m("src/**", "src/e.ts", false)
	var memo detailMemo
	r := &Rule{ID: "r"}
	for i, ms := range [][]Match{
		{a}, {a}, {b}, {a, b}, {a, b, c}, {a, b, c, d}, {a, b, c, e}, {a, b, c, d, e}, {a, c, b, d, e},
		{m("src/**", "src/a.ts", true)}, {m("lib/**", "src/a.ts", false)}, {{Condition: CondPaths, Pattern: "src/**", Path: "src/a.ts", Root: "/other"}}, nil,
	} {
		if got, want := memo.describe(r, ms), describeMatches(ms); got != want {
			t.Errorf("step %d: remembered %q, want %q", i, got, want)
		}
	}
}

// A manual rule included for a mention of its file had no condition that matched: it is no
// conditional rule applied.
func TestMentionedIsNoConditionalRuleApplied(t *testing.T) {
	rs := Load([]File{
		workspaceFile(ProviderCursor, ".cursor/rules/deploy.mdc", "---\nalwaysApply: false\n---\nDeploy"),
		clineFile("web.md", "---\npaths: [\"src/**\"]\n---\nWeb"),
	})
	d := rs.Evaluate(EvaluationContext{Paths: []ContextPath{
		{Path: ".cursor/rules/deploy.mdc", Root: "/ws", Sources: []Source{{Kind: SourceMention, Seq: 2, Turn: 1}}},
		{Path: "src/a.ts", Root: "/ws", Sources: []Source{{Kind: SourceTool, Seq: 3, Turn: 1}}},
	}}, nil)
	if n := len(d.Included()); n != 2 {
		t.Fatalf("%d rules included, want both", n)
	}
	applied := d.ConditionalRulesApplied()
	if len(applied) != 1 || applied[0].RuleID != "cline:/ws/.clinerules/web.md" {
		t.Errorf("applied %+v, want web.md alone", applied)
	}
}

// Memory files shadow no rule and are shadowed by none under rules/3; before it, the root's
// CLAUDE.md was shadowed by .claude/CLAUDE.md and the user's by both.
func TestEngineVersionsShadowMemoryFiles(t *testing.T) {
	rs := Load([]File{
		workspaceFile(ProviderClaude, "CLAUDE.md", "Root."),
		workspaceFile(ProviderClaude, ".claude/CLAUDE.md", "Dot."),
		{Provider: ProviderClaude, Scope: ScopeGlobal, Path: ".claude/CLAUDE.md", Content: []byte("User.")},
	})
	for _, tc := range []struct {
		engine   string
		included int
	}{{EngineVersion, 3}, {EngineV2, 1}, {EngineV1, 1}} {
		d := rs.EvaluateLentAs(tc.engine, Decision{}, nil, nil, EvaluationContext{}, nil)
		shadowed := 0
		for _, res := range d.Results {
			if res.Reason == ReasonShadowed {
				shadowed++
			}
		}
		if n := len(d.Included()); n != tc.included || shadowed != 3-tc.included {
			t.Errorf("%s: %d included, %d shadowed; want %d included, the others shadowed", tc.engine, n, shadowed, tc.included)
		}
	}
}

// A name that a memory file shares with another rule is that rule's: rule://CLAUDE is the
// on-request Cursor rule, which its detail names, and the memory files, which shadow nothing,
// are reached at their ids. Read as rules/2 read them, the Cursor rule shadowed both memory
// files, and every address is rule://NAME.
func TestAddressesWithMemoryFiles(t *testing.T) {
	rs := Load([]File{
		workspaceFile(ProviderClaude, "CLAUDE.md", "Root."),
		workspaceFile(ProviderClaude, ".claude/CLAUDE.md", "Dot."),
		{Provider: ProviderCursor, Scope: ScopeWorkspace, Root: "/ws", Path: ".cursor/rules/CLAUDE.mdc",
			Content: []byte("---\ndescription: how to edit the CLAUDE.md files\n---\nKeep them short.")},
	})
	got, err := rs.Resolve("rule://CLAUDE")
	if err != nil || got.Provider != ProviderCursor {
		t.Fatalf("rule://CLAUDE resolves to %v, %v; want the Cursor rule", got, err)
	}
	for _, res := range rs.Evaluate(EvaluationContext{}, nil).Results {
		r := res.Rule
		want := "rule://CLAUDE"
		if r.Provider == ProviderClaude {
			want = RuleURI(r.ID)
		}
		if r.Address() != want {
			t.Errorf("%s: address %s, want %s", r.ID, r.Address(), want)
		}
		if res.Reason == ReasonOnRequest && !strings.HasSuffix(res.Detail, "through rule://CLAUDE") {
			t.Errorf("on-request detail %q does not name rule://CLAUDE", res.Detail)
		}
	}
	old := rs.As(EngineV2)
	if old.As(EngineVersion) != rs || old.As(EngineV1) != old {
		t.Error("As of the rules/2 reading: want the set it was built for under rules/3, itself under rules/1")
	}
	for _, r := range old.Rules() {
		if r.Address() != RuleURIScheme+r.Name {
			t.Errorf("rules/2 reading: %s has address %s, want rule://%s", r.ID, r.Address(), r.Name)
		}
	}
	if d := old.EvaluateLentAs(EngineVersion, Decision{}, nil, nil, EvaluationContext{}, nil); len(d.Included()) != 2 {
		t.Errorf("the rules/2 reading decides rules/3 as %d included, want the 2 memory files", len(d.Included()))
	}
}

// An on-request rule whose name a URI cannot hold as it is gives its address in the tagged
// list, and its detail names the same address.
func TestTaggedAddressOfAnOnRequestRule(t *testing.T) {
	rs := Load([]File{{Provider: ProviderCursor, Scope: ScopeWorkspace, Root: "/ws", Path: ".cursor/rules/release notes.mdc",
		Content: []byte("---\ndescription: how to write release notes\n---\nOne line a change.")}})
	d := rs.Evaluate(EvaluationContext{}, nil)
	if got := d.RenderTagged(); !strings.Contains(got, `<rule name="release notes" address="rule://release%20notes">`) {
		t.Errorf("tagged:\n%s", got)
	}
	if !strings.HasSuffix(d.Results[0].Detail, "through rule://release%20notes") {
		t.Errorf("detail %q", d.Results[0].Detail)
	}
}

// RuleURI keeps what a URI may hold and percent-encodes every other byte, in capitals, a
// multi-byte character byte by byte; a name kept as it is costs one allocation.
func TestRuleURIEscapes(t *testing.T) {
	for _, c := range []struct{ key, want string }{
		{"api-style_v2.md", "rule://api-style_v2.md"},
		{"web/components:@!$&'()*+,;=~", "rule://web/components:@!$&'()*+,;=~"},
		{"release notes", "rule://release%20notes"},
		{"100%", "rule://100%25"},
		{"a#b?c", "rule://a%23b%3Fc"},
		{"Größe", "rule://Gr%C3%B6%C3%9Fe"},
		{"tab\there", "rule://tab%09here"},
		{"", "rule://"},
	} {
		if got := RuleURI(c.key); got != c.want {
			t.Errorf("RuleURI(%q) = %q, want %q", c.key, got, c.want)
		}
	}
	if n := testing.AllocsPerRun(20, func() { _ = RuleURI("api-style_v2.md") }); n != 1 {
		t.Errorf("RuleURI of a name kept as it is allocates %v times, want once", n)
	}
}

// workspaceFile is a rule file of provider in the workspace root /ws.
func workspaceFile(provider Provider, path, content string) File {
	return File{Provider: provider, Scope: ScopeWorkspace, Root: "/ws", Path: path, Content: []byte(content)}
}
