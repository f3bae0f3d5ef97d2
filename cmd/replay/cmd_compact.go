package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tasklog/tasklog/store"
)

// cmdCompact copies the database file into a new file, every page packed full, and checks the
// copy: the same tasks at the same heads, each task's chain and id index sound.
func cmdCompact(args []string, stdout, stderr io.Writer) int {
	f := newFlags("compact", "NEW", stderr)
	pos, code := f.parseOrExit(args, 1, 1)
	if code >= 0 {
		return code
	}
	if f.loc.Shared() {
		return fail(stderr, errors.New("compact copies a database file; a NATS stream has no pages to pack ('replay migrate' copies a stream)"))
	}
	dst := pos[0]
	if _, err := os.Lstat(dst); err == nil {
		return fail(stderr, fmt.Errorf("%s exists: compact writes a new file and never over another", dst))
	}
	// A damaged file is the copy's failure (exit 1) wherever it is found.
	damaged := func(err error) int {
		fmt.Fprintf(safeWriter{stderr}, "%s: %v; nothing was written\n", errorPrefix(stderr), err)
		return exitFailed
	}
	opened, err := f.openReadOnly()
	if errors.Is(err, store.ErrCorrupt) {
		return damaged(err)
	}
	if err != nil {
		return fail(stderr, err)
	}
	defer opened.Close()
	src, ok := opened.(*store.DB)
	if !ok {
		return fail(stderr, fmt.Errorf("%s is not a database file", opened.Path()))
	}
	tmp, err := temps.create(filepath.Dir(dst), ".replay-compact-*.db")
	if err != nil {
		return fail(stderr, fmt.Errorf("compact: %w", err))
	}
	tmp.Close()
	defer func() {
		os.Remove(tmp.Name()) // gone already once linked to dst
		temps.forget(tmp.Name())
	}()
	if err := src.CompactTo(tmp.Name()); err != nil {
		if errors.Is(err, store.ErrCorrupt) {
			return damaged(err)
		}
		return fail(stderr, err)
	}
	tasks, events, err := checkCompacted(src, tmp.Name())
	if err != nil {
		fmt.Fprintf(safeWriter{stderr}, "%s: the copy of %s does not verify, and was removed: %v\n", errorPrefix(stderr), src.Path(), err)
		return exitFailed
	}
	// A link, unlike a rename, fails rather than replace a file made at dst meanwhile.
	if err := os.Link(tmp.Name(), dst); err != nil {
		return fail(stderr, fmt.Errorf("compact: %w", err))
	}
	if err := syncDir(filepath.Dir(dst)); err != nil {
		return fail(stderr, fmt.Errorf("compact: %s is written, but its folder could not be synced: %w", dst, err))
	}
	fmt.Fprintf(safeWriter{stdout}, "compacted %s (%s) into %s (%s): %s, %s; every task of the copy verified\n",
		src.Path(), fileSizeText(src.Path()), dst, fileSizeText(dst), plural(tasks, "task"), plural(events, "event"))
	return exitOK
}

// checkCompacted opens the copy at path and checks that it holds src's buckets with as many
// keys and every task at src's head (SameContents), each task's chain and id index sound; it
// returns how many tasks and events the copy holds.
func checkCompacted(src *store.DB, path string) (tasks, events int, err error) {
	cp, err := store.Open(path, &store.Options{ReadOnly: true})
	if err != nil {
		return 0, 0, err
	}
	defer cp.Close()
	if err := src.SameContents(cp); err != nil {
		return 0, 0, err
	}
	got, err := cp.Tasks()
	if err != nil {
		return 0, 0, err
	}
	for _, ti := range got {
		if err := cp.Verify(context.Background(), ti.Task); err != nil {
			return 0, 0, err // it names the task
		}
		events += int(ti.Events)
	}
	return len(got), events, nil
}

// syncDir makes a name just linked into dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// fileSizeText is the size of the file at path (megabytes), or "size unknown".
func fileSizeText(path string) string {
	info, err := os.Stat(path)
	if err != nil {
		return "size unknown"
	}
	return megabytes(info.Size())
}

// megabytes writes n bytes in MB of 1,048,576 bytes, to a tenth.
func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }
