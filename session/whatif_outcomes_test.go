package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/rules"
)

// TestWhatIfReadsOutcomesOnly: a what-if rebuilds the recorded decisions without their context,
// and its changes are exactly those the full recorded decisions (Decisions) say. The task moves
// through three folders so that its decisions are written against the ones before, paths leave
// the context, and the outcomes change turn by turn.
func TestWhatIfReadsOutcomesOnly(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	s := newSession(t, db, clineWorkspace(), Options{})
	for i := range 60 {
		var path string
		switch i % 3 {
		case 0:
			path = fmt.Sprintf("docs/guide%d.md", i)
		case 1:
			path = fmt.Sprintf("apps/web/src/pages/p%d.tsx", i%7)
		default:
			path = fmt.Sprintf("apps/web/src/c%d.tsx", i)
		}
		if i%10 >= 5 {
			path = fmt.Sprintf("services/api/r%d.ts", i)
		}
		if _, err := s.ToolCall(ctx, "read_file", "", json.RawMessage(fmt.Sprintf(`{"path":%q}`, path))); err != nil {
			t.Fatal(err)
		}
		decide(t, s)
	}
	recorded, err := Decisions(ctx, db, s.Task())
	if err != nil {
		t.Fatal(err)
	}
	deltas, gone := 0, 0
	for ev, err := range db.Events(ctx, s.Task(), 1) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != events.TypeDecision {
			continue
		}
		if h, err := events.Head(ev); err != nil || h.Base == 0 {
			continue
		}
		deltas++
		if bytes.Contains(ev.Data, []byte(`"gone":`)) {
			gone++
		}
	}
	if deltas == 0 || gone == 0 {
		t.Fatalf("%d decisions written against the one before, %d with paths gone: the scenario does not test what it means to", deltas, gone)
	}
	whatIf := func(t *testing.T, ws fstest.MapFS) Report {
		t.Helper()
		rep, err := Replay(ctx, db, s.Task(), ReplayOptions{Workspace: &rules.Workspace{Roots: []rules.Root{{Name: "/ws", FS: ws}}}})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Decisions != len(recorded) {
			t.Fatalf("what-if recomputed %d decisions, the log has %d", rep.Decisions, len(recorded))
		}
		return rep
	}
	const frontend = "cline:/ws/.clinerules/frontend.md"
	t.Run("the recorded rules change nothing", func(t *testing.T) {
		if rep := whatIf(t, clineWorkspace()); rep.Changed != 0 || len(rep.Changes) != 0 {
			t.Fatalf("%d decisions changed: %v", rep.Changed, rep.Changes)
		}
	})
	t.Run("a rule deleted is gone from every decision", func(t *testing.T) {
		ws := clineWorkspace()
		delete(ws, ".clinerules/frontend.md")
		var want []Change
		for _, r := range recorded {
			was := outcomes(r.Decision)[frontend]
			want = append(want, Change{Turn: r.Decision.Turn, Seq: r.Seq, Rule: "frontend", ID: frontend, Recorded: was.state, Now: "absent"})
		}
		if rep := whatIf(t, ws); !reflect.DeepEqual(rep.Changes, want) || rep.Changed != len(recorded) {
			t.Fatalf("%d decisions changed:\n%v\nwant\n%v", rep.Changed, rep.Changes, want)
		}
	})
	t.Run("a rule narrowed changes the decisions it no longer matches", func(t *testing.T) {
		ws := clineWorkspace()
		ws[".clinerules/frontend.md"] = &fstest.MapFile{Data: []byte("---\npaths: [\"apps/web/src/pages/**\"]\n---\nUse the design tokens.\n")}
		var want []Change
		for _, r := range recorded {
			pages := false
			for _, p := range r.Decision.Context {
				pages = pages || strings.HasPrefix(p.Path, "apps/web/src/pages/")
			}
			if was := outcomes(r.Decision)[frontend]; was.state == "included" && !pages {
				want = append(want, Change{Turn: r.Decision.Turn, Seq: r.Seq, Rule: "frontend", ID: frontend,
					Recorded: "included", Now: "excluded (" + rules.ReasonNoMatch + ")"})
			}
		}
		if len(want) == 0 || len(want) == len(recorded) {
			t.Fatalf("%d of %d decisions should change: the scenario does not test what it means to", len(want), len(recorded))
		}
		rep := whatIf(t, ws)
		for i := range rep.Changes {
			rep.Changes[i].Why = "" // the recomputed detail, which the oracle does not know
		}
		if !reflect.DeepEqual(rep.Changes, want) || rep.Changed != len(want) {
			t.Fatalf("%d decisions changed:\n%v\nwant\n%v", rep.Changed, rep.Changes, want)
		}
	})
}
