package main

import (
	"fmt"
	"io"
	"os"

	"github.com/tasklog/tasklog/store"
	"github.com/tasklog/tasklog/store/natsstore"
)

// fileFormats says what each format of a bbolt file keeps, and which tasklog wrote it.
var fileFormats = map[string]string{
	"1": "without id indexes, records and blobs uncompressed, as the first versions of tasklog wrote it; opened for writing, it becomes format 4",
	"2": "records and blobs uncompressed, as tasklog wrote files before it compressed them; opened for writing, it becomes format 4 and keeps its records as they are",
	"3": "records and blobs compressed with zstd where that saves room, each record whole, as tasklog wrote files before records left out what the file holds elsewhere; opened for writing, it becomes format 4 and keeps its records as they are",
	"4": "records without what the file holds elsewhere (task id, sequence number, prev hash), records and blobs compressed with zstd where that saves room (older ones kept as they were), as this version writes it; versions that know formats up to 3 only refuse to open it",
}

func cmdInfo(args []string, stdout, stderr io.Writer) int {
	f := newFlags("info", "", stderr)
	if _, code := f.parseOrExit(args, 0, 0); code >= 0 {
		return code
	}
	db, err := f.openReadOnly()
	if err != nil {
		return fail(stderr, err)
	}
	defer db.Close()
	w := safeWriter{stdout}
	switch s := db.(type) {
	case *store.DB:
		format := s.Format()
		if format == "" {
			fmt.Fprintf(w, "%s: a new tasklog file, no format written yet\n", s.Path())
		} else {
			fmt.Fprintf(w, "%s: tasklog file format %s, %s\n", s.Path(), format, fileFormats[format])
		}
	case *natsstore.Store:
		blocks := "its message blocks compressed on the servers' disks (S2) once full"
		if !s.BlocksCompressed() {
			blocks = "its message blocks not compressed on the servers' disks (created by an earlier version, or switched off by its operator)"
		}
		fmt.Fprintf(w, "%s: JetStream stream of layout %d, records and blobs compressed with zstd where that saves room (older ones kept as they were), %s\n", s.Path(), s.Layout(), blocks)
	default:
		fmt.Fprintf(w, "%s\n", db.Path())
	}
	tasks, err := db.Tasks()
	if err != nil {
		return fail(stderr, err)
	}
	n := 0
	for _, t := range tasks {
		n += int(t.Events)
	}
	fmt.Fprintf(w, "%s, %s\n", plural(len(tasks), "task"), plural(n, "event"))
	if s, ok := db.(*store.DB); ok {
		if hint := compactHint(s); hint != "" {
			fmt.Fprintln(w, hint)
		}
	}
	return exitOK
}

// compactHint says how much smaller 'replay compact' would make the file, when that is a
// quarter of it or more: a file of free pages, or of pages its data fills only in part (the id
// indexes of hooks' events written before their pages were split at half). A copy's file is
// taken to be its data and a twentieth, the pages of records larger than a page as they are
// (a copy packs those no fuller), and a megabyte to grow by: an estimate on the large side.
// A file under 1.4 MB could never get a hint, and its pages are not read.
func compactHint(db *store.DB) string {
	const grow = 1 << 20
	if info, err := os.Stat(db.Path()); err != nil || 4*grow > 3*info.Size() {
		return ""
	}
	u, err := db.PageUse()
	if err != nil {
		return ""
	}
	estimate := u.InUse + u.InUse/20 + u.Overflow + grow
	if 4*estimate > 3*u.File {
		return ""
	}
	return fmt.Sprintf("its data takes %s of the file's %s: 'replay compact NEW' copies it into a file of about %s or less",
		megabytes(u.InUse), megabytes(u.File), megabytes(estimate))
}
