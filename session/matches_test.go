package session

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/tasklog/tasklog/rules"
)

// A read of a file the context holds makes a session copy the matches of every rule that
// matched the file (resourced). When every decision that holds an array so copied has been
// handed back into the decision after it, the array is written into again; an array a decision
// the caller holds (from Decide, or from DecideInto into a decision never handed back) never
// is. Each decision is the one a session deciding with Decide makes, and so is the log.
func TestDecideIntoLendsOnlyMatchesNobodyHolds(t *testing.T) {
	fsys := fstest.MapFS{
		".clinerules/web.md":  {Data: []byte("---\npaths: [\"apps/web/**\", \"**/*.tsx\"]\n---\nWeb.\n")},
		".clinerules/all.md":  {Data: []byte("---\npaths: [\"**/*\"]\n---\nEverything.\n")},
		".clinerules/api.md":  {Data: []byte("---\npaths: [\"services/api/**\"]\n---\nApi.\n")},
		".clinerules/docs.md": {Data: []byte("---\npaths: [\"docs/**\"]\n---\nDocs.\n")},
	}
	ctx := context.Background()
	plainDB, intoDB := openDB(t), openDB(t)
	plain := newSession(t, plainDB, fsys, Options{})
	into := newSession(t, intoDB, fsys, Options{})
	app, page, a, docs := "apps/web/src/App.tsx", "apps/web/src/pages/index.tsx", "services/api/a.ts", "docs/README.md"
	// The paths are open in tabs, and read in turn: each read adds evidence to a path the
	// context holds.
	paths := []string{app, page, a, docs}
	for _, s := range []*Session{plain, into} {
		if _, err := s.Tabs(ctx, paths, paths[:1]); err != nil { // open tabs keep every path in the context
			t.Fatal(err)
		}
	}
	for range 10 {
		paths = append(paths, app, app, page, a, app, docs, page, app)
	}
	paths = append(paths, "lib/new.tsx") // a new path: every rule is evaluated again
	type held struct {
		step    int
		d       *Decision
		results string
	}
	var holds []held
	var x Decision
	seen := map[*rules.Match]int{} // the matches arrays of the decisions, by the step last seen
	lent, resourced := 0, 0
	for i, p := range paths {
		for _, s := range []*Session{plain, into} {
			if _, err := s.ToolCall(ctx, "read_file", "", json.RawMessage(fmt.Sprintf(`{"path":%q}`, p))); err != nil {
				t.Fatal(err)
			}
		}
		want := decide(t, plain)
		before := into.evaluated.ec
		before.Paths = slices.Clone(before.Paths)
		var got *Decision
		switch {
		case i == 6 || i == 30:
			got = decide(t, into) // handed out: the caller keeps it
		case i == 13 || i == 41:
			got = new(Decision) // written into, never handed back
			if err := into.DecideInto(ctx, got); err != nil {
				t.Fatal(err)
			}
		default:
			if err := into.DecideInto(ctx, &x); err != nil {
				t.Fatal(err)
			}
			got = &x
		}
		if got != &x {
			holds = append(holds, held{i, got, mustJSON(t, got.Rules.Results)})
		}
		if g, w := mustJSON(t, got.Rules.Results), mustJSON(t, want.Rules.Results); g != w {
			t.Fatalf("step %d: DecideInto's results\n%s\nDecide's\n%s", i, g, w)
		}
		if ec := into.evaluated.ec; i > 0 && samePaths(before, ec) && !sameContext(before, ec) {
			resourced++
		}
		for _, r := range got.Rules.Results {
			if len(r.Matches) == 0 {
				continue
			}
			if at, ok := seen[&r.Matches[0]]; ok && at < i-1 {
				lent++
			}
			seen[&r.Matches[0]] = i
		}
	}
	for _, h := range holds {
		if got := mustJSON(t, h.d.Rules.Results); got != h.results {
			t.Errorf("step %d: a decision the caller holds changed:\n%s\nwas\n%s", h.step, got, h.results)
		}
	}
	// What the session remembers of the arrays it made is what its last evaluation holds.
	for i, o := range into.matches.owned {
		if o.matches != nil && !sameArray(into.evaluated.rd.Results[i].Matches, o.matches) {
			t.Errorf("rule %d: the session keeps a matches array its last evaluation does not hold", i)
		}
	}
	if resourced == 0 {
		t.Fatal("no decision had the last one's paths with new evidence: the test tests nothing")
	}
	if lent == 0 {
		t.Error("no matches array was written into again: the test does not test lending")
	}
	if got, want := eventData(t, intoDB, into.Task()), eventData(t, plainDB, plain.Task()); !slices.Equal(got, want) {
		t.Errorf("DecideInto wrote\n%s\nDecide\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
