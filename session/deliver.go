package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/projections"
	"github.com/tasklog/tasklog/rules"
	"github.com/tasklog/tasklog/store"
)

// Delivered is what a delivery put in front of the model: the recorded event and its text.
type Delivered struct {
	// Seq is the delivery event's sequence number.
	Seq uint64
	// Event is the delivery as recorded.
	Event events.Delivery
	// Text is the text the hook replies with, rendered from Event.
	Text string
}

// Deliver records the delivery of the rules a decision included that have not reached the model
// yet, and returns it with its text; nil when there is nothing to deliver. A rule reached the
// model when the agent loads it itself (agentlog.LoadsNatively, or an instructions_loaded of
// its file) or a delivery since the last compaction carried it. key is the hook's idempotency
// key: a second run of the same hook finds the delivery in the log and gets nil, so the model
// is not given the rules twice. A text over agentlog.MaxDelivery bytes lists the rules by name
// and rule:// address instead; the limit is fixed, not chosen per call, because replay checks
// the recorded form against it.
func (a *AgentSession) Deliver(ctx context.Context, d *Decision, hook, channel, key string) (*Delivered, error) {
	if err := a.knownAgent(); err != nil {
		return nil, err
	}
	ev, del, err := a.delivery(d, hook, channel, key)
	if ev == nil || err != nil {
		return nil, err
	}
	wrote, err := a.appendOnce(ctx, []events.Event{*ev})
	if errors.Is(err, store.ErrDuplicateID) || (err == nil && !wrote[0]) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	del.Seq = a.Version()
	return del, nil
}

// DecideAndDeliver is Decide followed by Deliver, with the delivery written in the decision's
// own commit: a hook that delivers waits for one commit (one fsync) instead of two, and after a
// crash the log holds both or neither. When the log holds the delivery already (the same hook
// run twice), the decision is written alone and the delivery is nil, as with Deliver. A task
// whose runtime is no known agent gets ErrNoAgent and nothing is written.
func (a *AgentSession) DecideAndDeliver(ctx context.Context, hook, channel, key string) (*Decision, *Delivered, error) {
	return a.decideAndDeliver(ctx, nil, hook, channel, key)
}

// DecideAndDeliverInto is DecideAndDeliver writing the decision into d, as DecideInto does: d
// is a decision the caller is done with, whose arrays are filled again rather than made anew.
// A server that answers one hook after another hands back the decision of the hook before.
func (a *AgentSession) DecideAndDeliverInto(ctx context.Context, d *Decision, hook, channel, key string) (*Delivered, error) {
	if d == nil {
		return nil, errors.New("DecideAndDeliverInto: nil decision")
	}
	_, del, err := a.decideAndDeliver(ctx, d, hook, channel, key)
	return del, err
}

// decideAndDeliver is DecideAndDeliver, into d when it is set.
func (a *AgentSession) decideAndDeliver(ctx context.Context, into *Decision, hook, channel, key string) (*Decision, *Delivered, error) {
	if err := a.knownAgent(); err != nil {
		return nil, nil, err
	}
	step := &deliveryStep{a: a, hook: hook, channel: channel, key: key}
	d, err := a.decide(ctx, into, step.follow)
	if errors.Is(err, store.ErrDuplicateID) {
		d, err = a.decide(ctx, into, nil)
		return d, nil, err
	}
	if err != nil {
		return d, nil, err
	}
	return d, step.del, nil
}

// deliveryStep is the delivery a decision writes in its own batch: follow, given to decide,
// adds the delivery event after the decision. The append folds it into the Deliveries fold
// with the decision, under the session's lock (foldMore), so the next decision does not deliver
// the same rules again. del is the delivery, nil when there was nothing to deliver.
type deliveryStep struct {
	a                  *AgentSession
	hook, channel, key string
	del                *Delivered
}

func (st *deliveryStep) follow(d *Decision) ([]events.Event, error) {
	ev, del, err := st.a.delivery(d, st.hook, st.channel, st.key)
	if ev == nil || err != nil {
		return nil, err
	}
	del.Seq = d.Seq + 1
	st.del = del
	return []events.Event{*ev}, nil
}

// delivery prepares the delivery event of the rules the decision included that have not
// reached the model yet, with its idempotency id; nil when there is nothing to deliver. The
// returned Delivered has no Seq yet.
func (a *AgentSession) delivery(d *Decision, hook, channel, key string) (*events.Event, *Delivered, error) {
	chosen := chooseDelivery(a.agent, a.dlv, d.rec.Included)
	if len(chosen) == 0 {
		return nil, nil, nil
	}
	byID := map[string]*rules.Rule{}
	for _, r := range d.Rules.Results {
		byID[r.Rule.ID] = r.Rule
	}
	del, text := renderDelivery(chosen, func(id string) *rules.Rule { return byID[id] }, agentlog.MaxDelivery)
	del.Decision, del.Agent, del.Hook, del.Channel = d.Seq, string(a.agent), hook, channel
	ev, err := events.New(&del)
	if err != nil {
		return nil, nil, err
	}
	ev.ID = deliveryID(key)
	return &ev, &Delivered{Event: del, Text: text}, nil
}

