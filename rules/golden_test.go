package rules

import (
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// checkGolden compares got with the golden file, or rewrites it under -update.
func checkGolden(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./rules -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the output; review and run go test ./rules -update\n%s", file, diffLines(string(want), got))
	}
}
