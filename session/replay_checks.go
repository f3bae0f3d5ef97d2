package session

import (
	"fmt"
	"runtime/debug"
	"sync/atomic"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/rules"
)

// checksAhead is how many events the fold may hand the checks before it waits for them: a
// decision's record is tens of kilobytes at most, so a few hundred kilobytes in all.
const checksAhead = 8

// check is one event the fold hands to the checks: a decision, with what prepare read of the
// fold for it, or an event that changes what reached the model (a delivery, instructions an
// agent loaded, a compaction).
type check struct {
	ev events.Event
	// A decision's head, rule set, evaluation context, the counts its context dropped, and
	// the toggles.
	head    events.DecisionHead
	rs      *rules.RuleSet
	ec      rules.EvaluationContext
	dropped []events.Count
	toggles rules.Toggles
	// delivery tells to derive a delivery again from its decision (an exact replay); agent is
	// the task's runtime.
	delivery bool
	agent    agentlog.Agent
}

// checks recompute a replay's decisions and derive its deliveries again on a goroutine of their
// own, one event after the other in the log's order, while the fold goes on with the events
// after them. Evaluating, recording and encoding a decision read nothing of the fold but what
// prepare took of it, so on two cores the two halves of a replay run side by side.
type checks struct {
	r    *replayer
	in   chan check
	done chan struct{}
	// failed is set once a check has failed, so that the fold stops.
	failed atomic.Bool
	// Written by the goroutine, read once done is closed: the counts and changes (rep), the
	// first error and the sequence number of the event it is about, and a panic's value.
	rep   Report
	err   error
	at    uint64
	panic any
	stack []byte
	// ended is set once in is closed.
	ended bool
}

// startChecks starts the checks of the replay r.
func startChecks(r *replayer) *checks {
	r.deliveries = newDeliveryCheck()
	r.spareContexts = make(chan []rules.ContextPath, checksAhead+2)
	c := &checks{r: r, in: make(chan check, checksAhead), done: make(chan struct{})}
	go c.run()
	return c
}

func (c *checks) run() {
	defer close(c.done)
	defer func() {
		// A fault of the checks is the caller's, as it was when they ran on its goroutine:
		// stop raises it there.
		if p := recover(); p != nil {
			c.panic, c.stack = p, debug.Stack()
			c.failed.Store(true)
			for range c.in {
			}
		}
	}()
	var rs *rules.RuleSet        // the last decision's rule set
	var prev []rules.ContextPath // the last decision's context
	for d := range c.in {
		if c.err != nil {
			continue // the fold stops at its next send
		}
		var err error
		switch d.ev.Type {
		case events.TypeDecision:
			// The fold prepared this decision after the last: it reads the last one's context
			// no more, and neither do the checks, so its array serves a later context.
			if cap(prev) > 0 {
				select {
				case c.r.spareContexts <- emptied(prev):
				default:
				}
			}
			prev, rs = d.ec.Paths, d.rs
			err = c.decision(d)
		default:
			err = c.delivery(d, rs)
		}
		if err != nil {
			c.err, c.at = err, d.ev.Seq
			c.failed.Store(true)
		}
	}
}

// decision recomputes a decision and counts it.
func (c *checks) decision(d check) error {
	changes, err := c.r.recompute(d)
	if err != nil {
		return err
	}
	c.rep.Decisions++
	if len(changes) > 0 {
		c.rep.Changed++
		c.rep.Changes = append(c.rep.Changes, changes...)
	}
	return nil
}

// delivery derives a delivery again from its decision when asked, and folds what reached the
// model. rs is the rule set of the decision before it.
func (c *checks) delivery(d check, rs *rules.RuleSet) error {
	dc := c.r.deliveries
	if d.delivery {
		ch, err := dc.check(d.ev, d.agent, rs, &c.r.recorded)
		if err != nil {
			return err
		}
		c.rep.Deliveries++
		if ch != nil {
			c.rep.Changed++
			c.rep.Changes = append(c.rep.Changes, *ch)
		}
	}
	return dc.dl.Apply(d.ev)
}

// send hands d to the checks, waiting while they are checksAhead events behind. It reports
// false once a check has failed: the fold stops, and stop returns the check's error.
func (c *checks) send(d check) bool {
	if c.failed.Load() {
		return false
	}
	c.in <- d
	return true
}

// stop waits for the checks handed over and returns rep, the fold's report, with their counts
// and changes, and the replay's error: a check's, which concerns an event the fold had read no
// further than, else err, the fold's own.
func (c *checks) stop(rep Report, err error) (Report, error) {
	c.end()
	<-c.done
	if c.panic != nil {
		panic(fmt.Sprintf("%v\n\nraised by the replay's checks, at:\n%s", c.panic, c.stack))
	}
	rep.Decisions, rep.Deliveries, rep.Changed = c.rep.Decisions, c.rep.Deliveries, c.rep.Changed
	rep.Changes = append(rep.Changes, c.rep.Changes...)
	if c.err != nil {
		rep.Events = c.at
		return rep, c.err
	}
	return rep, err
}

// end tells the checks that nothing more comes: they finish those handed over and their
// goroutine ends. It may be called again; a fold that panics ends them in a deferred call.
func (c *checks) end() {
	if !c.ended {
		c.ended = true
		close(c.in)
	}
}
