package session_test

import (
	"path/filepath"
	"testing"

	"github.com/tasklog/tasklog/session/replaytest"
)

// TestLogsBeforeGuessesReplay: logs recorded before guesses were checked (their user messages
// and shell calls carry no guesses) replay to the decisions they recorded.
func TestLogsBeforeGuessesReplay(t *testing.T) {
	replaytest.Dir(t, filepath.Join("..", "testdata", "logs", "unchecked-guesses"))
}
