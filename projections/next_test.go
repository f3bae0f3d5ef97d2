package projections

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/rules"
)

// A task reuses its working memory from one context to the next; what Next hands out must
// stay the caller's: unchanged by later events and builds, and free to change without
// changing the next build.
func TestNextResultsAreTheCallers(t *testing.T) {
	for _, config := range []string{"", `{"max_paths":5,"max_sources":2}`} {
		t.Run("config="+config, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			b := newLog(t, ws, config)
			file := func() string { return fmt.Sprintf("src/m%d/f%d.ts", r.IntN(4), r.IntN(9)) }
			for range 300 {
				switch r.IntN(6) {
				case 0:
					b.decide()
				case 1:
					b.user("fix " + file() + " and " + file())
				case 2:
					b.add(&events.TabSnapshot{Open: []string{"/ws/app/" + file(), "/ws/lib/" + file()}})
				case 3:
					b.add(&events.FileWrite{Path: "/ws/lib/" + file(), Op: events.OpEdit})
				default:
					b.tool("read_file", fmt.Sprintf(`{"path":%q}`, file()))
				}
			}
			live := New()
			type kept struct {
				ctx     rules.EvaluationContext
				dropped []events.Count
				was     []byte
			}
			var all []kept
			for n, ev := range b.evs {
				if err := live.Apply(ev); err != nil {
					t.Fatal(err)
				}
				ctx, dropped := live.Next()
				was := nextJSON(t, func() (rules.EvaluationContext, []events.Count) { return ctx, dropped })
				// What a fresh task builds from the same events, with no memory of earlier builds.
				fresh := (&logBuilder{tb: t, evs: b.evs[:n+1]}).fold()
				if want := nextJSON(t, fresh.Next); string(was) != string(want) {
					t.Fatalf("after seq %d: Next = %s, a fresh fold's = %s", ev.Seq, was, want)
				}
				all = append(all, kept{ctx, dropped, was})
				ctx2, dropped2 := live.Next()
				scribble(t, ctx2, dropped2)
				if again := nextJSON(t, live.Next); string(again) != string(was) {
					t.Fatalf("after seq %d, changing what Next returned changed the next build:\n%s\nwant %s", ev.Seq, again, was)
				}
			}
			for i, k := range all {
				if now := nextJSON(t, func() (rules.EvaluationContext, []events.Count) { return k.ctx, k.dropped }); string(now) != string(k.was) {
					t.Fatalf("the context of seq %d changed after later builds:\n%s\nwas %s", i+1, now, k.was)
				}
			}
		})
	}
}

// scribble changes what a caller may change of a context: its elements and what appending
// to a path's sources writes. It fails the test when appending to one path's sources changes
// another's.
func scribble(tb testing.TB, ctx rules.EvaluationContext, dropped []events.Count) {
	tb.Helper()
	mark := rules.Source{Kind: rules.SourceShell, Detail: "scribbled"}
	for i := range ctx.Paths {
		ctx.Paths[i].Sources = append(ctx.Paths[i].Sources, mark)
	}
	for _, p := range ctx.Paths {
		if slices.Index(p.Sources, mark) != len(p.Sources)-1 {
			tb.Fatalf("appending to another path's sources changed %s's: %+v", p.Path, p.Sources)
		}
	}
	for i := range ctx.Paths {
		ctx.Paths[i].Sources[0].Detail = "scribbled"
		ctx.Paths[i].Path = "scribbled"
	}
	for i := range dropped {
		dropped[i].N = -1
	}
}

