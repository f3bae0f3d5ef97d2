package projections

import (
	"cmp"
	"slices"
	"strings"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/rules"
)

// Context returns the evaluation context of the next decision: the candidate paths of the
// evidence inside its windows, each with its newest MaxSources sources (oldest first), sorted by
// path then root, at most MaxPaths of them; and the mode, provider, model and OS in force.
//
// When there are more than MaxPaths candidates, the cap keeps paths by their most confident
// source (mention, tool target, file write, prose, tab, shell), then by how recent that evidence
// is, newest first; only the kept paths are sorted. The cost is bounded by the caps, not by the
// length of the log.
func (t *Task) Context() rules.EvaluationContext {
	ctx, _ := t.Next()
	return ctx
}

// Next builds the next decision's context and its Dropped counts in one pass; a decision
// needs both, and Context and Dropped alone would each build the context. What it returns is
// the caller's to keep and change: the task's working memory, reused from build to build, is
// never part of it.
func (t *Task) Next() (rules.EvaluationContext, []events.Count) {
	return t.NextAfter(rules.EvaluationContext{}, nil)
}

// NextAfter is Next for a caller that keeps the context before, prev, and never changes either:
// a path of the new context whose sources are equal to its sources in prev shares prev's
// sources, so that a context with new evidence on one path costs that path's sources. The paths
// are written into buf when it has room for them (a caller's array that nothing reads any more,
// not prev's), else into a new array. prev may be any context (a path is shared only when
// equal); with an empty one and no buf, it is Next.
func (t *Task) NextAfter(prev rules.EvaluationContext, buf []rules.ContextPath) (rules.EvaluationContext, []events.Count) {
	paths, overCap := t.build(prev.Paths, buf)
	return rules.EvaluationContext{Paths: paths, Mode: t.mode, Provider: t.provider,
		Model: t.model, OS: t.os}, t.dropped(overCap)
}

// Dropped counts, by reason and sorted by reason, the candidate paths that evidence still inside
// the windows of the next decision offered but its context leaves out: normalization failures
// (outside_root, dotdot, unmappable, not_a_path, root) of every event whose evidence still counts
// — the current user turn's, the last ToolTurns turns', the latest tab snapshot's, every file
// write's — and over_cap, once for each such path a source had to forget to stay within MaxPaths
// plus once for each path the context's cap left out. A count is per event and path: the same
// path offered twice counts twice. A path a source forgot may still be in the context through
// another source.
func (t *Task) Dropped() []events.Count {
	_, dropped := t.Next()
	return dropped
}