// deliveryID is the event id of the delivery of the hook whose idempotency key is key.
func deliveryID(key string) ulid.ULID { return HookEventID(key + "\x00delivery") }

// chooseDelivery picks, in the decision's order, the included rules that have not reached the
// model: not loaded by the agent itself, not delivered since the last compaction.
func chooseDelivery(agent agentlog.Agent, dlv *projections.Deliveries, included []events.RuleOutcome) []events.RuleOutcome {
	var out []events.RuleOutcome
	for _, o := range included {
		if agentlog.LoadsNatively(agent, events.RuleSource(o.Source), o.Path) {
			continue
		}
		if file, ok := strings.CutPrefix(o.ID, o.Source+":"); ok && dlv.Loaded(file) {
			continue
		}
		if _, ok := dlv.DeliveredAt(o.ID); ok {
			continue
		}
		out = append(out, o)
	}
	return out
}

const (
	deliveryOpen   = "<tasklog-rules>\n"
	deliveryClose  = "</tasklog-rules>\n"
	deliveryIntro  = "These rules of this workspace apply to what you are working on now. Follow them.\n"
	deliveryByName = "These rules of this workspace apply to what you are working on now, but are too long to include here. Read each one at its rule:// address and follow it.\n"
)

// renderDelivery renders the chosen rules: with their bodies when they fit in limit, else by
// name and rule:// address, as many as fit. It returns the delivery (rules, form, bytes,
// digest) and the text. The one renderer serves the hook's reply and replay's check of it.
func renderDelivery(chosen []events.RuleOutcome, ruleOf func(id string) *rules.Rule, limit int) (events.Delivery, string) {
	if limit <= 0 {
		limit = agentlog.MaxDelivery
	}
	text := renderFull(chosen, ruleOf)
	n := len(chosen)
	form := events.FormFull
	if len(text) > limit {
		form = events.FormNames
		text, n = renderNames(chosen, ruleOf, limit)
	}
	del := events.Delivery{Form: form, Rules: make([]events.DeliveredRule, n)}
	for i, o := range chosen[:n] {
		del.Rules[i] = events.DeliveredRule{ID: o.ID, Name: o.Name}
	}
	sum := sha256.Sum256([]byte(text))
	del.Bytes, del.SHA256 = len(text), hex.EncodeToString(sum[:])
	return del, text
}

// renderFull renders rules with their bodies.
func renderFull(chosen []events.RuleOutcome, ruleOf func(id string) *rules.Rule) string {
	var b strings.Builder
	b.WriteString(deliveryOpen + deliveryIntro)
	for _, o := range chosen {
		body := ""
		if r := ruleOf(o.ID); r != nil {
			body = r.Body
		}
		fmt.Fprintf(&b, "\n<rule name=\"%s\" path=\"%s\">\n%s\n</rule>\n", attrEscape(o.Name), attrEscape(o.Path), body)
	}
	b.WriteString(deliveryClose)
	return b.String()
}

// renderNames lists rules by name and rule:// address (rules.Rule.Address), as many as fit in
// limit (at least one); n is how many it listed, the rest go with a later hook.
func renderNames(chosen []events.RuleOutcome, ruleOf func(id string) *rules.Rule, limit int) (text string, n int) {
	var b strings.Builder
	b.WriteString(deliveryOpen + deliveryByName)
	for _, o := range chosen {
		address := rules.RuleURIScheme + o.Name
		if r := ruleOf(o.ID); r != nil {
			address = r.Address()
		}
		line := fmt.Sprintf("- %s (%s): %s\n", o.Name, o.Path, address)
		if b.Len()+len(line)+len(deliveryClose) > limit && n > 0 {
			break
		}
		b.WriteString(line)
		n++
	}
	b.WriteString(deliveryClose)
	return b.String(), n
}

// ErrDeliveryText is returned by DeliveryText when the text rendered again from the log does
// not have the digest the delivery recorded.
var ErrDeliveryText = errors.New("the delivery's text cannot be rendered again as recorded")

