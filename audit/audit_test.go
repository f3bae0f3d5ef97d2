package audit

import (
	"slices"
	"testing"
)

func TestSortAndString(t *testing.T) {
	at := func(turn int) *Moment { return &Moment{Prompt: 1, Request: turn, Turn: turn} }
	fs := []Finding{
		{Kind: Shadowed, Severity: Warning, Rule: "b", ID: "b", At: at(1), Requests: 3, Evidence: "hidden"},
		{Kind: MissedByAgent, Severity: Warning, Rule: "a", ID: "a", At: at(2), Requests: 2, Evidence: "delivered"},
		{Kind: NeverApplicable, Severity: Warning, Rule: "c", ID: "c", Evidence: "matches nothing"},
		{Kind: MissedByAgent, Severity: Error, Rule: "d", ID: "d", At: at(3), Requests: 1, Evidence: "never had it"},
		{Kind: Broken, Severity: Error, Rule: "e", ID: "e", At: at(1), Requests: 1, Evidence: "no yaml"},
	}
	Sort(fs)
	var order []string
	for _, f := range fs {
		order = append(order, f.ID)
	}
	if want := []string{"e", "d", "a", "c", "b"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v (errors first, then by kind)", order, want)
	}
	for _, tt := range []struct {
		f    Finding
		want string
	}{
		{fs[2], "missed_by_agent a at prompt 1, request 2 (and 1 later request): delivered"},
		{fs[4], "shadowed b at prompt 1, request 1 (and 2 later requests): hidden"},
		{Finding{Kind: NeverApplicable, Rule: "c", Path: ".clinerules/c.md", Evidence: "matches nothing"},
			"never_applicable c (.clinerules/c.md): matches nothing"},
	} {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}
