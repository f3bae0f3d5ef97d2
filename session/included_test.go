package session

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/tasklog/tasklog/events"
)

// Included lists what the record lists as included, in its order, decision after decision (a
// decision written against the one before included), and stops when its loop does.
func TestIncludedIsTheRecordsList(t *testing.T) {
	ctx := context.Background()
	s := newSession(t, openDB(t), clineWorkspace(), Options{})
	for i, p := range []string{"apps/web/src/App.tsx", "services/api/a.ts", "docs/README.md", "apps/web/src/App.tsx", ""} {
		if p != "" {
			if _, err := s.ToolCall(ctx, "read_file", "", json.RawMessage(fmt.Sprintf(`{"path":%q}`, p))); err != nil {
				t.Fatal(err)
			}
		}
		d := decide(t, s)
		got, want := slices.Collect(d.Included()), d.Recorded().Included
		if len(want) == 0 {
			t.Fatalf("step %d: the decision includes nothing: the test tests nothing", i)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("step %d: Included\n%+v\nthe record's\n%+v", i, got, want)
		}
		var first []events.RuleOutcome
		for o := range d.Included() {
			first = append(first, o)
			break
		}
		if len(first) != 1 || first[0].ID != want[0].ID {
			t.Errorf("step %d: a loop that stops at the first got %+v", i, first)
		}
	}
}
