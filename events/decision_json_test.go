package events

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// awkward are strings encoding/json escapes in every way it knows.
var awkward = []string{"", "plain", "packages/pkg01/src/a.ts", `quote " and \ backslash`, "tab\tnew\nline\rcr",
	"\b\f\x00\x01\x1f\x7f", "<html> & 'amp'", "ünïcödé 日本語 🙂", "bad \xff utf-8 \xc3", "line\u2028para\u2029",
	"C:\\src\\app", "trailing\\"}

// randomDecision builds a decision whose every field may be empty, nil, zero or awkward.
func randomDecision(r *rand.Rand) *Decision {
	str := func() string { return awkward[r.IntN(len(awkward))] }
	n := func() int { return r.IntN(4) }
	d := &Decision{Turn: r.IntN(1000) + 1, Snapshot: r.Uint64N(1 << 40), Engine: str(), Mode: str(),
		Provider: str(), Model: str(), OS: str()}
	if r.IntN(4) > 0 {
		d.Context = []ContextPath{}
		for range n() {
			c := ContextPath{Path: str(), Root: str()}
			if r.IntN(5) > 0 {
				c.Sources = []Source{}
			}
			for range n() {
				c.Sources = append(c.Sources, Source{Kind: str(), Seq: r.Uint64(), Turn: r.IntN(50) - 1, Detail: str()})
			}
			d.Context = append(d.Context, c)
		}
	}
	if r.IntN(3) == 0 {
		d.Base = r.Uint64N(1 << 30)
	}
	for range n() {
		d.Gone = append(d.Gone, PathRef{Path: str(), Root: str()})
	}
	for range n() {
		d.Removed = append(d.Removed, str())
	}
	for range n() {
		d.Dropped = append(d.Dropped, Count{Name: str(), N: r.IntN(10) - 2})
	}
	outcomes := func() []RuleOutcome {
		if r.IntN(5) == 0 {
			return nil
		}
		out := []RuleOutcome{}
		for range n() {
			o := RuleOutcome{ID: str(), Name: str(), Category: str(), Source: str(), Path: str(), Reason: str(),
				Detail: str(), ShadowedBy: str()}
			for range n() {
				o.Matches = append(o.Matches, Match{Condition: str(), Pattern: str(), Path: str(), Root: str()})
			}
			out = append(out, o)
		}
		return out
	}
	d.Included, d.Excluded = outcomes(), outcomes()
	for range n() {
		d.Diagnostics = append(d.Diagnostics, Diagnostic{Rule: str(), File: str(), Line: r.IntN(3) - 1,
			Severity: str(), Code: str(), Message: str()})
	}
	return d
}

func TestDecisionJSONMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20_000 {
		d := randomDecision(r)
		want, err := marshalNoEscape(d)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.appendJSON(nil); !bytes.Equal(got, want) {
			t.Fatalf("decision %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

func FuzzDecisionJSONString(f *testing.F) {
	for _, s := range awkward {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d := &Decision{Turn: 1, Engine: s, Context: []ContextPath{{Path: s, Sources: []Source{{Kind: s}}}},
			Included:    []RuleOutcome{{ID: s, Matches: []Match{{Condition: s, Pattern: s}}}},
			Diagnostics: []Diagnostic{{Message: s, File: s}}}
		want, err := marshalNoEscape(d)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.appendJSON(nil); !bytes.Equal(got, want) {
			t.Fatalf("got %s\nwant %s", got, want)
		}
	})
}