// nextJSON is the JSON of a context and its dropped counts, as next gives them.
func nextJSON(tb testing.TB, next func() (rules.EvaluationContext, []events.Count)) []byte {
	tb.Helper()
	ctx, dropped := next()
	out, err := json.Marshal(struct {
		C rules.EvaluationContext
		D []events.Count
	}{ctx, dropped})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// ContextVersion may stay the same only while Next would return the same: checked after every
// event of random logs that exercise every source, the windows and the caps (randomLog, with
// windows and caps small enough that decisions move evidence out). Repeated decisions with
// nothing new must keep it, or it saves no build.
func TestContextVersion(t *testing.T) {
	kept, moved := 0, 0
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		b := randomLog(t, r, 300)
		live := New()
		var was []byte
		var version uint64
		for n, ev := range b.evs {
			if err := live.Apply(ev); err != nil {
				t.Fatal(err)
			}
			now := nextJSON(t, live.Next)
			if n > 0 && live.ContextVersion() == version {
				if string(now) != string(was) {
					t.Fatalf("seed %d: after seq %d (%s) the version stayed %d, but Next changed:\n%s\nwas %s", seed, ev.Seq, ev.Type, version, now, was)
				}
				if ev.Type == events.TypeDecision {
					kept++
				}
			} else if ev.Type == events.TypeDecision {
				moved++
			}
			was, version = now, live.ContextVersion()
		}
	}
	if kept == 0 || moved == 0 {
		t.Errorf("of the decisions, %d kept the version and %d changed it: want some of each", kept, moved)
	}
	t.Logf("decisions that kept the version: %d, that changed it: %d", kept, moved)
}

// NextAfter builds what Next builds, sharing the sources of a path that did not change with
// the context before and nothing else, and never changes that context.
func TestNextAfterSharesOnlyWhatDidNotChange(t *testing.T) {
	shared, fresh := 0, 0
	for seed := range uint64(10) {
		r := rand.New(rand.NewPCG(seed, 11))
		b := randomLog(t, r, 300)
		live := New()
		var prev rules.EvaluationContext
		var prevWas []byte
		for _, ev := range b.evs {
			if err := live.Apply(ev); err != nil {
				t.Fatal(err)
			}
			want := nextJSON(t, live.Next)
			ctx, dropped := live.NextAfter(prev, nil)
			if got := nextJSON(t, func() (rules.EvaluationContext, []events.Count) { return ctx, dropped }); string(got) != string(want) {
				t.Fatalf("seed %d, after seq %d: NextAfter = %s, Next = %s", seed, ev.Seq, got, want)
			}
			if prevWas != nil {
				if now := nextJSON(t, func() (rules.EvaluationContext, []events.Count) { return prev, nil }); string(now) != string(prevWas) {
					t.Fatalf("seed %d, after seq %d: NextAfter changed the context before:\n%s\nwas %s", seed, ev.Seq, now, prevWas)
				}
			}
			for _, p := range ctx.Paths {
				if len(p.Sources) == 0 {
					continue
				}
				i := slices.IndexFunc(prev.Paths, func(q rules.ContextPath) bool { return q.Path == p.Path && q.Root == p.Root })
				same := i >= 0 && slices.Equal(prev.Paths[i].Sources, p.Sources)
				switch isShared := i >= 0 && len(prev.Paths[i].Sources) > 0 && &prev.Paths[i].Sources[0] == &p.Sources[0]; {
				case same && !isShared:
					t.Fatalf("seed %d, after seq %d: %s has the sources it had before, in new memory", seed, ev.Seq, p.Path)
				case !same && isShared:
					t.Fatalf("seed %d, after seq %d: %s shares sources that changed", seed, ev.Seq, p.Path)
				case same:
					shared++
				default:
					fresh++
				}
				if cap(p.Sources) != len(p.Sources) {
					t.Fatalf("seed %d, after seq %d: %s's sources can be appended to in place", seed, ev.Seq, p.Path)
				}
			}
			prev = ctx
			prevWas = nextJSON(t, func() (rules.EvaluationContext, []events.Count) { return prev, nil })
		}
	}
	if shared == 0 || fresh == 0 {
		t.Errorf("%d paths shared their sources and %d did not: want some of each", shared, fresh)
	}
}