func (t *Task) dropped(overCap int) []events.Count {
	var n [numReasons]int
	t.userDrops.sum(&n)
	t.toolDrops.sum(&n)
	for r := range n {
		n[r] += t.tabDrops[r] + t.writeDrops[r]
	}
	n[reasonIndex(ReasonOverCap)] += overCap
	found := 0
	for _, c := range n {
		if c > 0 {
			found++
		}
	}
	if found == 0 {
		return nil
	}
	out := make([]events.Count, 0, found) // the caller keeps it: one of its own, sized once
	for r, c := range n {
		if c > 0 {
			out = append(out, events.Count{Name: reasons[r], N: c})
		}
	}
	slices.SortFunc(out, func(a, b events.Count) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

type candidate struct {
	key     pathKey
	sources []rules.Source
}

// buildScratch is the working memory of build, kept on the Task and cleared by each build so
// that a decision's context costs only what it hands out. Nothing in it reaches a caller: build
// copies what it returns.
type buildScratch struct {
	kept  []candidate // each candidate's sources array is reused too
	index map[pathKey]int
	cut   map[pathKey]bool
	known []bool
	fresh []int
	// spare are two key arrays, distinct from each other and from Task.order, that sortKeys
	// fills and swaps with Task.order.
	spare [2][]pathKey
	// pos are two arrays of places in kept, one of which sortKeys returns (see there).
	pos [2][]int
}

// build collects the candidates in cap order, merges each path's sources across kinds and sorts
// the kept ones for output. It returns how many distinct paths the cap cut. The paths and their
// sources are new memory (the paths buf's, when it has room), the caller's to keep, except the
// sources of a path equal to its sources in prev, which are prev's; the rest is scratch reused
// from the last build.
func (t *Task) build(prev, buf []rules.ContextPath) ([]rules.ContextPath, int) {
	firstEpoch := [numKinds]int{
		kindMention: t.minUserEpoch(), kindProse: t.minUserEpoch(),
		kindTool: t.minToolEpoch(), kindShell: t.minToolEpoch(),
	}
	s := &t.scratch
	if s.index == nil {
		s.index = make(map[pathKey]int, min(t.cfg.MaxPaths, 256)) // the default cap, without sizing for a huge configured one
	}
	clear(s.index)
	clear(s.cut)
	kept, index := s.kept[:0], s.index
	for k := range numKinds {
		// Each set is ordered newest first, and kinds come in confidence order, so the first
		// MaxPaths distinct keys met are exactly those the cap keeps.
		for e := t.sets[k].newest; e != nil; e = e.older {
			i, ok := index[e.key]
			if !ok {
				if len(kept) >= t.cfg.MaxPaths {
					if s.cut == nil {
						s.cut = map[pathKey]bool{}
					}
					s.cut[e.key] = true
					continue
				}
				i = len(kept)
				index[e.key] = i
				kept = slices.Grow(kept, 1)[:i+1]
				kept[i] = candidate{key: e.key, sources: kept[i].sources[:0]}
			}
			for _, src := range e.sources {
				if src.Epoch >= firstEpoch[k] {
					kept[i].sources = append(kept[i].sources, rules.Source{Kind: kindNames[k],
						Seq: src.Seq, Turn: src.Turn, Detail: src.Detail})
				}
			}
		}
	}
	s.kept = kept
	at := t.sortKeys(kept, index)
	for i := range kept {
		c := &kept[i]
		slices.SortFunc(c.sources, compareSources)
		if n := len(c.sources) - t.cfg.MaxSources; n > 0 {
			c.sources = c.sources[n:]
		}
	}
	var out []rules.ContextPath
	if cap(buf) >= len(kept) && cap(buf) > 0 && (len(prev) == 0 || &buf[:1][0] != &prev[0]) {
		out = buf[:len(kept)]
	} else {
		out = make([]rules.ContextPath, len(kept))
	}
	fresh := 0 // the sources not shared with prev
	j := 0
	for i, k := range t.order {
		c := &kept[at[i]]
		out[i] = rules.ContextPath{Path: k.rel, Root: t.rootName(k)}
		if len(c.sources) == 0 {
			continue
		}
		// prev is sorted as the output is (when it is an earlier build's): walk it alongside.
		for j < len(prev) && cmp.Or(strings.Compare(prev[j].Path, k.rel), strings.Compare(prev[j].Root, out[i].Root)) < 0 {
			j++
		}
		if j < len(prev) && prev[j].Path == k.rel && prev[j].Root == out[i].Root && slices.Equal(prev[j].Sources, c.sources) {
			out[i].Sources = prev[j].Sources
			continue
		}
		fresh += len(c.sources)
	}
	flat := make([]rules.Source, 0, fresh) // every new path's sources, in one allocation
	for i := range t.order {
		if out[i].Sources != nil {
			continue // prev's
		}
		c := &kept[at[i]]
		if len(c.sources) > 0 {
			start := len(flat)
			flat = append(flat, c.sources...)
			out[i].Sources = flat[start:len(flat):len(flat)] // capped: appending to one path's sources cannot reach the next's
		}
	}
	return out, len(s.cut)
}

func (t *Task) rootName(k pathKey) string {
	if k.root >= 0 {
		return t.roots[k.root]
	}
	return ""
}

// compareKeys orders context paths by path, then root (and, for two roots of one name, by
// their order in task_started, so that the order is total).
func (t *Task) compareKeys(a, b pathKey) int {
	if c := strings.Compare(a.rel, b.rel); c != 0 { // most paths differ here: skip the root
		return c
	}
	return cmp.Or(strings.Compare(t.rootName(a), t.rootName(b)), cmp.Compare(a.root, b.root))
}

// sortKeys sets t.order to the kept candidates' keys in output order and returns where each is
// in kept, so that the build reads the candidates in that order without looking each key up
// again. The last build's order, less the keys that left, is still sorted; only the new keys
// need sorting, and a merge does the rest. It writes into the scratch's spare arrays and hands
// the last order back to them; the places it returns are scratch too, valid until the next
// build.
func (t *Task) sortKeys(kept []candidate, index map[pathKey]int) []int {
	s := &t.scratch
	prev := t.order
	order, pos := s.spare[0][:0], s.pos[0][:0]
	known := slices.Grow(s.known[:0], len(kept))[:len(kept)]
	clear(known)
	s.known = known
	for _, k := range prev {
		if i, ok := index[k]; ok {
			order = append(order, k)
			pos = append(pos, i)
			known[i] = true
		}
	}
	s.pos[0] = pos
	if len(order) == len(kept) {
		s.spare[0], t.order = prev[:0], order
		return pos
	}
	fresh := s.fresh[:0] // the new keys' places in kept
	for i := range kept {
		if !known[i] {
			fresh = append(fresh, i)
		}
	}
	slices.SortFunc(fresh, func(a, b int) int { return t.compareKeys(kept[a].key, kept[b].key) })
	s.fresh = fresh
	merged, at := s.spare[1][:0], s.pos[1][:0]
	i, j := 0, 0
	for i < len(order) && j < len(fresh) {
		if f := fresh[j]; t.compareKeys(kept[f].key, order[i]) < 0 {
			merged, at = append(merged, kept[f].key), append(at, f)
			j++
		} else {
			merged, at = append(merged, order[i]), append(at, pos[i])
			i++
		}
	}
	merged, at = append(merged, order[i:]...), append(at, pos[i:]...)
	for _, f := range fresh[j:] {
		merged, at = append(merged, kept[f].key), append(at, f)
	}
	s.spare[0], s.spare[1], t.order = prev[:0], order[:0], merged
	s.pos[1] = at
	return at
}

// compareSources orders evidence oldest first; within one event by kind rank, then detail.
func compareSources(a, b rules.Source) int {
	if a.Seq != b.Seq {
		return cmp.Compare(a.Seq, b.Seq)
	}
	return cmp.Or(cmp.Compare(kindRank(a.Kind), kindRank(b.Kind)), cmp.Compare(a.Detail, b.Detail))
}

func kindRank(k rules.SourceKind) int {
	for i, n := range kindNames {
		if n == k {
			return i
		}
	}
	return len(kindNames)
}

// addGuesses folds paths guessed from prose or a shell command line, each with what the
// workspace said of it when it was recorded: a confirmed guess is evidence of kind k; an
// unconfirmed one is left out and counted as dropped (ReasonUnconfirmed), unless the task's
// config lets unconfirmed guesses in.
func (t *Task) addGuesses(k kind, gs []events.Guess, cwd string, src source) {
	for _, g := range gs {
		if g.Confirmed || t.cfg.ActivateUnconfirmed {
			t.addEvidence(k, g.Path, cwd, src)
			continue
		}
		switch k {
		case kindProse:
			if t.cfg.UserMessages > 0 {
				t.countDrop(k, t.userMsgs, reasonIndex(ReasonUnconfirmed))
			}
		case kindShell:
			if t.cfg.ToolTurns > 0 {
				t.countDrop(k, t.Turn(), reasonIndex(ReasonUnconfirmed))
			}
		}
	}
}

// Locate maps a path as an event spells it (relative to cwd or to the primary root, or
// absolute) to the index of its root in task_started's roots and its root-relative POSIX path.
// ok is false for a path no root holds, or one the context would drop.
func (t *Task) Locate(path, cwd string) (root int, rel string, ok bool) {
	root, rel, reason := t.rs.normalize(path, cwd)
	return root, rel, reason == "" && root >= 0
}

// Seen reports whether evidence other than guesses names path now: a mention or tool target
// still in its window, a file written, an open tab.
func (t *Task) Seen(path, cwd string) bool {
	root, rel, reason := t.rs.normalize(path, cwd)
	return reason == "" && t.SeenAt(root, rel)
}

// SeenAt is Seen for a path Locate has mapped already, so that a caller checking a path both
// ways normalises it once.
func (t *Task) SeenAt(root int, rel string) bool {
	key := pathKey{root, rel}
	for _, k := range []kind{kindMention, kindTool, kindFileWrite, kindTab} {
		if _, ok := t.sets[k].byKey[key]; ok {
			return true
		}
	}
	return false
}
