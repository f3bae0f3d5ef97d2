package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tasklog/tasklog/store/natsstore"
)

// cmdMigrate copies the tasks of a NATS stream (--store) into a new stream of the current
// layout, with their blobs and snapshots, and verifies every copied task.
func cmdMigrate(args []string, stdout, stderr io.Writer) int {
	f := newFlags("migrate", "nats://HOST:PORT/NEWSTREAM", stderr)
	pos, code := f.parseOrExit(args, 1, 1)
	if code >= 0 {
		return code
	}
	if !f.loc.Shared() {
		return fail(stderr, fmt.Errorf("migrate copies a NATS stream: name it with --store nats://HOST:PORT/STREAM (a database file needs no migration)"))
	}
	to, err := parseStoreLoc(pos[0])
	if err != nil || !to.Shared() {
		return fail(stderr, fmt.Errorf("migrate: the destination %q must be a NATS stream, nats://HOST:PORT/NEWSTREAM", pos[0]))
	}
	srcStore, err := f.loc.Open(f.openOptions())
	if err != nil {
		return fail(stderr, err)
	}
	defer srcStore.Close()
	dstStore, err := to.Open(f.openOptions())
	if err != nil {
		return fail(stderr, err)
	}
	defer dstStore.Close()
	src, dst := srcStore.(*natsstore.Store), dstStore.(*natsstore.Store)
	ctx := context.Background()
	m, err := natsstore.Migrate(ctx, dst, src, nil)
	if err != nil {
		if errors.Is(err, natsstore.ErrNotCurrentLayout) {
			fmt.Fprintf(safeWriter{stderr}, "%s: %v\n", errorPrefix(stderr), err)
			return exitFailed
		}
		return fail(stderr, fmt.Errorf("%w (nothing is lost: running the same migrate again continues it)", err))
	}
	tasks, err := dst.Tasks()
	if err != nil {
		return fail(stderr, err)
	}
	for _, ti := range tasks {
		if err := dst.Verify(ctx, ti.Task); err != nil {
			fmt.Fprintf(safeWriter{stderr}, "%s: the copy of task %s does not verify: %v\n", errorPrefix(stderr), ti.Task, err)
			return exitFailed
		}
	}
	fmt.Fprintf(safeWriter{stdout}, "migrated %s (%s appended, %d blobs and snapshots) from %s (layout %d) to %s (layout %d); %s verified\n",
		plural(m.Tasks, "task"), plural(m.Events, "event"), m.Objects, src.Path(), src.Layout(), dst.Path(), dst.Layout(), plural(len(tasks), "task"))
	return exitOK
}
