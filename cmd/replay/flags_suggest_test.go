package main

import "testing"

func TestClosestFlag(t *testing.T) {
	names := []string{"turn", "rule", "json", "db", "store", "timeout", "workspace", "all", "o"}
	tests := []struct{ typed, want string }{
		{"trun", "turn"},      // two letters swapped
		{"tunr", "turn"},      // swapped at the end
		{"jsno", "json"},      // swapped
		{"rules", "rule"},     // one letter more
		{"timout", "timeout"}, // one letter less
		{"worksapce", "workspace"},
		{"dbb", "db"},
		{"al", "all"},
		{"work", "workspace"}, // the only flag it starts
		{"frobnicate", ""},    // nothing close
		{"x", ""},             // every letter is one edit from a one-letter flag
		{"st", ""},            // too short to be a start, and two edits from store
		{"tomeout", "timeout"},
	}
	for _, tt := range tests {
		if got := closestFlag(tt.typed, names); got != tt.want {
			t.Errorf("closestFlag(%q) = %q, want %q", tt.typed, got, tt.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"turn", "turn", 0},
		{"trun", "turn", 1}, {"kitten", "sitting", 3}, {"ab", "ba", 1}, {"ca", "abc", 3},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
