package agentlog_test

import (
	"path/filepath"
	"testing"

	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/events/agentlog/agenttest"
)

// TestDialects walks every registered agent through the conformance suite, with the payloads
// captured under testdata/hooks/<agent>/.
func TestDialects(t *testing.T) {
	seen := map[int]agentlog.Agent{}
	for _, d := range agentlog.Dialects() {
		if o, ok := seen[d.Order]; ok {
			t.Errorf("%s and %s share Order %d: listings would depend on registration", o, d.Agent, d.Order)
		}
		seen[d.Order] = d.Agent
		t.Run(string(d.Agent), func(t *testing.T) {
			agenttest.Run(t, d, filepath.Join("testdata", "hooks"))
		})
	}
}
