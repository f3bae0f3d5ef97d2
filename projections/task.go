package projections

import (
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"

	"github.com/tasklog/tasklog/events"
)

// Sentinel errors callers test with errors.Is.
var (
	// ErrNotStarted is returned for a log whose first event is not task_started.
	ErrNotStarted = errors.New("task log does not begin with task_started")
	// ErrStartedTwice is returned for a second task_started in one log.
	ErrStartedTwice = errors.New("task_started after the start of the task")
	// ErrOutOfOrder is returned for an event whose sequence number or turn does not follow the
	// events folded so far: a gap, a repeat, or a tail applied to the wrong snapshot.
	ErrOutOfOrder = errors.New("event out of order")
	// ErrConfig is returned for an engine configuration that cannot be used.
	ErrConfig = errors.New("invalid engine configuration")
	// ErrSnapshotVersion is returned by Restore for a snapshot another Version of this package
	// wrote; fold the log from the start instead.
	ErrSnapshotVersion = errors.New("projection snapshot has another version")
	// ErrSnapshotCorrupt is returned by Restore for bytes that are not a well-formed snapshot.
	ErrSnapshotCorrupt = errors.New("corrupt projection snapshot")
)

// Task is the fold of one task's log: the evidence for the next decision's context, the settings
// and toggles in force, the rules snapshot to evaluate and the counters of past decisions and
// triggers. The zero value is not usable; start with New or Restore. A Task is not safe for
// concurrent use.
type Task struct {
	started   bool
	lastSeq   uint64
	decisions int
	userMsgs  int

	roots   []string
	rs      rootSet
	runtime events.Runtime
	os      string
	cfg     Config

	mode, provider, model string

	toggles   map[string]bool
	triggers  map[string]int
	snapSeq   uint64
	snapFiles []events.SnapshotFile

	sets       [numKinds]recencySet
	userDrops  dropWindow // mentions and prose, by user message
	toolDrops  dropWindow // tool and shell, by turn
	tabDrops   [numReasons]int
	writeDrops [numReasons]int

	// order is the last built context's keys in output order; the next build, which mostly
	// keeps them, merges what is new into it instead of sorting again. It is derived: a task
	// restored from a snapshot starts without it.
	order []pathKey
	// scratch is the rest of build's working memory, reused from one build to the next.
	scratch buildScratch

	// context counts the changes that may change what Next returns (see ContextVersion).
	context uint64

	// dec and targets are scratch memory reused from event to event; the fold keeps nothing of
	// a payload but the strings it copies out of it.
	dec     events.Decoder
	targets targetReader
}

// New returns an empty Task, ready for the log's first event, which must be task_started.
func New() *Task {
	return &Task{cfg: DefaultConfig(), toggles: map[string]bool{}, triggers: map[string]int{}}
}

