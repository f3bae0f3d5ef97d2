package events

import (
	"bytes"
	"fmt"
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

// fullDecision is a full decision as a task of a hundred paths over sixty rules records one:
// each path with four pieces of evidence, a third of the rules included, each with the
// patterns that matched and a detail that quotes them.
func fullDecision() *Decision {
	areas := []string{"apps/web/src/components", "apps/api/src/routes", "packages/core/src", "docs/guides"}
	d := &Decision{Turn: 12, Snapshot: 4410, Engine: "tasklog-rules/1", Mode: "act", Provider: "anthropic",
		Model: "claude-sonnet-4-5", OS: "linux"}
	for i := range 100 {
		p := ContextPath{Path: fmt.Sprintf("%s/file%d.tsx", areas[i%len(areas)], i), Root: "/home/dev/shop"}
		for k := range 4 {
			p.Sources = append(p.Sources, Source{Kind: "tool_call", Seq: uint64(4000 + i*4 + k), Turn: 11, Detail: "Read"})
		}
		d.Context = append(d.Context, p)
	}
	for i := range 60 {
		o := RuleOutcome{ID: fmt.Sprintf("project:.cursor/rules/area-%02d.mdc", i), Name: fmt.Sprintf("area-%02d", i),
			Category: "conditional", Source: "cursor", Path: fmt.Sprintf(".cursor/rules/area-%02d.mdc", i)}
		if i%3 == 0 {
			a := areas[i%len(areas)]
			o.Reason = "matched"
			o.Detail = fmt.Sprintf(`paths "%s/**" matched %s/file%d.tsx; and 24 more`, a, a, i)
			for k := range 25 {
				o.Matches = append(o.Matches, Match{Condition: "paths", Pattern: a + "/**", Path: fmt.Sprintf("%s/file%d.tsx", a, k*4), Root: "/home/dev/shop"})
			}
			d.Included = append(d.Included, o)
			continue
		}
		o.Reason, o.Detail = "no_match", `no candidate path matches "`+areas[(i+1)%len(areas)]+`/legacy/**"`
		d.Excluded = append(d.Excluded, o)
	}
	return d
}

// BenchmarkDecisionJSON encodes fullDecision, as a decision is written and as verify writes
// each recomputed decision again to compare it with the log's bytes.
func BenchmarkDecisionJSON(b *testing.B) {
	d := fullDecision()
	buf := d.appendJSON(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = d.appendJSON(buf[:0])
	}
}