// DeliveryText renders again the text the delivery at seq put in front of the model: from the
// delivery event, in its form, and the rules snapshot its decision used; the result is checked
// against the recorded length and digest. It reads three events (the delivery, its decision and
// that decision's snapshot), whatever the log's length: a hook run again prints the text again
// from it.
func DeliveryText(ctx context.Context, lr LogReader, task uuid.UUID, seq uint64) (string, error) {
	ev, err := eventAt(ctx, lr, task, seq)
	if err != nil {
		return "", err
	}
	if ev.Type != events.TypeDelivery {
		return "", fmt.Errorf("task %s seq %d is a %s, not a delivery", task, seq, ev.Type)
	}
	p, err := ev.Payload()
	if err != nil {
		return "", err
	}
	return deliveryText(ctx, lr, task, seq, p.(*events.Delivery))
}

// deliveryText is DeliveryText of the delivery del, the event at seq, already read.
func deliveryText(ctx context.Context, lr LogReader, task uuid.UUID, seq uint64, del *events.Delivery) (string, error) {
	// What the decision was made from: the rules snapshot its head names, and its engine. A
	// delivery follows its decision.
	var snap []events.SnapshotFile
	if del.Decision == 0 || del.Decision >= seq {
		return "", fmt.Errorf("task %s seq %d: %w: it names the decision at seq %d, which does not come before it",
			task, seq, ErrDeliveryText, del.Decision)
	}
	dec, err := eventAt(ctx, lr, task, del.Decision)
	if err != nil {
		return "", err
	}
	h, err := events.Head(dec)
	if err != nil {
		return "", fmt.Errorf("task %s seq %d: %w: the decision it names: %w", task, seq, ErrDeliveryText, err)
	}
	if h.Snapshot != 0 {
		sev, err := eventAt(ctx, lr, task, h.Snapshot)
		if err != nil {
			return "", err
		}
		if sev.Type != events.TypeRulesSnapshot {
			return "", fmt.Errorf("task %s seq %d: %w: its decision names the rules snapshot at seq %d, which is a %s",
				task, seq, ErrDeliveryText, h.Snapshot, sev.Type)
		}
		sp, err := sev.Payload()
		if err != nil {
			return "", err
		}
		snap = sp.(*events.RulesSnapshot).Files
	}
	files, err := LoadSnapshot(lr, snap)
	if err != nil {
		return "", err
	}
	rs := rules.Load(files).As(h.Engine)
	chosen := make([]events.RuleOutcome, len(del.Rules))
	for i, r := range del.Rules {
		chosen[i] = events.RuleOutcome{ID: r.ID, Name: r.Name}
		if rule := ruleByID(rs, r.ID); rule != nil {
			chosen[i].Path = rule.DisplayPath
		}
	}
	ruleOf := func(id string) *rules.Rule { return ruleByID(rs, id) }
	text := renderFull(chosen, ruleOf)
	if del.Form == events.FormNames {
		text, _ = renderNames(chosen, ruleOf, len(text)+1<<20)
	}
	sum := sha256.Sum256([]byte(text))
	if len(text) != del.Bytes || hex.EncodeToString(sum[:]) != del.SHA256 {
		return text, fmt.Errorf("task %s seq %d: %w", task, seq, ErrDeliveryText)
	}
	return text, nil
}

// eventAt reads the task's event at seq.
func eventAt(ctx context.Context, er EventReader, task uuid.UUID, seq uint64) (events.Event, error) {
	for ev, err := range er.Events(ctx, task, seq) {
		if err == nil && ev.Seq != seq {
			break
		}
		return ev, err
	}
	return events.Event{}, fmt.Errorf("task %s has no event at seq %d", task, seq)
}

func attrEscape(s string) string {
	return strings.NewReplacer(`&`, "&amp;", `"`, "&quot;", "<", "&lt;", ">", "&gt;", "\n", " ").Replace(s)
}

// DeliveriesOf lists the deliveries of the decision at seq: the events that put its rules in
// front of the model through an agent's hooks, in log order. A delivery follows its decision,
// possibly after other hooks' events, so the log is read from seq to its end; a task no hook
// drove has none.
func DeliveriesOf(ctx context.Context, er EventReader, task uuid.UUID, seq uint64) ([]DeliveryNote, error) {
	var out []DeliveryNote
	for ev, err := range er.Events(ctx, task, seq+1) {
		if err != nil {
			return nil, err
		}
		if ev.Type != events.TypeDelivery {
			continue
		}
		p, err := ev.Payload()
		if err != nil {
			return nil, err
		}
		if d := p.(*events.Delivery); d.Decision == seq {
			out = append(out, DeliveryNote{Seq: ev.Seq, Turn: ev.Turn, Delivery: *d})
		}
	}
	return out, nil
}

// Deliveries lists the deliveries of the recorded decision (DeliveriesOf), each named by the
// request it was delivered into: the decision's.
func (rec Recorded) Deliveries(ctx context.Context, er EventReader, task uuid.UUID) ([]DeliveryNote, error) {
	ns, err := DeliveriesOf(ctx, er, task, rec.Seq)
	for i := range ns {
		ns[i].Position = rec.Position
	}
	return ns, err
}
