package session

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/rules"
)

// TestDecideWithNewEvidenceIsAFullEvaluation checks that a decision whose context has the last
// one's paths with other evidence (a tool call on a file already in the context), which takes
// the last evaluation's outcomes with the new evidence, gives byte for byte what evaluating
// every rule again gives: the rules' results with their matches, the prompt and the decision
// recorded.
func TestDecideWithNewEvidenceIsAFullEvaluation(t *testing.T) {
	fsys := fstest.MapFS{
		".clinerules/always.md": {Data: []byte("Always.\n")},
		".clinerules/web.md":    {Data: []byte("---\npaths: [\"apps/web/**\", \"**/*.tsx\"]\n---\nWeb.\n")},
		".clinerules/api.md":    {Data: []byte("---\npaths: [\"apps/api/**\"]\n---\nApi.\n")},
		".clinerules/docs.md":   {Data: []byte("---\npaths: [\"docs/**\", \"**/*.md\"]\n---\nDocs.\n")},
		".clinerules/many.md":   {Data: []byte("---\npaths: [\"**/*\"]\n---\nEverything.\n")},
		".clinerules/desc.md":   {Data: []byte("---\ndescription: on request\n---\nBody.\n")},
		// A manual rule: included while its file is mentioned, whose evidence alone changes an
		// outcome among contexts of the same paths.
		".cursor/rules/deploy.mdc": {Data: []byte("---\nalwaysApply: false\n---\nDeploy.\n")},
	}
	paths := []string{"apps/web/a.tsx", "apps/web/b.ts", "apps/api/c.go", "docs/d.md", "lib/e.tsx", "README.md", ".cursor/rules/deploy.mdc"}
	ctx := context.Background()
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 3))
			s := newSession(t, openDB(t), fsys, Options{})
			resourced := 0
			// Every decision as it was made: the next ones reuse the session's memory, and a
			// decision handed out must not change with them.
			type made struct {
				d                 *Decision
				results, recorded string
			}
			var kept []made
			mentioned := 0
			for i := range 160 {
				switch n := r.IntN(7); {
				case n < 4: // a path the task may have seen
					params, _ := json.Marshal(map[string]string{"path": paths[r.IntN(len(paths))]})
					if _, err := s.ToolCall(ctx, "read_file", fmt.Sprintf("call_%d", i), params); err != nil {
						t.Fatal(err)
					}
				case n == 4:
					if _, err := s.UserMessage(ctx, "go on"); err != nil {
						t.Fatal(err)
					}
				case n == 5: // the user attaches the manual rule
					if _, err := s.Mention(ctx, ".cursor/rules/deploy.mdc", ""); err != nil {
						t.Fatal(err)
					}
				}
				prev := s.evaluated.ec
				prev.Paths = slices.Clone(prev.Paths) // the session reuses the array
				fresh := mustJSON(t, s.Context())     // built anew, in memory of its own
				d, err := s.Decide(ctx)
				if err != nil {
					t.Fatal(err)
				}
				ec := s.evaluated.ec
				if got := mustJSON(t, ec); got != fresh {
					t.Fatalf("decision %d: context\n%s\nwant (built anew)\n%s", i, got, fresh)
				}
				if i > 0 && samePaths(prev, ec) && !sameContext(prev, ec) {
					resourced++
				}
				want := s.rules.Evaluate(ec, rules.Toggles(s.state.Toggles()))
				if got, want := mustJSON(t, d.Rules.Results), mustJSON(t, want.Results); got != want {
					t.Fatalf("decision %d: results\n%s\nwant (evaluated again)\n%s", i, got, want)
				}
				if d.Prompt != want.RenderCline() || d.Tagged != want.RenderTagged() {
					t.Fatalf("decision %d: prompt\n%s\nwant (evaluated again)\n%s", i, d.Prompt, want.RenderCline())
				}
				if got, want := mustJSON(t, s.evaluated.rd.Results), mustJSON(t, want.Results); got != want {
					t.Fatalf("decision %d: the evaluation kept for the next one\n%s\nwant (evaluated again)\n%s", i, got, want)
				}
				rec := record(d.Turn, s.rulesSeq, ec, s.evaluated.dropped, want)
				if got, want := eventJSON(t, d.Recorded()), eventJSON(t, rec); got != want {
					t.Fatalf("decision %d: recorded\n%s\nwant (evaluated again)\n%s", i, got, want)
				}
				kept = append(kept, made{d, mustJSON(t, d.Rules.Results), eventJSON(t, d.Recorded())})
				for _, res := range d.Rules.Results {
					if res.Reason == rules.ReasonMentioned {
						mentioned++
					}
				}
			}
			for i, m := range kept {
				if got := mustJSON(t, m.d.Rules.Results); got != m.results {
					t.Fatalf("decision %d changed after the decisions that followed it:\n%s\nwas\n%s", i, got, m.results)
				}
				if got := eventJSON(t, m.d.Recorded()); got != m.recorded {
					t.Fatalf("decision %d's record changed after the decisions that followed it:\n%s\nwas\n%s", i, got, m.recorded)
				}
			}
			if resourced == 0 || mentioned == 0 {
				t.Fatalf("%d decisions had the last one's paths with new evidence, %d included the manual rule: the test tests nothing", resourced, mentioned)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func eventJSON(t *testing.T, d events.Decision) string {
	t.Helper()
	ev, err := events.New(&d)
	if err != nil {
		t.Fatal(err)
	}
	return string(ev.Data)
}
