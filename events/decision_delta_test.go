package events

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// turnOf builds a full decision of a task whose context paths and rules come and go: each of
// a pool of paths and rules is present with some chance, with evidence and outcomes that
// change with the turn.
func turnOf(r *rand.Rand, turn int) *Decision {
	d := &Decision{Turn: turn, Snapshot: 3, Engine: "rules/1", Mode: "act",
		Diagnostics: []Diagnostic{{File: ".clinerules/bad.md", Line: 1, Message: "bad frontmatter"}}}
	for i := range 12 {
		if r.IntN(3) == 0 {
			continue
		}
		p := ContextPath{Path: fmt.Sprintf("src/f%02d.ts", i), Root: []string{"/a", "/b"}[i%2]}
		for k := range r.IntN(3) + 1 {
			p.Sources = append(p.Sources, Source{Kind: "tool_call", Seq: uint64(k + r.IntN(2)), Turn: 1})
		}
		d.Context = append(d.Context, p)
	}
	d.Included, d.Excluded = []RuleOutcome{}, []RuleOutcome{}
	for i := range 10 {
		if r.IntN(5) == 0 {
			continue
		}
		o := RuleOutcome{ID: fmt.Sprintf("cline:/a/.clinerules/r%d.md", i), Name: fmt.Sprintf("r%d", i), Category: "scoped"}
		if r.IntN(2) == 0 {
			o.Reason = "matched"
			o.Matches = []Match{{Condition: "paths", Pattern: "src/**", Path: fmt.Sprintf("src/f%02d.ts", r.IntN(3))}}
			d.Included = append(d.Included, o)
		} else {
			o.Reason = []string{"no_match", "no_evidence"}[r.IntN(2)]
			d.Excluded = append(d.Excluded, o)
		}
	}
	return d
}

func TestWrittenThenApplied(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 5_000 {
		prev, next := turnOf(r, 1), turnOf(r, 2)
		if i%7 == 0 {
			next = turnOf(rand.New(rand.NewPCG(uint64(i), 0)), 2)
			prev = turnOf(rand.New(rand.NewPCG(uint64(i), 0)), 1) // same draws: nothing changes but the turn
		}
		delta, ok := Written(prev, next, 41)
		if !ok {
			t.Fatal("same snapshot and diagnostics, but not written as a delta")
		}
		if delta.Base != 41 || delta.Diagnostics != nil {
			t.Fatalf("delta has base %d and diagnostics %v", delta.Base, delta.Diagnostics)
		}
		// The delta goes through the log: encode and decode it.
		ev, err := New(delta)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ev.Payload()
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.(*Decision).Apply(prev)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := New(next)
		if gotEv, _ := New(got); !bytes.Equal(gotEv.Data, want.Data) {
			t.Fatalf("case %d: applied\n%s\nwant\n%s\ndelta\n%s", i, gotEv.Data, want.Data, ev.Data)
		}
	}
}

func TestWrittenUnchangedIsEmpty(t *testing.T) {
	prev := turnOf(rand.New(rand.NewPCG(9, 9)), 4)
	next := turnOf(rand.New(rand.NewPCG(9, 9)), 5)
	d, ok := Written(prev, next, 10)
	if !ok || len(d.Context) != 0 || len(d.Gone) != 0 || len(d.Included) != 0 || len(d.Excluded) != 0 || len(d.Removed) != 0 {
		t.Errorf("an unchanged turn is written as %+v", d)
	}
	full, _ := New(next)
	delta, _ := New(d)
	if len(delta.Data)*4 > len(full.Data) {
		t.Errorf("an unchanged turn takes %d bytes against %d in full", len(delta.Data), len(full.Data))
	}
}

func TestWrittenNeedsSameSnapshotAndDiagnostics(t *testing.T) {
	prev := turnOf(rand.New(rand.NewPCG(1, 1)), 1)
	for name, edit := range map[string]func(*Decision){
		"another snapshot":    func(d *Decision) { d.Snapshot = 9 },
		"other diagnostics":   func(d *Decision) { d.Diagnostics = nil },
		"a diagnostic edited": func(d *Decision) { d.Diagnostics = []Diagnostic{{Message: "other"}} },
	} {
		next := turnOf(rand.New(rand.NewPCG(1, 1)), 2)
		edit(next)
		if _, ok := Written(prev, next, 5); ok {
			t.Errorf("%s: written as a delta", name)
		}
	}
}

func TestApplyRefusesInconsistentDeltas(t *testing.T) {
	base := &Decision{Turn: 1, Snapshot: 2, Engine: "rules/1",
		Context:  []ContextPath{{Path: "a.ts", Sources: []Source{{Kind: "tab", Seq: 3}}}},
		Included: []RuleOutcome{{ID: "r1", Reason: "always"}}, Excluded: []RuleOutcome{}}
	tests := []struct {
		name  string
		delta Decision
		base  *Decision
		want  string
	}{
		{"no base", Decision{Turn: 2, Snapshot: 2, Base: 7}, nil, "not at hand"},
		{"other snapshot", Decision{Turn: 2, Snapshot: 5, Base: 7}, base, "snapshot 5"},
		{"gone path the base lacks", Decision{Turn: 2, Snapshot: 2, Base: 7, Gone: []PathRef{{Path: "b.ts"}}}, base, "gone path b.ts"},
		{"removed rule the base lacks", Decision{Turn: 2, Snapshot: 2, Base: 7, Removed: []string{"r9"}}, base, "removed rule r9"},
		{"context out of order", Decision{Turn: 2, Snapshot: 2, Base: 7,
			Context: []ContextPath{{Path: "z.ts"}, {Path: "b.ts"}}}, base, "out of order"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.delta.Apply(tt.base)
			if !errors.Is(err, ErrInvalid) || !bytes.Contains([]byte(err.Error()), []byte(tt.want)) {
				t.Errorf("got %v, want ErrInvalid naming %q", err, tt.want)
			}
		})
	}
}

func TestApplyFullIsItself(t *testing.T) {
	full := turnOf(rand.New(rand.NewPCG(2, 2)), 3)
	got, err := full.Apply(nil)
	if err != nil || got != full {
		t.Errorf("a full decision applied to nothing gave %v, %v", got, err)
	}
	if !slices.Equal(got.Diagnostics, full.Diagnostics) {
		t.Error("diagnostics lost")
	}
}

func TestCloneSharesNothing(t *testing.T) {
	d := turnOf(rand.New(rand.NewPCG(7, 7)), 2)
	d.Gone, d.Removed, d.Dropped = []PathRef{{Path: "x"}}, []string{"r"}, []Count{{Name: "cap", N: 1}}
	want, _ := New(d)
	c := d.Clone()
	// Scribble over every slice of the clone.
	for i := range c.Context {
		c.Context[i].Path = "changed"
		for j := range c.Context[i].Sources {
			c.Context[i].Sources[j].Seq = 999
		}
	}
	for _, list := range [][]RuleOutcome{c.Included, c.Excluded} {
		for i := range list {
			list[i].ID = "changed"
			for j := range list[i].Matches {
				list[i].Matches[j].Path = "changed"
			}
		}
	}
	c.Gone[0].Path, c.Removed[0], c.Dropped[0].N, c.Diagnostics[0].Message = "changed", "changed", 7, "changed"
	if got, _ := New(d); !bytes.Equal(got.Data, want.Data) {
		t.Errorf("editing the clone changed the original:\n%s\nwas\n%s", got.Data, want.Data)
	}
}
