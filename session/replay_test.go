package session

import "testing"

// A report counts what differs out of what it compared: the decisions, and the deliveries when
// it compared them.
func TestReportTally(t *testing.T) {
	for _, tt := range []struct {
		rep  Report
		want string
	}{
		{Report{Decisions: 5, Changed: 1}, "1 of 5 decisions"},
		{Report{Decisions: 1}, "0 of 1 decision"},
		{Report{Decisions: 4, Deliveries: 3, Changed: 6}, "6 of 7 decisions and deliveries"},
	} {
		if got := tt.rep.Tally(); got != tt.want {
			t.Errorf("%+v: Tally = %q, want %q", tt.rep, got, tt.want)
		}
	}
}
