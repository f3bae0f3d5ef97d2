package storetest

import (
	"testing"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/tasklog/tasklog/store"
)

// Option changes what Run expects of a store.
type Option struct {
	lacks, why string
}

// The optional interfaces of store.Store, by the names Lacks takes.
const (
	// EventLookup is store.EventLookup: ids looked up without writing, the one-commit hook.
	EventLookup = "EventLookup"
)

// Lacks declares that the store does not implement the optional interface name (one of the
// constants above) and why: Run then checks that it indeed lacks it. Without it, a store that
// lacks an optional interface fails Run, so that a backend that is slower for lacking one says so.
func Lacks(name, why string) Option { return Option{lacks: name, why: why} }

// testOptional checks, for each optional interface, that the store has it (and then that it
// keeps its promises) or that its test declared it lacks it.
func testOptional(t *testing.T, open func(t *testing.T) store.Store, opts []Option) {
	lacks := map[string]string{}
	for _, o := range opts {
		lacks[o.lacks] = o.why
	}
	s := open(t)
	_, has := s.(store.EventLookup)
	why, declared := lacks[EventLookup]
	switch {
	case has && declared:
		t.Errorf("the store implements store.EventLookup, but its test declares it lacks it (%s)", why)
	case !has && !declared:
		t.Errorf("the store does not implement store.EventLookup: a hook on it takes two commits; implement it, or pass storetest.Lacks(storetest.EventLookup, why)")
	case has:
		t.Run("event lookup", func(t *testing.T) { testEventLookup(t, s.(store.EventLookup), s) })
	default:
		t.Logf("lacks store.EventLookup: %s", why)
	}
}

// testEventLookup: ids of the task's log are found, alone or among unknown ones; ids of another
// task, unknown ids, no ids and a task never written are not.
func testEventLookup(t *testing.T, l store.EventLookup, s store.Store) {
	task, other := uuid.New(), uuid.New()
	e := messages(t, 3, "looked up")
	mustAppend(t, s, task, 0, e[0], e[1])
	elsewhere := message(t, 1, "another task")
	mustAppend(t, s, other, 0, elsewhere)
	unknown := e[2].ID
	tests := []struct {
		name string
		task uuid.UUID
		ids  []ulid.ULID
		want bool
	}{
		{"a stored id", task, []ulid.ULID{e[1].ID}, true},
		{"a stored id after an unknown one", task, []ulid.ULID{unknown, e[0].ID}, true},
		{"an unknown id", task, []ulid.ULID{unknown}, false},
		{"no ids", task, nil, false},
		{"another task's id", task, []ulid.ULID{elsewhere.ID}, false},
		{"a task never written", uuid.New(), []ulid.ULID{e[0].ID}, false},
	}
	for _, tt := range tests {
		got, err := l.HasEvents(tt.task, tt.ids...)
		if err != nil || got != tt.want {
			t.Errorf("%s: HasEvents = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
}
