package projections

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tasklog/tasklog/events"
)

// Version is the version of the projection and of its snapshot encoding. It changes whenever the
// fold would produce a different state from the same events, so a snapshot of another version is
// never resumed: the log is folded again.
const Version = 3

// snapshot is the serialized state of a Task. Maps are written as sorted lists and evidence sets
// oldest first, so equal states have equal bytes.
type snapshot struct {
	Version       int                   `json:"version"`
	Started       bool                  `json:"started"`
	LastSeq       uint64                `json:"last_seq"`
	Decisions     int                   `json:"decisions"`
	UserMessages  int                   `json:"user_messages"`
	Roots         []string              `json:"roots"`
	Runtime       events.Runtime        `json:"runtime,omitzero"`
	OS            string                `json:"os,omitempty"`
	Mode          string                `json:"mode,omitempty"`
	Provider      string                `json:"provider,omitempty"`
	Model         string                `json:"model,omitempty"`
	Config        Config                `json:"config"`
	Toggles       []snapshotToggle      `json:"toggles,omitempty"`
	Triggers      []events.Count        `json:"triggers,omitempty"`
	RulesSnapshot uint64                `json:"rules_snapshot,omitempty"`
	RulesFiles    []events.SnapshotFile `json:"rules_files,omitempty"`
	Evidence      []snapshotSet         `json:"evidence"`
	UserDrops     []dropBucket          `json:"user_drops,omitempty"`
	ToolDrops     []dropBucket          `json:"tool_drops,omitempty"`
	TabDrops      [numReasons]int       `json:"tab_drops"`
	WriteDrops    [numReasons]int       `json:"write_drops"`
}

type snapshotToggle struct {
	Rule    string `json:"rule"`
	Enabled bool   `json:"enabled"`
}

type snapshotSet struct {
	Kind    string          `json:"kind"`
	Entries []snapshotEntry `json:"entries,omitempty"`
}

type snapshotEntry struct {
	Root    int      `json:"root"`
	Path    string   `json:"path"`
	Sources []source `json:"sources"`
}

// Marshal encodes the Task's whole state, tagged with Version. The session stores the bytes
// next to the log and opens the task later with Restore plus the events after LastSeq.
func (t *Task) Marshal() ([]byte, error) { return t.AppendMarshal(nil) }