// Fold folds a whole log, in order, into a new Task.
func Fold(evs iter.Seq2[events.Event, error]) (*Task, error) {
	t := New()
	for ev, err := range evs {
		if err != nil {
			return nil, fmt.Errorf("projections: read log: %w", err)
		}
		if err := t.Apply(ev); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Apply folds one event. Events must come in log order: sequence numbers 1, 2, 3 … and the turn
// numbering of the events package. It decodes the payload and fails, leaving the Task as it was,
// on an event it cannot fold: an unknown type (wrapping events.ErrUnknownType), an invalid or
// newer payload, an event out of order. Errors name the event's sequence number and type.
func (t *Task) Apply(ev events.Event) error {
	if err := t.checkOrder(ev); err != nil {
		return fmt.Errorf("projections: event %s: %w", ev, err)
	}
	if ev.Type == events.TypeDecision {
		// Decisions are most of a log's bytes and the fold needs only their turn.
		h, err := events.Head(ev)
		if err == nil {
			err = t.decision(h.Turn)
		}
		if err != nil {
			return fmt.Errorf("projections: event %s: %w", ev, err)
		}
		t.lastSeq = ev.Seq
		return nil
	}
	p, err := t.dec.Payload(ev)
	if err != nil {
		return fmt.Errorf("projections: %w", err)
	}
	// feeds tells an event that feeds the next context or its dropped counts (ContextVersion).
	feeds := true
	switch p := p.(type) {
	case *events.TaskStarted:
		err = t.start(p)
	case *events.UserMessage:
		t.userMessage(ev, p)
	case *events.Mention:
		t.mention(ev, p)
	case *events.ToolCall:
		t.toolCall(ev, p)
	case *events.TabSnapshot:
		t.tabSnapshot(ev, p)
	case *events.FileWrite:
		t.addEvidence(kindFileWrite, p.Path, "", source{Seq: ev.Seq, Turn: ev.Turn, Detail: p.Op})
	case *events.SettingsChanged:
		t.settings(p)
	case *events.RuleToggled:
		feeds = false
		t.toggles[p.Rule] = p.Enabled
	case *events.RulesSnapshot:
		feeds = false
		t.snapSeq, t.snapFiles = ev.Seq, nil
		if len(p.Files) > 0 { // nil for none, as Restore gives it back
			t.snapFiles = slices.Clone(p.Files)
		}
	case *events.RuleTriggered:
		feeds = false
		t.triggers[p.Rule]++
	case *events.Delivery, *events.InstructionsLoaded, *events.Compaction, *events.AgentStopped:
		// What reached the model and what the agent did by itself: folded by Deliveries.
		feeds = false
	default:
		err = fmt.Errorf("%w %q: the projection does not fold it", events.ErrUnknownType, ev.Type)
	}
	if err != nil {
		return fmt.Errorf("projections: event %s: %w", ev, err)
	}
	if feeds {
		t.context++
	}
	t.lastSeq = ev.Seq
	return nil
}

func (t *Task) checkOrder(ev events.Event) error {
	switch {
	case !t.started && ev.Type != events.TypeTaskStarted:
		return ErrNotStarted
	case t.started && ev.Type == events.TypeTaskStarted:
		return ErrStartedTwice
	case ev.Seq != t.lastSeq+1:
		return fmt.Errorf("%w: seq %d after seq %d", ErrOutOfOrder, ev.Seq, t.lastSeq)
	case ev.Turn != t.Turn():
		return fmt.Errorf("%w: turn %d, but %d decisions were folded so the turn is %d",
			ErrOutOfOrder, ev.Turn, t.decisions, t.Turn())
	}
	return nil
}

func (t *Task) start(p *events.TaskStarted) error {
	cfg, err := DecodeConfig(p.Config)
	if err != nil {
		return err
	}
	t.started = true
	t.cfg = cfg
	t.roots = slices.Clone(p.Roots)
	t.rs = prepareRoots(t.roots)
	t.runtime = p.Runtime
	t.os = p.OS
	return nil
}

// userMessage opens a new user turn: older mentions and prose leave the window.
func (t *Task) userMessage(ev events.Event, p *events.UserMessage) {
	t.userMsgs++
	t.expireUser()
	if p.Guesses != nil { // checked when recorded
		t.addGuesses(kindProse, p.Guesses, "", source{Seq: ev.Seq, Turn: ev.Turn})
		return
	}
	for _, path := range ExtractPaths(p.Text) {
		t.addEvidence(kindProse, path, "", source{Seq: ev.Seq, Turn: ev.Turn})
	}
}

// mention takes the runtime's resolution, else the spelling. In an unresolved spelling, a leading
// "/" that maps to no root is Cline's way of writing a workspace path: "/src/a.ts" is the
// workspace's src/a.ts.
func (t *Task) mention(ev events.Event, p *events.Mention) {
	src := source{Seq: ev.Seq, Turn: ev.Turn, Detail: p.Path}
	if p.Resolved != "" {
		t.addEvidence(kindMention, p.Resolved, "", src)
		return
	}
	path := strings.TrimPrefix(p.Path, "@")
	if _, _, reason := t.rs.normalize(path, ""); reason == ReasonOutsideRoot && strings.HasPrefix(path, "/") {
		path = strings.TrimLeft(path, "/")
	}
	t.addEvidence(kindMention, path, "", src)
}

func (t *Task) toolCall(ev events.Event, p *events.ToolCall) {
	// Params of a decoded payload are a valid JSON object: they need no second check.
	// With guesses, the shell paths were checked when recorded: they are the guesses, and the
	// command line is not read again.
	for _, target := range t.targets.targets(p.Tool, p.Params, p.Guesses != nil) {
		k := kindTool
		if target.Shell {
			k = kindShell
		}
		t.addEvidence(k, target.Path, p.Cwd, source{Seq: ev.Seq, Turn: ev.Turn, Detail: p.Tool})
	}
	if p.Guesses != nil {
		t.addGuesses(kindShell, p.Guesses, p.Cwd, source{Seq: ev.Seq, Turn: ev.Turn, Detail: p.Tool})
	}
}

// tabSnapshot replaces the tabs; visible editors are added last, so they are the newest and win
// the cap over tabs that are merely open.
func (t *Task) tabSnapshot(ev events.Event, p *events.TabSnapshot) {
	t.sets[kindTab].reset()
	t.tabDrops = [numReasons]int{}
	for _, path := range p.Open {
		t.addEvidence(kindTab, path, "", source{Seq: ev.Seq, Turn: ev.Turn, Detail: "open"})
	}
	for _, path := range p.Visible {
		t.addEvidence(kindTab, path, "", source{Seq: ev.Seq, Turn: ev.Turn, Detail: "visible"})
	}
}

func (t *Task) settings(p *events.SettingsChanged) {
	if p.Mode != "" {
		t.mode = p.Mode
	}
	if p.Provider != "" {
		t.provider = p.Provider
	}
	if p.Model != "" {
		t.model = p.Model
	}
}

// decision closes the turn: the next one begins, and the oldest turn of tool evidence may leave
// the window.
func (t *Task) decision(turn int) error {
	if turn != t.Turn() {
		return fmt.Errorf("%w: decision for turn %d in turn %d", ErrOutOfOrder, turn, t.Turn())
	}
	was := t.minToolEpoch()
	t.decisions++
	if t.expireTools(was) {
		t.context++
	}
	return nil
}

// The first epoch still inside each window.
func (t *Task) minUserEpoch() int { return t.userMsgs - t.cfg.UserMessages + 1 }
func (t *Task) minToolEpoch() int { return t.Turn() - t.cfg.ToolTurns + 1 }

func (t *Task) expireUser() {
	first := t.minUserEpoch()
	t.sets[kindMention].expire(first)
	t.sets[kindProse].expire(first)
	t.userDrops.expire(first)
}

// expireTools moves the tool window to the current turn from the one that began at epoch was.
// It reports whether that changed the context or its dropped counts: evidence or counts left
// the window, or a path that stays lost sources (those of epochs was up to the new start).
func (t *Task) expireTools(was int) (changed bool) {
	first := t.minToolEpoch()
	for _, k := range []kind{kindTool, kindShell} {
		if t.sets[k].expire(first) || t.sets[k].holdsIn(was, first) {
			changed = true
		}
	}
	return t.toolDrops.expire(first) || changed
}

// addEvidence normalizes one path and records it, or counts why it is left out.
func (t *Task) addEvidence(k kind, path, cwd string, src source) {
	switch k {
	case kindMention, kindProse:
		if t.cfg.UserMessages == 0 {
			return
		}
		src.Epoch = t.userMsgs
	case kindTool, kindShell:
		if t.cfg.ToolTurns == 0 {
			return
		}
		src.Epoch = t.Turn()
	}
	root, rel, reason := t.rs.normalize(path, cwd)
	if reason != "" {
		t.countDrop(k, src.Epoch, reasonIndex(reason))
		return
	}
	if epoch, evicted := t.sets[k].touch(pathKey{root, rel}, src, t.cfg.MaxPaths, t.cfg.MaxSources); evicted {
		t.countDrop(k, epoch, reasonIndex(ReasonOverCap))
	}
}

func (t *Task) countDrop(k kind, epoch, reason int) {
	switch k {
	case kindMention, kindProse:
		if epoch >= t.minUserEpoch() {
			t.userDrops.add(epoch, reason)
		}
	case kindTool, kindShell:
		if epoch >= t.minToolEpoch() {
			t.toolDrops.add(epoch, reason)
		}
	case kindTab:
		t.tabDrops[reason]++
	case kindFileWrite:
		t.writeDrops[reason]++
	}
}

// ContextVersion changes whenever an event folded since may have changed what Next returns,
// and stays the same otherwise: a caller that kept Next's result of the same version may use it
// again instead of building the context anew. Most decisions change nothing in it (only the
// decision that moves tool evidence out of its window does), nor do the events of rules and
// deliveries. Versions of different Tasks are unrelated.
func (t *Task) ContextVersion() uint64 { return t.context }

// Turn is the turn the next decision will have: the number of decisions folded, plus one.
func (t *Task) Turn() int { return t.decisions + 1 }

// Decisions is the number of decision events folded.
func (t *Task) Decisions() int { return t.decisions }

// LastSeq is the sequence number of the last event folded; 0 before the first.
func (t *Task) LastSeq() uint64 { return t.lastSeq }

// Roots are the workspace roots of task_started, the primary first.
func (t *Task) Roots() []string { return slices.Clone(t.roots) }

// Runtime is the agent runtime task_started named.
func (t *Task) Runtime() events.Runtime { return t.runtime }

// Config is the engine configuration task_started recorded (the defaults when it recorded none).
func (t *Task) Config() Config { return t.cfg }

// Toggles returns a copy of the rule toggles folded: rule id to enabled, the latest toggle of
// each rule. Rules never toggled are absent.
func (t *Task) Toggles() map[string]bool { return maps.Clone(t.toggles) }

// TogglesAre reports whether m holds the rule toggles folded, as Toggles would return them: a
// caller that kept a copy can tell it is still current without making another.
func (t *Task) TogglesAre(m map[string]bool) bool { return maps.Equal(t.toggles, m) }

// Toggled returns the latest toggle of a rule, and whether it was ever toggled.
func (t *Task) Toggled(ruleID string) (enabled, ok bool) {
	enabled, ok = t.toggles[ruleID]
	return enabled, ok
}

// LastSnapshot returns the sequence number and files of the latest rules_snapshot folded; seq is
// 0 when there has been none.
func (t *Task) LastSnapshot() (seq uint64, files []events.SnapshotFile) {
	return t.snapSeq, slices.Clone(t.snapFiles)
}

// LastSnapshotSeq is the sequence number of the latest rules_snapshot, 0 for none.
func (t *Task) LastSnapshotSeq() uint64 { return t.snapSeq }

// TriggerCount is how many times rule_triggered named the rule, so a policy such as "once per
// task" survives a restart.
func (t *Task) TriggerCount(ruleID string) int { return t.triggers[ruleID] }
