package store

import "github.com/google/uuid"

// testdata/format3.db was written by the store of format 3, whose records are the events'
// canonical encodings compressed where that is shorter: two tasks of the 40 events
// format2Events makes (appended as 25 then 15), format2Blob, and a snapshot "context" of the
// first task at seq 40 holding "snapshot bytes". Today's store writes format 4, so it cannot
// make the file again.
var format3Tasks = []uuid.UUID{
	uuid.MustParse("55555555-5555-4555-8555-555555555555"),
	uuid.MustParse("66666666-6666-4666-8666-666666666666"),
}
