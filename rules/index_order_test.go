package rules

import (
	"cmp"
	"slices"
	"testing"
)

// The hits of an evaluation come out in (rule, condition, pattern, candidate) order, the order
// results report, and none is lost or repeated: the order a comparison sort gives.
func TestHitsOrder(t *testing.T) {
	byTuple := func(a, b hit) int {
		return cmp.Or(cmp.Compare(a.rule, b.rule), cmp.Compare(a.cond, b.cond), cmp.Compare(a.pat, b.pat), cmp.Compare(a.cand, b.cand))
	}
	for _, n := range []int{1, 6, 50, 1000} {
		rs := Load(benchFiles(n))
		ctx := benchContext()
		for _, paths := range []int{0, 1, 10, 100} {
			c := ctx
			c.Paths = ctx.Paths[:paths]
			for turn := range 2 { // matched, then remembered
				st := &evalState{ctx: &c, scratch: new(scratch)}
				for i, p := range c.Paths {
					st.candidates = append(st.candidates, candidate{path: foldSlashes(p.Path), root: p.Root, index: i})
				}
				got := rs.collectHits(st)
				want := slices.Clone(got)
				slices.SortFunc(want, byTuple)
				if !slices.Equal(got, want) {
					t.Fatalf("%d rules, %d paths, turn %d: hits out of order", n, paths, turn)
				}
				if paths == 100 && n >= 50 && len(got) < 5 {
					t.Fatalf("%d rules, %d paths: only %d hits, the order is hardly tested", n, paths, len(got))
				}
			}
		}
	}
}

// Counting hits into order keeps them all and sorts them, whatever order the candidates' own
// hits come in.
func TestIndexOrder(t *testing.T) {
	rs := Load(benchFiles(12))
	ix := buildIndex(rs.rules)
	var in []hit
	for cand := range int32(3) {
		for r := len(rs.rules) - 1; r >= 0; r-- { // backwards within a candidate
			for c := len(rs.rules[r].Conditions) - 1; c >= 0; c-- {
				for p := len(rs.rules[r].Conditions[c].patterns) - 1; p >= 0; p-- {
					in = append(in, hit{patRef{int32(r), int32(c), int32(p)}, cand, cand == 1})
				}
			}
		}
	}
	if len(in) < 30 {
		t.Fatalf("only %d hits", len(in))
	}
	got := ix.order(slices.Clone(in), new(scratch))
	want := slices.Clone(in)
	slices.SortFunc(want, func(a, b hit) int {
		return cmp.Or(cmp.Compare(a.rule, b.rule), cmp.Compare(a.cond, b.cond), cmp.Compare(a.pat, b.pat), cmp.Compare(a.cand, b.cand))
	})
	if !slices.Equal(got, want) {
		t.Fatalf("order:\n got %v\nwant %v", got, want)
	}
}
