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
// needs both, and Context and Dropped alone would each build the context.
func (t *Task) Next() (rules.EvaluationContext, []events.Count) {
	paths, overCap := t.build()
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
	var out []events.Count
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

// build collects the candidates in cap order, merges each path's sources across kinds and sorts
// the kept ones for output. It returns how many distinct paths the cap cut.
func (t *Task) build() ([]rules.ContextPath, int) {
	firstEpoch := [numKinds]int{
		kindMention: t.minUserEpoch(), kindProse: t.minUserEpoch(),
		kindTool: t.minToolEpoch(), kindShell: t.minToolEpoch(),
	}
	room := min(t.cfg.MaxPaths, 256) // the default cap, without sizing for a huge configured one
	kept := make([]candidate, 0, room)
	index := make(map[pathKey]int, room)
	var cut map[pathKey]bool
	for k := range numKinds {
		// Each set is ordered newest first, and kinds come in confidence order, so the first
		// MaxPaths distinct keys met are exactly those the cap keeps.
		for e := t.sets[k].newest; e != nil; e = e.older {
			i, ok := index[e.key]
			if !ok {
				if len(kept) >= t.cfg.MaxPaths {
					if cut == nil {
						cut = map[pathKey]bool{}
					}
					cut[e.key] = true
					continue
				}
				i = len(kept)
				index[e.key] = i
				kept = append(kept, candidate{key: e.key})
			}
			for _, s := range e.sources {
				if s.Epoch >= firstEpoch[k] {
					kept[i].sources = append(kept[i].sources, rules.Source{Kind: kindNames[k],
						Seq: s.Seq, Turn: s.Turn, Detail: s.Detail})
				}
			}
		}
	}
	t.order = t.sortKeys(kept, index)
	out := make([]rules.ContextPath, 0, len(kept))
	for _, k := range t.order {
		c := kept[index[k]]
		slices.SortFunc(c.sources, compareSources)
		if n := len(c.sources) - t.cfg.MaxSources; n > 0 {
			c.sources = c.sources[n:]
		}
		out = append(out, rules.ContextPath{Path: c.key.rel, Root: t.rootName(c.key), Sources: c.sources})
	}
	return out, len(cut)
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

// sortKeys returns the kept candidates' keys in output order. The last build's order, less the
// keys that left, is still sorted; only the new keys need sorting, and a merge does the rest.
func (t *Task) sortKeys(kept []candidate, index map[pathKey]int) []pathKey {
	order := make([]pathKey, 0, len(kept))
	known := make([]bool, len(kept))
	for _, k := range t.order {
		if i, ok := index[k]; ok {
			order = append(order, k)
			known[i] = true
		}
	}
	if len(order) == len(kept) {
		return order
	}
	var fresh []pathKey
	for i, c := range kept {
		if !known[i] {
			fresh = append(fresh, c.key)
		}
	}
	slices.SortFunc(fresh, t.compareKeys)
	merged := make([]pathKey, 0, len(kept))
	i, j := 0, 0
	for i < len(order) && j < len(fresh) {
		if t.compareKeys(fresh[j], order[i]) < 0 {
			merged = append(merged, fresh[j])
			j++
		} else {
			merged = append(merged, order[i])
			i++
		}
	}
	merged = append(merged, order[i:]...)
	return append(merged, fresh[j:]...)
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
