package rules

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"
)

// TestLoadManyFilesAsOneByOne checks that a load of more files than parallelParses, whose
// contents are parsed on every processor at once, gives the rule set that parsing them one by
// one gives: the same rules, diagnostics and names, whatever the cache held before.
func TestLoadManyFilesAsOneByOne(t *testing.T) {
	files := benchFiles(parallelParses + 50)
	files[7].Content = []byte("---\npaths: [\n---\nBroken frontmatter.\n")
	files[300].Content = []byte("bin\x00ary")
	files[12].ReadError = "permission denied"
	files = append(files, files[40]) // the same provider and path twice
	parallel := NewLoader(0).Load(files)
	procs := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(procs)
	one := NewLoader(0).Load(files)
	if procs < 2 {
		t.Logf("one processor: both loads parse one file at a time")
	}
	if got, want := describe(parallel), describe(one); got != want {
		t.Errorf("parsed on every processor:\n%s\none by one:\n%s", got, want)
	}
	if !reflect.DeepEqual(parallel.Diagnostics(), one.Diagnostics()) || !reflect.DeepEqual(parallel.Names(), one.Names()) {
		t.Errorf("diagnostics or names differ")
	}
}

func describe(rs *RuleSet) string {
	var s string
	for _, r := range rs.Rules() {
		s += fmt.Sprintf("%s %s %s %q %v %+v\n", r.ID, r.Category, r.Unusable, r.Body, r.ContentHash, r.Diagnostics)
	}
	return s
}
