package session

import (
	"testing"
	"testing/fstest"
)

// Options.MaxFilesPerFolder reaches the rules collection: a folder of three files under a cap
// of two is cut, with a diagnostic in the decision; without the option all three are read.
func TestMaxFilesPerFolderOption(t *testing.T) {
	fsys := fstest.MapFS{
		".clinerules/a.md": {Data: []byte("A.\n")},
		".clinerules/b.md": {Data: []byte("B.\n")},
		".clinerules/c.md": {Data: []byte("C.\n")},
	}
	for _, tt := range []struct {
		cap     int
		wantCut bool
	}{{0, false}, {2, true}} {
		s := newSession(t, openDB(t), fsys, Options{MaxFilesPerFolder: tt.cap})
		rec := decide(t, s).Recorded()
		cut := false
		for _, d := range rec.Diagnostics {
			cut = cut || d.Code == "walk_limit"
		}
		if cut != tt.wantCut {
			t.Errorf("cap %d: cut %v, want %v (diagnostics %+v)", tt.cap, cut, tt.wantCut, rec.Diagnostics)
		}
	}
}
