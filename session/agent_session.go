package session

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/projections"
	"github.com/tasklog/tasklog/store"
)

// deliveriesSnapshotName is the name the Deliveries fold is stored under beside the log.
var deliveriesSnapshotName = fmt.Sprintf("deliveries/v%d", projections.DeliveriesVersion)

// triggersSnapshotName is where the count of prompts and tool calls (compactionKey) is stored,
// at the Deliveries snapshot's seq.
const triggersSnapshotName = "hook-triggers/v1"

// deliveriesSnapshotEvery is how many events may pass before an agent session stores its
// Deliveries fold again, and projectionTailMax how many its projection snapshot may lag when
// the session closes: each hook is a new process that reopens the task, and a short tail to
// fold costs less than the occasional snapshot write.
const (
	deliveriesSnapshotEvery = 32
	projectionTailMax       = 32
)

// ErrAgentMismatch is OpenAgent's error when a task in the log is opened as another agent than
// the one that started it: what reaches the model depends on the agent, and replay follows the
// recorded one.
var ErrAgentMismatch = errors.New("the task was started by another agent")

// ErrNoAgent is returned when delivering in a task whose recorded runtime is no known agent
// (one started by a runtime's open without an agent): what reaches the model on its own is
// unknown there.
var ErrNoAgent = errors.New("the task was not started by a known agent")

