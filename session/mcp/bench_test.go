package mcp

import (
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasklog/tasklog/store"
)

// BenchmarkMCPOpenReadOnly is what every call that reads the log pays for not holding the
// database between calls: a read-only open and close of the file.
func BenchmarkMCPOpenReadOnly(b *testing.B) {
	f := newFixture(b)
	b.ReportAllocs()
	for b.Loop() {
		db, err := store.Open(f.db, &store.Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
}

// BenchmarkMCPCall is each tool and a resource read, through the SDK's client over the
// in-memory transport: what an agent waits for, less the pipe.
func BenchmarkMCPCall(b *testing.B) {
	f := newFixture(b)
	cfg := f.cfg
	cfg.Task = fixtureTask
	cs := connect(b, cfg)
	billing := "---\npaths: [\"services/billing/**\"]\n---\nBilling only.\n"
	calls := []struct {
		name string
		args map[string]any
	}{
		{"rules_for", map[string]any{"paths": []string{"apps/web/src/App.tsx", "services/api/routes.ts"}}},
		{"explain", map[string]any{"turn": 2}},
		{"timeline", map[string]any{}},
		{"whatif", map[string]any{"rule_file": ".clinerules/backend.md", "content": billing}},
	}
	for _, c := range calls {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				callTool(b, cs, c.name, c.args, nil)
			}
		})
	}
	b.Run("read_rule", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cs.ReadResource(b.Context(), &sdk.ReadResourceParams{URI: "rule://frontend"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
