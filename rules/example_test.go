package rules_test

import (
	"fmt"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/tasklog/tasklog/rules"
)

func ExampleRuleSet_Evaluate() {
	ws := rules.Workspace{Roots: []rules.Root{{Name: "/ws", FS: fstest.MapFS{
		".cursor/rules/web.mdc": {Data: []byte("---\nglobs: apps/web/**\n---\nUse the design system.")},
		".clinerules/style.md":  {Data: []byte("Write small functions.")},
	}}}}
	files, err := rules.Collect(ws)
	if err != nil {
		panic(err)
	}
	rs := rules.Load(files)
	d := rs.Evaluate(rules.EvaluationContext{Paths: []rules.ContextPath{
		{Path: "apps/web/page.tsx", Root: "/ws", Sources: []rules.Source{{Kind: rules.SourceMention, Seq: 3, Turn: 1}}},
	}}, nil)
	for _, r := range d.Results {
		fmt.Printf("%s %s: %s\n", r.Rule.Name, r.Reason, r.Detail)
	}
	fmt.Println(d.RenderCline())
	// Output:
	// style always: applies to every request
	// web matched: paths "apps/web/**" matched apps/web/page.tsx
	// .clinerules/style.md
	// Write small functions.
	//
	// .cursor/rules/web.mdc
	// Use the design system.
}

func ExampleRuleSet_Resolve() {
	rs := rules.Load([]rules.File{{Provider: rules.ProviderCursor, Scope: rules.ScopeWorkspace,
		Path: ".cursor/rules/db.mdc", Content: []byte("---\ndescription: Database work\n---\nWrite reversible migrations.")}})
	r, err := rs.Resolve("rule://db")
	fmt.Println(r.Body, err)
	_, err = rs.Resolve("rule://DB")
	fmt.Println(err)
	// Output:
	// Write reversible migrations. <nil>
	// resolve "rule://DB": rule not found; available: db
}

// TestConcurrentLoad loads and evaluates the same files from many goroutines; run with -race.
func TestConcurrentLoad(t *testing.T) {
	files := []rules.File{
		{Provider: rules.ProviderCline, Scope: rules.ScopeWorkspace, Path: ".clinerules/a.md", Content: []byte("---\npaths: [\"src/**\"]\n---\nA")},
		{Provider: rules.ProviderCursor, Scope: rules.ScopeWorkspace, Path: ".cursor/rules/b.mdc", Content: []byte("---\nglobs: *.go\n---\nB")},
	}
	want := rules.Load(files).Evaluate(rules.EvaluationContext{Paths: []rules.ContextPath{{Path: "src/x.go"}}}, nil).RenderCline()
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := rules.Load(files).Evaluate(rules.EvaluationContext{Paths: []rules.ContextPath{{Path: "src/x.go"}}}, nil).RenderCline()
			if got != want {
				t.Errorf("concurrent load differs: %q", got)
			}
		}()
	}
	wg.Wait()
}
