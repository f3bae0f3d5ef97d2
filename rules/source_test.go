package rules

import (
	"maps"
	"slices"
	"testing"
)

// TestSourceTable: every provider in the table says everything about itself, and the places,
// key owners and ranks the rest of the package reads come out of it as they are documented.
func TestSourceTable(t *testing.T) {
	ranks := map[int]Provider{}
	for _, s := range sources {
		if s.title == "" {
			t.Errorf("%s has no title", s.source)
		}
		if o, ok := ranks[s.rank]; ok || s.rank <= 0 {
			t.Errorf("%s: rank %d is not positive or shared with %s", s.source, s.rank, o)
		}
		ranks[s.rank] = s.source
		if len(s.workspace)+len(s.home) == 0 {
			t.Errorf("%s has no place to read rules from", s.source)
		}
		for _, k := range s.owns {
			if !slices.Contains(s.keys, k) {
				t.Errorf("%s owns %q and does not read it", s.source, k)
			}
		}
		if len(s.keys) > 0 && s.category == nil {
			t.Errorf("%s reads keys %v and has no category function to read them", s.source, s.keys)
		}
		for _, p := range append(slices.Clone(s.workspace), s.home...) {
			if (p.dir == "") == (p.file == "") || p.dir != "" && p.accept == nil {
				t.Errorf("%s: a place must be a folder with an accept function or a file: %+v", s.source, p)
			}
		}
	}
	type at struct {
		provider  Provider
		dir, file string
	}
	places := func(ss []source) []at {
		var out []at
		for _, s := range ss {
			out = append(out, at{s.provider, s.dir, s.file})
		}
		return out
	}
	wantWorkspace := []at{
		{ProviderTasklog, ".tasklog/rules", ""}, {ProviderCline, ".clinerules", ""}, {ProviderCline, "", ".clinerules"},
		{ProviderCursor, ".cursor/rules", ""}, {ProviderCursor, "", ".cursorrules"},
		{ProviderWindsurf, ".windsurf/rules", ""}, {ProviderWindsurf, "", ".windsurfrules"},
		{ProviderClaude, ".claude/rules", ""}, {ProviderClaude, "", ".claude/CLAUDE.md"}, {ProviderClaude, "", "CLAUDE.local.md"},
		{ProviderCopilot, "", ".github/copilot-instructions.md"}, {ProviderCopilot, ".github/instructions", ""},
	}
	if got := places(workspaceSources); !slices.Equal(got, wantWorkspace) {
		t.Errorf("workspace places %v, want %v", got, wantWorkspace)
	}
	wantHome := []at{
		{ProviderTasklog, ".tasklog/rules", ""}, {ProviderCline, "Documents/Cline/Rules", ""}, {ProviderCursor, ".cursor/rules", ""},
		{ProviderWindsurf, "", ".codeium/windsurf/memories/global_rules.md"}, {ProviderClaude, ".claude/rules", ""},
		{ProviderClaude, "", ".claude/CLAUDE.md"}, {ProviderAgents, "", ".codex/AGENTS.md"},
	}
	if got := places(homeSources); !slices.Equal(got, wantHome) {
		t.Errorf("home places %v, want %v", got, wantHome)
	}
	wantOwners := map[string]string{
		"paths": "Claude Code and Cline", "globs": "Cursor and Windsurf", "alwaysApply": "Cursor",
		"applyTo": "GitHub Copilot", "trigger": "Windsurf",
	}
	if !maps.Equal(keyOwner, wantOwners) {
		t.Errorf("key owners %v, want %v", keyOwner, wantOwners)
	}
	if got := folderPrefixes(ProviderCline); !slices.Equal(got, []string{".clinerules/", "Documents/Cline/Rules/"}) {
		t.Errorf("Cline's folders %v", got)
	}
	if rankOf(ProviderImport) != 0 || titleOf(ProviderImport) != "" {
		t.Error("an imported file has a rank or a title: it is no tool's rule")
	}
	if got := ruleName(ProviderCopilot, "api.instructions.md"); got != "api" {
		t.Errorf("Copilot's rule name %q, want api", got)
	}
}