// AppendMarshal appends Marshal's bytes to dst, so that a caller that writes snapshots one after
// the other encodes each in the memory of the one before.
func (t *Task) AppendMarshal(dst []byte) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	if err := json.NewEncoder(buf).Encode(t.snapshot()); err != nil {
		return dst, fmt.Errorf("projections: marshal snapshot: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil // Encode ends with a newline; json.Marshal does not
}

// snapshot is the Task's whole state as Marshal encodes it.
func (t *Task) snapshot() snapshot {
	s := snapshot{
		Version: Version, Started: t.started, LastSeq: t.lastSeq, Decisions: t.decisions,
		UserMessages: t.userMsgs, Roots: t.roots, Runtime: t.runtime, OS: t.os, Mode: t.mode,
		Provider: t.provider, Model: t.model, Config: t.cfg, RulesSnapshot: t.snapSeq,
		RulesFiles: t.snapFiles, UserDrops: t.userDrops.buckets, ToolDrops: t.toolDrops.buckets,
		TabDrops: t.tabDrops, WriteDrops: t.writeDrops,
	}
	for rule, on := range t.toggles {
		s.Toggles = append(s.Toggles, snapshotToggle{Rule: rule, Enabled: on})
	}
	slices.SortFunc(s.Toggles, func(a, b snapshotToggle) int { return cmp.Compare(a.Rule, b.Rule) })
	for rule, n := range t.triggers {
		s.Triggers = append(s.Triggers, events.Count{Name: rule, N: n})
	}
	slices.SortFunc(s.Triggers, func(a, b events.Count) int { return cmp.Compare(a.Name, b.Name) })
	s.Evidence = make([]snapshotSet, 0, numKinds)
	for k := range numKinds {
		set := snapshotSet{Kind: string(kindNames[k])}
		if n := t.sets[k].len(); n > 0 {
			set.Entries = make([]snapshotEntry, 0, n)
		}
		for e := t.sets[k].oldest; e != nil; e = e.newer {
			set.Entries = append(set.Entries, snapshotEntry{Root: e.key.root, Path: e.key.rel,
				Sources: e.sources})
		}
		s.Evidence = append(s.Evidence, set)
	}
	return s
}

// Restore rebuilds a Task from bytes Marshal wrote. A snapshot of another Version returns
// ErrSnapshotVersion, anything malformed ErrSnapshotCorrupt.
func Restore(b []byte) (*Task, error) {
	var head struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(b, &head); err != nil || head.Version == nil {
		return nil, fmt.Errorf("projections: restore: %w: no version", ErrSnapshotCorrupt)
	}
	if *head.Version != Version {
		return nil, fmt.Errorf("projections: restore: %w: snapshot is v%d, this build folds v%d",
			ErrSnapshotVersion, *head.Version, Version)
	}
	var s snapshot
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("projections: restore: %w: %v", ErrSnapshotCorrupt, err)
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("projections: restore: %w: %v", ErrSnapshotCorrupt, err)
	}
	t := New()
	t.started, t.lastSeq, t.decisions, t.userMsgs = s.Started, s.LastSeq, s.Decisions, s.UserMessages
	t.roots, t.rs = s.Roots, prepareRoots(s.Roots)
	t.runtime, t.os, t.mode, t.provider, t.model = s.Runtime, s.OS, s.Mode, s.Provider, s.Model
	t.cfg = s.Config
	for _, tg := range s.Toggles {
		t.toggles[tg.Rule] = tg.Enabled
	}
	for _, c := range s.Triggers {
		t.triggers[c.Name] = c.N
	}
	t.snapSeq, t.snapFiles = s.RulesSnapshot, s.RulesFiles
	for k, set := range s.Evidence {
		rs := &t.sets[k]
		for _, e := range set.Entries {
			if rs.byKey == nil {
				rs.byKey = map[pathKey]*entry{}
			}
			en := &entry{key: pathKey{e.Root, e.Path}, sources: e.Sources}
			rs.byKey[en.key] = en
			rs.pushFront(en)
		}
	}
	t.userDrops.buckets, t.toolDrops.buckets = s.UserDrops, s.ToolDrops
	t.tabDrops, t.writeDrops = s.TabDrops, s.WriteDrops
	return t, nil
}

// check rejects a snapshot that would make a Task misbehave rather than fail: one that did not
// come from Marshal.
func (s *snapshot) check() error {
	if err := s.Config.Validate(); err != nil {
		return err
	}
	if len(s.Evidence) != int(numKinds) {
		return fmt.Errorf("%d evidence sets, want %d", len(s.Evidence), numKinds)
	}
	for k, set := range s.Evidence {
		if set.Kind != string(kindNames[k]) {
			return fmt.Errorf("evidence set %d is %q, want %q", k, set.Kind, kindNames[k])
		}
		if len(set.Entries) > s.Config.MaxPaths {
			return fmt.Errorf("%s holds %d paths, over max_paths", set.Kind, len(set.Entries))
		}
		seen := map[pathKey]bool{}
		for _, e := range set.Entries {
			key := pathKey{e.Root, e.Path}
			switch {
			case e.Root < -1 || e.Root >= len(s.Roots):
				return fmt.Errorf("%s path %q: root %d out of range", set.Kind, e.Path, e.Root)
			case len(e.Sources) == 0 || len(e.Sources) > s.Config.MaxSources:
				return fmt.Errorf("%s path %q: %d sources", set.Kind, e.Path, len(e.Sources))
			case seen[key]:
				return fmt.Errorf("%s path %q twice", set.Kind, e.Path)
			}
			seen[key] = true
		}
	}
	for _, w := range [][]dropBucket{s.UserDrops, s.ToolDrops} {
		if !slices.IsSortedFunc(w, func(a, b dropBucket) int { return a.Epoch - b.Epoch }) {
			return fmt.Errorf("drop buckets out of order")
		}
	}
	return nil
}
