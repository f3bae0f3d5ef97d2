package rules

import (
	"fmt"
	"strings"
)

// diffLines shows the first lines where two texts differ.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var sb strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 10; i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			fmt.Fprintf(&sb, "line %d:\n- %s\n+ %s\n", i+1, a, b)
			shown++
		}
	}
	return sb.String()
}