// AgentOptions configure OpenAgent.
type AgentOptions struct {
	// Agent is the agent whose hooks drive the task; "" takes the task's recorded one. A task
	// already in the log keeps the agent that started it (its runtime name): naming another is
	// ErrAgentMismatch.
	Agent agentlog.Agent
	// Started is the task_started payload of a task that does not exist yet (agentlog's
	// Hook.Started); a task already in the log keeps the roots it recorded.
	Started *events.TaskStarted
	// Home reads the user's global rules; nil for none.
	Home fs.FS
	// RootFS reads a recorded workspace root on this machine; nil means os.DirFS of the root
	// when it is a folder here, and no rule files otherwise.
	RootFS func(root string) fs.FS
	// Watch, with RootFS nil, watches the roots that are folders here for changes to rule files
	// (Root.Dir) instead of checking each rule file at every decision: for a process that
	// decides many times, such as the resident server; a hook that exits after one decision
	// only pays for setting the watches up.
	Watch bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// AgentSession is a task driven by an agent's hooks: a Session that also knows which rules
// reached the model (the Deliveries fold), records hook events exactly once, and delivers. Like
// Session it is safe for concurrent use: hooks of one task that arrive together deliver a rule
// once, for a decision's delivery is folded before the next decision chooses its own.
type AgentSession struct {
	*Session
	agent agentlog.Agent
	dlv   *projections.Deliveries
	// dlvSaved is the LastSeq of the stored Deliveries fold.
	dlvSaved uint64
	// triggers counts the prompts and tool calls in the log (compactionKey).
	triggers int
	// hookDecision is where a hook's decision is written (DecideInto): Hook returns only the
	// delivered text, so the decision's arrays serve the next hook's decision, written and
	// read under s.mu only.
	hookDecision Decision
}

// OpenAgent opens (or starts) a task for an agent's hook. A new task records opts.Started; an
// existing one reads its rules from the roots its log recorded, so a hook run from another
// folder cannot change them. Either way the agent is the recorded runtime's name, the one
// replay checks deliveries against. A task not in the log, without opts.Started, is an error
// that wraps store.ErrTaskNotFound.
func OpenAgent(ctx context.Context, db store.Store, task uuid.UUID, opts AgentOptions) (*AgentSession, error) {
	rootFS := opts.RootFS
	if rootFS == nil {
		rootFS = dirFS
	}
	on := func(paths []string) []Root {
		roots := rootsOn(paths, rootFS)
		if opts.RootFS == nil && opts.Watch {
			for i := range roots {
				if roots[i].FS != nil {
					roots[i].Dir = filepath.FromSlash(roots[i].Path)
				}
			}
		}
		return roots
	}
	so := Options{Home: opts.Home, Now: opts.Now}
	_, err := db.Head(task)
	switch {
	case errors.Is(err, store.ErrTaskNotFound):
		if opts.Started == nil {
			return nil, fmt.Errorf("%w, and no task_started was given to start it", err)
		}
		ev, err := events.New(opts.Started)
		if err != nil {
			return nil, fmt.Errorf("open task %s: %w", task, err)
		}
		so.Started = &ev
		so.Roots = on(opts.Started.Roots)
	case err != nil:
		return nil, fmt.Errorf("open task %s: %w", task, err)
	}
	s, err := Open(ctx, db, task, so)
	if err != nil {
		return nil, err
	}
	agent := agentlog.Agent(s.state.Runtime().Name)
	if so.Started == nil {
		if opts.Agent != "" && opts.Agent != agent {
			s.Close()
			return nil, fmt.Errorf("open task %s as %s: %w (%q)", task, opts.Agent, ErrAgentMismatch, agent)
		}
		s.setRoots(on(s.state.Roots()))
	}
	a := &AgentSession{Session: s, agent: agent}
	if err := a.loadDeliveries(ctx); err != nil {
		return nil, err
	}
	s.foldMore = a.foldDeliveries // every append folds into the Deliveries fold too, under s.mu
	return a, nil
}

// dirFS reads a root that is a folder on this machine.
func dirFS(root string) fs.FS {
	if st, err := os.Stat(root); err == nil && st.IsDir() {
		return os.DirFS(root)
	}
	return nil
}

func rootsOn(paths []string, rootFS func(string) fs.FS) []Root {
	roots := make([]Root, len(paths))
	for i, p := range paths {
		roots[i] = Root{Path: p, FS: rootFS(p)}
	}
	return roots
}

// loadDeliveries restores the Deliveries fold from its snapshot and folds the events after it.
func (a *AgentSession) loadDeliveries(ctx context.Context) error {
	a.dlv = projections.NewDeliveries()
	head := a.Version()
	if seq, data, err := a.db.Snapshot(a.task, deliveriesSnapshotName); err == nil && seq <= head {
		if d, err := projections.RestoreDeliveries(data); err == nil && d.LastSeq() == seq {
			a.dlv, a.dlvSaved = d, seq
		}
	} else if err != nil && !errors.Is(err, store.ErrNoSnapshot) {
		return fmt.Errorf("task %s: read deliveries snapshot: %w", a.task, err)
	}
	if err := a.loadTriggers(ctx); err != nil {
		return err
	}
	for ev, err := range a.db.Events(ctx, a.task, a.dlv.LastSeq()+1) {
		if err != nil {
			return err
		}
		if ev.Seq > head {
			break
		}
		if err := a.foldDeliveries(ev); err != nil {
			return err
		}
	}
	return a.saveDeliveries(false)
}

// loadTriggers sets the count of prompts and tool calls up to the Deliveries fold's LastSeq:
// from its snapshot when it was stored with the fold, else by reading the log that far.
func (a *AgentSession) loadTriggers(ctx context.Context) error {
	a.triggers = 0
	upto := a.dlv.LastSeq()
	if upto == 0 {
		return nil
	}
	if seq, data, err := a.db.Snapshot(a.task, triggersSnapshotName); err == nil && seq == upto {
		if n, err := strconv.Atoi(string(data)); err == nil && n >= 0 {
			a.triggers = n
			return nil
		}
	}
	for ev, err := range a.db.Events(ctx, a.task, 1) {
		if err != nil {
			return err
		}
		if ev.Seq > upto {
			break
		}
		a.countTrigger(ev)
	}
	return nil
}

// foldDeliveries folds an event of the log into the Deliveries fold and the count of triggers
// (the session's foldMore).
func (a *AgentSession) foldDeliveries(ev events.Event) error {
	if err := a.dlv.Apply(ev); err != nil {
		return err
	}
	a.countTrigger(ev)
	return nil
}

// countTrigger counts a prompt or a tool call.
func (a *AgentSession) countTrigger(ev events.Event) {
	if ev.Type == events.TypeUserMessage || ev.Type == events.TypeToolCall {
		a.triggers++
	}
}

// saveDeliveries stores the Deliveries fold when enough events passed since it was stored
// (or always, when force is set and anything did).
func (a *AgentSession) saveDeliveries(force bool) error {
	if a.stale != nil {
		return nil // the fold is not the log's
	}
	n := a.dlv.LastSeq() - a.dlvSaved
	if n == 0 || (!force && n < deliveriesSnapshotEvery) {
		return nil
	}
	data, err := a.dlv.Marshal()
	if err != nil {
		return err
	}
	if err := a.db.PutSnapshot(a.task, deliveriesSnapshotName, a.dlv.LastSeq(), data); err != nil {
		return fmt.Errorf("task %s: write deliveries snapshot: %w", a.task, err)
	}
	if err := a.db.PutSnapshot(a.task, triggersSnapshotName, a.dlv.LastSeq(), []byte(strconv.Itoa(a.triggers))); err != nil {
		return fmt.Errorf("task %s: write triggers snapshot: %w", a.task, err)
	}
	a.dlvSaved = a.dlv.LastSeq()
	return nil
}

// Agent is the agent that drives the task: its recorded runtime's name.
func (a *AgentSession) Agent() agentlog.Agent { return a.agent }

// knownAgent refuses delivering in a task whose runtime is no known agent (ErrNoAgent): one
// whose sessions import, or that has a dialect (hooks, or an extension such as opencode's).
func (a *AgentSession) knownAgent() error {
	if slices.Contains(agentlog.Agents(), a.agent) || agentlog.DialectOf(a.agent) != nil {
		return nil
	}
	return fmt.Errorf("deliver in task %s (runtime %q): %w; open it with \"agent\"", a.task, a.agent, ErrNoAgent)
}

// Deliveries is the fold of what reached the model, as this session knows it; read it only.
func (a *AgentSession) Deliveries() *projections.Deliveries { return a.dlv }

// HookEventID is the event id of a hook record: derived from its idempotency key, so two runs
// of one hook make the same id and the store keeps the first. Such ids are unique but do not
// sort by time as the ULIDs a session makes do.
func HookEventID(key string) ulid.ULID {
	sum := sha256.Sum256([]byte("tasklog hook event\x00" + key))
	var id ulid.ULID
	copy(id[:], sum[:16])
	return id
}

// RecordHook appends what a hook payload says happened, each event once however often the
// hook runs: an event whose id (from its key) is in the log already is not written again.
// fresh tells, per record, whether this call wrote it. A compaction right after another, with
// nothing delivered between them, changes nothing and is left out.
func (a *AgentSession) RecordHook(ctx context.Context, recs []agentlog.Record) (fresh []bool, err error) {
	fresh = make([]bool, len(recs))
	evs, idx, err := a.hookEvents(recs)
	if err != nil {
		return fresh, err
	}
	if len(evs) == 0 {
		return fresh, nil
	}
	wrote, err := a.appendOnce(ctx, evs)
	if errors.Is(err, store.ErrDuplicateID) && len(evs) > 1 {
		// Some are in the log already (the other run of this hook, or the Pre of this Post):
		// write the others one by one.
		wrote = make([]bool, len(evs))
		for i := range evs {
			w, err := a.appendOnce(ctx, evs[i:i+1])
			if err != nil && !errors.Is(err, store.ErrDuplicateID) {
				return fresh, err
			}
			wrote[i] = w[0]
		}
	} else if errors.Is(err, store.ErrDuplicateID) {
		wrote = []bool{false}
	} else if err != nil {
		return fresh, err
	}
	for j, i := range idx {
		fresh[i] = wrote[j]
	}
	return fresh, nil
}

// hookEvents makes the events of a hook's records, with the ids of their keys, and the index
// in recs of each; a compaction right after another, with nothing delivered between them, is
// left out. A record of a type only sessions write is ErrReserved.
func (a *AgentSession) hookEvents(recs []agentlog.Record) (evs []events.Event, idx []int, err error) {
	for i, r := range recs {
		if _, ok := r.Payload.(*events.Compaction); ok && a.dlv.Compactions() > 0 && a.dlv.DeliveredCount() == 0 {
			continue
		}
		switch r.Payload.EventType() {
		case events.TypeTaskStarted, events.TypeRulesSnapshot, events.TypeDecision, events.TypeRuleTriggered, events.TypeDelivery:
			return nil, nil, fmt.Errorf("record %s: %w", r.Payload.EventType(), ErrReserved)
		}
		ev, err := events.New(a.Session.lockedGuesses(r.Payload)) // guesses checked as Record does
		if err != nil {
			return nil, nil, err
		}
		k := r.Key
		if _, ok := r.Payload.(*events.Compaction); ok {
			k = compactionKey(k, a.triggers)
		}
		ev.ID = HookEventID(k)
		evs, idx = append(evs, ev), append(idx, i)
	}
	return evs, idx, nil
}

// compactionKey is the idempotency key of a compaction record, which has no id of its own (a
// Claude Code PreCompact and the SessionStart after it give the same key): the key plus the
// number of prompts and tool calls in the log. The agent waits on its hooks, so a re-run of the
// payload (the hook run twice, PreCompact then SessionStart, a spooled copy drained before the
// next prompt or tool call is recorded) sees the same count and maps to the same id, even after
// the compaction's own redelivery. A later compaction follows work of the model (a prompt or a
// tool call) and gets a new id. Neither the count of compactions (recording the first copy
// raises it) nor of decisions (the redelivery adds one) is stable.
func compactionKey(key string, triggers int) string {
	return fmt.Sprintf("%s\x00triggers %d", key, triggers)
}

// appendOnce appends events whose ids are set, as one batch, and folds them. A batch already in
// the log is no error: wrote is false for each of its events.
func (a *AgentSession) appendOnce(ctx context.Context, evs []events.Event) (wrote []bool, err error) {
	s := a.Session
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stale != nil {
		return make([]bool, len(evs)), s.stale
	}
	now := s.opts.Now().UTC()
	turn := s.state.Turn()
	batch := make([]events.Event, len(evs))
	for i, ev := range evs {
		if ev.Time.IsZero() {
			ev.Time = now
		}
		ev.Task, ev.Turn = s.task, turn
		batch[i] = ev
	}
	res, err := s.db.Append(ctx, s.task, s.head, batch...)
	if err != nil {
		return make([]bool, len(evs)), fmt.Errorf("task %s: append %s: %w", s.task, evs[0].Type, err)
	}
	wrote = make([]bool, len(evs))
	if res.Duplicate {
		return wrote, nil
	}
	for _, ev := range res.Events {
		if err := s.foldEvent(ev); err != nil {
			return wrote, err
		}
	}
	s.advanced(res.Events)
	for i := range wrote {
		wrote[i] = true
	}
	return wrote, nil
}

// Close stores the Deliveries fold and the projection when their snapshots lag by more than a
// short tail (Checkpoint), and closes the session.
func (a *AgentSession) Close() error {
	return errors.Join(a.Checkpoint(), a.Session.Close())
}

// Checkpoint stores the Deliveries fold and the projection when their snapshots lag by more
// than a short tail, as Close does, and leaves the session open: for a runtime about to close
// its store and keep the session for Reattach.
func (a *AgentSession) Checkpoint() error {
	s := a.Session
	s.mu.Lock()
	err := a.saveDeliveries(false)
	if s.sinceSnapshot >= projectionTailMax {
		err = errors.Join(err, s.writeSnapshot())
	}
	s.mu.Unlock()
	return err
}
