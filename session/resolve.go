package session

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/store"
)

// ResolveTask finds the task of db that arg names: a full task id, or a unique prefix of one.
// listing, when not empty, is the command line that lists the tasks, named in the error for
// a task not found.
func ResolveTask(db store.Store, arg, listing string) (uuid.UUID, error) {
	tasks, err := db.Tasks()
	if err != nil {
		return uuid.Nil, err
	}
	want := strings.ToLower(arg)
	var found []uuid.UUID
	for _, t := range tasks {
		if s := t.Task.String(); s == want {
			return t.Task, nil
		} else if want != "" && strings.HasPrefix(s, want) {
			found = append(found, t.Task)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		if listing == "" {
			return uuid.Nil, fmt.Errorf("no task %q in %s", arg, db.Path())
		}
		return uuid.Nil, fmt.Errorf("no task %q in %s ('%s' lists them)", arg, db.Path(), listing)
	}
	const shown = 10
	var b strings.Builder
	fmt.Fprintf(&b, "task prefix %q is ambiguous in %s: %d tasks match:", arg, db.Path(), len(found))
	for i, t := range found {
		if i == shown {
			fmt.Fprintf(&b, "\n  … and %d more", len(found)-shown)
			break
		}
		fmt.Fprintf(&b, "\n  %s", t)
	}
	return uuid.Nil, errors.New(b.String())
}
