package replaytest_test

import (
	"testing"

	"github.com/tasklog/tasklog/session/replaytest"
)

// The regression test docs/embedding.md shows, as a runtime writes it, over a recorded log kept
// in this package's testdata.

// doc: begin
func TestRecordedSessions(t *testing.T) { replaytest.Dir(t, "testdata/logs") }

// doc: end
