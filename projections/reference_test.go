package projections

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/rules"
)

// referenceContext computes what Context and Dropped should say after evs, the slow and obvious
// way: every source keeps an unbounded-in-time list with plain slice eviction, windows are
// applied once at the end rather than expired as the log goes. It shares the path harvesting
// (tested on its own) but none of the incremental bookkeeping.
func referenceContext(tb testing.TB, evs []events.Event) []byte {
	type item struct {
		key     pathKey
		sources []source
	}
	type drop struct {
		k      kind
		epoch  int
		reason string
	}
	var (
		cfg                 Config
		roots               []string
		decisions, userMsgs int
		sets                [numKinds][]item // oldest first
		drops               []drop
		ctx                 rules.EvaluationContext
	)
	add := func(k kind, path, cwd string, src source) {
		switch k {
		case kindMention, kindProse:
			src.Epoch = userMsgs
		case kindTool, kindShell:
			src.Epoch = decisions + 1
		}
		root, rel, reason := Normalize(path, roots, cwd)
		if reason != "" {
			drops = append(drops, drop{k, src.Epoch, reason})
			return
		}
		key := pathKey{slices.Index(roots, root), rel}
		if root == "" {
			key.root = -1
		}
		s := sets[k]
		if i := slices.IndexFunc(s, func(it item) bool { return it.key == key }); i >= 0 {
			it := s[i]
			if last := it.sources[len(it.sources)-1]; last.Seq != src.Seq || last.Detail != src.Detail {
				it.sources = append(slices.Clone(it.sources), src)
			}
			if len(it.sources) > cfg.MaxSources {
				it.sources = it.sources[len(it.sources)-cfg.MaxSources:]
			}
			s = append(slices.Delete(s, i, i+1), it)
		} else {
			s = append(s, item{key, []source{src}})
		}
		if len(s) > cfg.MaxPaths {
			old := s[0].sources
			drops = append(drops, drop{k, old[len(old)-1].Epoch, ReasonOverCap})
			s = s[1:]
		}
		sets[k] = s
	}
	for _, ev := range evs {
		p, err := ev.Payload()
		if err != nil {
			tb.Fatal(err)
		}
		src := source{Seq: ev.Seq, Turn: ev.Turn}
		switch p := p.(type) {
		case *events.TaskStarted:
			cfg, _ = DecodeConfig(p.Config)
			roots, ctx.OS = p.Roots, p.OS
		case *events.UserMessage:
			userMsgs++
			for _, path := range ExtractPaths(p.Text) {
				add(kindProse, path, "", src)
			}
		case *events.Mention:
			src.Detail = p.Path
			path := p.Resolved
			if path == "" {
				path = strings.TrimPrefix(p.Path, "@")
				if _, _, r := Normalize(path, roots, ""); r == ReasonOutsideRoot && strings.HasPrefix(path, "/") {
					path = strings.TrimLeft(path, "/")
				}
			}
			add(kindMention, path, "", src)
		case *events.ToolCall:
			src.Detail = p.Tool
			for _, tg := range ToolTargets(p.Tool, p.Params) {
				add(map[bool]kind{false: kindTool, true: kindShell}[tg.Shell], tg.Path, p.Cwd, src)
			}
		case *events.TabSnapshot:
			sets[kindTab] = nil
			drops = slices.DeleteFunc(drops, func(d drop) bool { return d.k == kindTab })
			for _, path := range p.Open {
				src.Detail = "open"
				add(kindTab, path, "", src)
			}
			for _, path := range p.Visible {
				src.Detail = "visible"
				add(kindTab, path, "", src)
			}
		case *events.FileWrite:
			src.Detail = p.Op
			add(kindFileWrite, p.Path, "", src)
		case *events.SettingsChanged:
			ctx.Mode = cmp.Or(p.Mode, ctx.Mode)
			ctx.Provider = cmp.Or(p.Provider, ctx.Provider)
			ctx.Model = cmp.Or(p.Model, ctx.Model)
		case *events.Decision:
			decisions++
		}
	}
	first := func(k kind) int {
		switch k {
		case kindMention, kindProse:
			return map[bool]int{true: userMsgs + 1, false: userMsgs - cfg.UserMessages + 1}[cfg.UserMessages == 0]
		case kindTool, kindShell:
			return decisions + 1 - cfg.ToolTurns + 1
		}
		return 0
	}
	var kept []item
	cut := map[pathKey]bool{}
	for k := range numKinds {
		for _, it := range slices.Backward(sets[k]) {
			var valid []source
			for _, s := range it.sources {
				if s.Epoch >= first(k) {
					s.Detail = string(kindNames[k]) + "\x00" + s.Detail // carry the kind along
					valid = append(valid, s)
				}
			}
			if len(valid) == 0 {
				continue
			}
			i := slices.IndexFunc(kept, func(c item) bool { return c.key == it.key })
			switch {
			case i >= 0:
				kept[i].sources = append(kept[i].sources, valid...)
			case len(kept) < cfg.MaxPaths:
				kept = append(kept, item{it.key, valid})
			default:
				cut[it.key] = true
			}
		}
	}
	ctx.Paths = []rules.ContextPath{}
	for _, c := range kept {
		var srcs []rules.Source
		for _, s := range c.sources {
			kindName, detail, _ := strings.Cut(s.Detail, "\x00")
			srcs = append(srcs, rules.Source{Kind: rules.SourceKind(kindName), Seq: s.Seq, Turn: s.Turn, Detail: detail})
		}
		slices.SortFunc(srcs, compareSources)
		srcs = srcs[max(0, len(srcs)-cfg.MaxSources):]
		root := ""
		if c.key.root >= 0 {
			root = roots[c.key.root]
		}
		ctx.Paths = append(ctx.Paths, rules.ContextPath{Path: c.key.rel, Root: root, Sources: srcs})
	}
	slices.SortFunc(ctx.Paths, func(a, b rules.ContextPath) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Root, b.Root))
	})
	counts := map[string]int{}
	for _, d := range drops {
		if d.epoch >= first(d.k) {
			counts[d.reason]++
		}
	}
	counts[ReasonOverCap] += len(cut)
	var dropped []events.Count
	for _, r := range reasons {
		if counts[r] > 0 {
			dropped = append(dropped, events.Count{Name: r, N: counts[r]})
		}
	}
	slices.SortFunc(dropped, func(a, b events.Count) int { return cmp.Compare(a.Name, b.Name) })
	b, err := json.Marshal(struct {
		C rules.EvaluationContext
		D []events.Count
		T int
	}{ctx, dropped, decisions + 1})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestIncrementalMatchesReference checks the incremental windows and caps against the obvious
// computation after every event of random logs.
func TestIncrementalMatchesReference(t *testing.T) {
	seeds := uint64(40)
	if testing.Short() {
		seeds = 8
	}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(seed, 0xbeef))
		b := randomLog(t, r, 150)
		task := New()
		for i, ev := range b.evs {
			if err := task.Apply(ev); err != nil {
				t.Fatal(err)
			}
			got, want := contextJSON(t, task), referenceContext(t, b.evs[:i+1])
			if !bytes.Equal(got, want) {
				t.Fatalf("seed %d, after %d events (config %+v):\nincremental %s\nreference   %s",
					seed, i+1, task.Config(), got, want)
			}
		}
	}
}
