package store

import (
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/tasklog/tasklog/events"
)

// writeFormat2 rewrites testdata/format2.db. It must be run only with the code that wrote
// format 2 (before event records were compressed), which is how the file in the repository
// was made; with today's code it would write today's format.
var writeFormat2 = flag.Bool("write-format2", false, "rewrite testdata/format2.db (only with the code of format 2)")

// testdata/format2.db was written by the store of format 2, whose records are the events'
// canonical encodings as they are: two tasks of 40 events each (appended as 25 then 15), a
// blob and a snapshot. format2Events rebuilds the events it holds: user messages, tool calls
// and, every tenth event, a decision of some 20 KB, the kind of payload compression shrinks.
var format2Tasks = []uuid.UUID{
	uuid.MustParse("33333333-3333-4333-8333-333333333333"),
	uuid.MustParse("44444444-4444-4444-8444-444444444444"),
}

// format2Blob is the blob format2.db holds.
var format2Blob = []byte(strings.Repeat("# Frontend\n\nComponents use the design tokens.\n", 40))

func format2Events(t testing.TB, taskIndex int) []events.Event {
	t.Helper()
	evs := make([]events.Event, 40)
	for i := range evs {
		var p events.Payload
		switch {
		case i%10 == 9:
			d := &events.Decision{Turn: 1 + i/10, Snapshot: 1, Engine: "1"}
			for r := range 120 {
				d.Excluded = append(d.Excluded, events.RuleOutcome{
					ID: fmt.Sprintf("rule-%03d", r), Name: fmt.Sprintf("rule %d", r), Category: "path-scoped",
					Source: "cline", Path: fmt.Sprintf(".clinerules/rule-%03d.md", r), Reason: "no_match",
					Detail: fmt.Sprintf("no candidate path matches src/mod%d/**", r),
				})
			}
			p = d
		case i%3 == 0:
			p = &events.UserMessage{Text: fmt.Sprintf("format 2 event %d of task %d: fix apps/web/src/Button%d.tsx", i, taskIndex, i)}
		default:
			p = &events.ToolCall{Tool: "read_file", ID: fmt.Sprintf("toolu_%04d", i),
				Params: json.RawMessage(fmt.Sprintf(`{"path":"apps/web/src/Button%d.tsx"}`, i))}
		}
		ev, err := events.New(p)
		if err != nil {
			t.Fatal(err)
		}
		ev.Time = time.Date(2026, 12, 1, 12, 0, i, 0, time.UTC)
		ev.ID = ulid.MustNew(ulid.Timestamp(ev.Time), fixedEntropy{byte(taskIndex + 10), byte(i)})
		ev.Turn = 1 + i/10
		evs[i] = ev
	}
	return evs
}

// TestWriteFormat2 writes testdata/format2.db when asked to with -write-format2.
func TestWriteFormat2(t *testing.T) {
	if !*writeFormat2 {
		t.Skip("writes testdata/format2.db only with -write-format2")
	}
	db := openAt(t, filepath.Join("testdata", "format2.db"), &Options{NoSync: true})
	for ti, task := range format2Tasks {
		evs := format2Events(t, ti)
		mustAppend(t, db, task, 0, evs[:25]...)
		mustAppend(t, db, task, 25, evs[25:]...)
	}
	if _, err := db.PutBlob(format2Blob); err != nil {
		t.Fatal(err)
	}
	if err := db.PutSnapshot(format2Tasks[0], "context", 40, []byte("snapshot bytes")); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
