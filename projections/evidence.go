package projections

import (
	"slices"

	"github.com/tasklog/tasklog/rules"
)

// kind indexes the evidence sources in descending order of confidence, the order the cap keeps
// them in.
type kind int

const (
	kindMention kind = iota
	kindTool
	kindFileWrite
	kindProse
	kindTab
	kindShell
	numKinds
)

var kindNames = [numKinds]rules.SourceKind{rules.SourceMention, rules.SourceTool,
	rules.SourceFileWrite, rules.SourceProse, rules.SourceTab, rules.SourceShell}

// pathKey identifies a context path: the index of its root in the task's roots (-1 in a task
// without roots) and the root-relative path.
type pathKey struct {
	root int
	rel  string
}

// source is one piece of evidence. Epoch places it in its window: the user message ordinal for
// mentions and prose, the turn for tool and shell evidence, 0 for the unwindowed sources.
type source struct {
	Seq    uint64 `json:"seq"`
	Turn   int    `json:"turn"`
	Detail string `json:"detail,omitempty"`
	Epoch  int    `json:"epoch,omitempty"`
}

// entry is one path in one source's set, with that source's newest evidence for it, oldest first.
type entry struct {
	key          pathKey
	sources      []source
	newer, older *entry
}

func (e *entry) epoch() int { return e.sources[len(e.sources)-1].Epoch }

// recencySet is one evidence source's paths, most recently evidenced first. Touching a path moves
// it to the front; past the cap the least recent is evicted, and a window expires from the back.
// Every operation is O(1) amortized, which is what keeps a fold linear in the log.
type recencySet struct {
	byKey          map[pathKey]*entry
	newest, oldest *entry
	// free are entries removed from the set, kept to be reused (linked through older): a long
	// task evicts and adds paths all the time, and nothing outside the set keeps an entry.
	free *entry
}

func (s *recencySet) len() int { return len(s.byKey) }

// touch records evidence for key; when it evicts the least recent entry to stay within
// maxPaths, it returns that entry's epoch and evicted true.
func (s *recencySet) touch(key pathKey, src source, maxPaths, maxSources int) (epoch int, evicted bool) {
	if s.byKey == nil {
		s.byKey = map[pathKey]*entry{}
	}
	e, ok := s.byKey[key]
	if ok {
		if last := e.sources[len(e.sources)-1]; last.Seq != src.Seq || last.Detail != src.Detail {
			e.sources = append(e.sources, src)
			if n := len(e.sources) - maxSources; n > 0 {
				e.sources = slices.Delete(e.sources, 0, n)
			}
		}
		s.unlink(e)
	} else {
		e = s.alloc()
		e.key, e.sources = key, append(e.sources, src)
		s.byKey[key] = e
	}
	s.pushFront(e)
	if len(s.byKey) > maxPaths {
		old := s.oldest
		epoch = old.epoch()
		s.remove(old)
		return epoch, true
	}
	return 0, false
}

// alloc returns an empty entry, a removed one when there is one.
func (s *recencySet) alloc() *entry {
	e := s.free
	if e == nil {
		return &entry{}
	}
	s.free = e.older
	*e = entry{sources: e.sources[:0]}
	return e
}

// expire removes the entries whose newest evidence is older than minEpoch, and reports whether
// there were any. Epochs grow along the list, so they are all at the back.
func (s *recencySet) expire(minEpoch int) (removed bool) {
	for s.oldest != nil && s.oldest.epoch() < minEpoch {
		s.remove(s.oldest)
		removed = true
	}
	return removed
}

// holdsIn reports whether any entry keeps evidence of an epoch from lo up to, not including,
// hi. An entry's sources are oldest first.
func (s *recencySet) holdsIn(lo, hi int) bool {
	for e := s.newest; e != nil; e = e.older {
		for _, src := range e.sources {
			if src.Epoch >= hi {
				break
			}
			if src.Epoch >= lo {
				return true
			}
		}
	}
	return false
}

func (s *recencySet) reset() { *s = recencySet{} }

// remove takes e out of the set and keeps it for reuse (it is cleared then).
func (s *recencySet) remove(e *entry) {
	s.unlink(e)
	delete(s.byKey, e.key)
	e.older, s.free = s.free, e
}

func (s *recencySet) unlink(e *entry) {
	if e.newer != nil {
		e.newer.older = e.older
	} else {
		s.newest = e.older
	}
	if e.older != nil {
		e.older.newer = e.newer
	} else {
		s.oldest = e.newer
	}
	e.newer, e.older = nil, nil
}

func (s *recencySet) pushFront(e *entry) {
	e.older = s.newest
	if s.newest != nil {
		s.newest.newer = e
	} else {
		s.oldest = e
	}
	s.newest = e
}

// dropBucket counts, by reason index, the paths left out of one epoch's evidence.
type dropBucket struct {
	Epoch int             `json:"epoch"`
	N     [numReasons]int `json:"n"`
}

// dropWindow holds the drop counts of a windowed source, one bucket per epoch, oldest first; it
// expires with the window, so Dropped describes exactly the evidence that still counts.
type dropWindow struct {
	buckets []dropBucket
}

func (w *dropWindow) add(epoch, reason int) {
	i, found := slices.BinarySearchFunc(w.buckets, epoch, func(b dropBucket, e int) int { return b.Epoch - e })
	if !found {
		w.buckets = slices.Insert(w.buckets, i, dropBucket{Epoch: epoch})
	}
	w.buckets[i].N[reason]++
}

// expire drops the buckets older than minEpoch and reports whether there were any.
func (w *dropWindow) expire(minEpoch int) (removed bool) {
	i := 0
	for i < len(w.buckets) && w.buckets[i].Epoch < minEpoch {
		i++
	}
	if i > 0 {
		w.buckets = slices.Delete(w.buckets, 0, i)
	}
	return i > 0
}

func (w *dropWindow) sum(into *[numReasons]int) {
	for _, b := range w.buckets {
		for r, n := range b.N {
			into[r] += n
		}
	}
}
