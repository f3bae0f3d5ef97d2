package store

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/google/uuid"
)

// writeFormat3 rewrites testdata/format3.db. It must be run only with the code that wrote
// format 3 (records compressed whole behind payloadcodec.Tag), which is how the file in the
// repository was made; with today's code it would write today's format.
var writeFormat3 = flag.Bool("write-format3", false, "rewrite testdata/format3.db (only with the code of format 3)")

// testdata/format3.db was written by the store of format 3, whose records are the events'
// canonical encodings compressed where that is shorter: two tasks of the 40 events
// format2Events makes (appended as 25 then 15), a blob and a snapshot.
var format3Tasks = []uuid.UUID{
	uuid.MustParse("55555555-5555-4555-8555-555555555555"),
	uuid.MustParse("66666666-6666-4666-8666-666666666666"),
}

// TestWriteFormat3 writes testdata/format3.db when asked to with -write-format3.
func TestWriteFormat3(t *testing.T) {
	if !*writeFormat3 {
		t.Skip("writes testdata/format3.db only with -write-format3")
	}
	db := openAt(t, filepath.Join("testdata", "format3.db"), &Options{NoSync: true})
	for ti, task := range format3Tasks {
		evs := format2Events(t, ti)
		mustAppend(t, db, task, 0, evs[:25]...)
		mustAppend(t, db, task, 25, evs[25:]...)
	}
	if _, err := db.PutBlob(format2Blob); err != nil {
		t.Fatal(err)
	}
	if err := db.PutSnapshot(format3Tasks[0], "context", 40, []byte("snapshot bytes")); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
