package session

import (
	"strings"
	"testing"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/rules"
)

// A delivery by name gives each rule the address that reaches it: three AGENTS.md files that
// all apply (memory files shadow nothing) get three addresses, the name for the one it
// resolves to and the id for the others, and each address reaches its own rule.
func TestDeliveryByNameAddressesEachRule(t *testing.T) {
	rs := rules.Load([]rules.File{
		{Provider: rules.ProviderAgents, Scope: rules.ScopeWorkspace, Root: "/ws", Path: "AGENTS.md", Content: []byte("Root.")},
		{Provider: rules.ProviderAgents, Scope: rules.ScopeGlobal, Path: ".codex/AGENTS.md", Content: []byte("User.")},
		{Provider: rules.ProviderCline, Scope: rules.ScopeWorkspace, Root: "/ws", Path: ".clinerules/AGENTS.md", Content: []byte("Cline.")},
	})
	var chosen []events.RuleOutcome
	for _, res := range rs.Evaluate(rules.EvaluationContext{}, nil).Results {
		if !res.Included {
			t.Fatalf("%s is not included: %s", res.Rule.ID, res.Detail)
		}
		chosen = append(chosen, events.RuleOutcome{ID: res.Rule.ID, Name: res.Rule.Name, Path: res.Rule.DisplayPath})
	}
	text, n := renderNames(chosen, func(id string) *rules.Rule { return ruleByID(rs, id) }, 1<<20)
	if n != 3 {
		t.Fatalf("listed %d rules, want 3:\n%s", n, text)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		_, address, ok := strings.Cut(line, "): ")
		if !ok {
			continue
		}
		key := strings.TrimPrefix(address, rules.RuleURIScheme)
		r, err := rs.Resolve(address)
		if err != nil {
			r = ruleByID(rs, key)
		}
		if r == nil || seen[r.ID] {
			t.Errorf("%s reaches %v, which another line reached too or is no rule", address, r)
			continue
		}
		seen[r.ID] = true
	}
	if len(seen) != 3 {
		t.Errorf("the addresses reach %d rules, want 3:\n%s", len(seen), text)
	}
}
