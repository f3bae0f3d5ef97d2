package session

import (
	"fmt"
	"slices"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/projections"
	"github.com/tasklog/tasklog/rules"
)

// deliveryCheck follows a replay's deliveries: it folds what reached the model and, at each
// delivery, derives it again from the decision it names and what was delivered before.
type deliveryCheck struct {
	dl *projections.Deliveries
}

func newDeliveryCheck() *deliveryCheck { return &deliveryCheck{dl: projections.NewDeliveries()} }

// check recomputes the delivery ev, before it is folded: its decision must be the last one
// before it, and choosing and rendering again must give the same rules, form, bytes and
// digest. It returns the difference, if any.
func (c *deliveryCheck) check(ev events.Event, agent agentlog.Agent, rs *rules.RuleSet, recorded *chain) (*Change, error) {
	p, err := ev.Payload()
	if err != nil {
		return nil, err
	}
	was := p.(*events.Delivery)
	if recorded.full == nil || recorded.seq != was.Decision {
		return &Change{Turn: ev.Turn, Seq: ev.Seq, Recorded: fmt.Sprintf("delivery of the decision at seq %d", was.Decision),
			Now: fmt.Sprintf("the decision before it is at seq %d", recorded.seq)}, nil
	}
	if rs == nil {
		return nil, fmt.Errorf("%s: no rule set loaded for the decision at seq %d", ev, was.Decision)
	}
	chosen := chooseDelivery(agent, c.dl, recorded.full.Included)
	limit := agentlog.MaxDelivery
	rs = rs.As(recorded.full.Engine) // the rules the decision delivered were of its engine's reading
	now, _ := renderDelivery(chosen, func(id string) *rules.Rule { return ruleByID(rs, id) }, limit)
	if now.Form == was.Form && now.Bytes == was.Bytes && now.SHA256 == was.SHA256 && slices.Equal(now.Rules, was.Rules) {
		return nil, nil
	}
	return &Change{Turn: ev.Turn, Seq: ev.Seq, Recorded: describeDelivery(*was), Now: describeDelivery(now),
		Why: "the delivery does not follow from the decision and what was delivered before"}, nil
}

func describeDelivery(d events.Delivery) string {
	names := make([]string, len(d.Rules))
	for i, r := range d.Rules {
		names[i] = r.Name
	}
	if len(names) == 0 {
		return "nothing to deliver"
	}
	return fmt.Sprintf("delivered %v (%s, %d bytes, sha256 %.12s)", names, d.Form, d.Bytes, d.SHA256)
}
