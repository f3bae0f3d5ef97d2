package natsstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tasklog/tasklog/events"
)

// readAllOf reads task's whole log from s.
func readAllOf(t *testing.T, s *Store, task uuid.UUID) []events.Event {
	t.Helper()
	var out []events.Event
	for ev, err := range s.Events(context.Background(), task, 1) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

// Migrate copies a stream of layout 1 or 2 into one of layout 3 as the same chains, byte for
// byte, with the blobs and snapshots; a second run copies nothing, and a copy stopped part-way
// is completed. A destination of layout 1 or 2 is refused.
func TestMigrate(t *testing.T) {
	srv := startServer(t)
	for _, layout := range []int{Layout1, Layout2} {
		t.Run(fmt.Sprintf("layout%d", layout), func(t *testing.T) { migrate(t, srv, layout) })
	}
}

func migrate(t *testing.T, srv *server.Server, layout int) {
	src := openStore(t, srv, &Options{layout: layout})
	src.maxInline = 300
	long, short := uuid.New(), uuid.New()
	mustAppend(t, src, long, 0, notes(t, 1200, "long")...)
	mustAppend(t, src, short, 0, note(t, 1, "short"), note(t, 1, string(bytes.Repeat([]byte("z"), 1000))))
	sum, err := src.PutBlob([]byte("a rule file"))
	if err != nil {
		t.Fatal(err)
	}
	if err := src.PutSnapshot(short, "rules", 2, []byte("state")); err != nil {
		t.Fatal(err)
	}

	dst := openStore(t, srv, nil)
	if dst.Layout() != Layout3 {
		t.Fatalf("a new stream is of layout %d, want 3", dst.Layout())
	}
	// As if an earlier run stopped after the first 700 events of the long task.
	mustAppend(t, dst, long, 0, readAllOf(t, src, long)[:700]...)
	m, err := Migrate(context.Background(), dst, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Tasks != 2 || m.Events != 1200-700+2 {
		t.Fatalf("migrated %+v, want 2 tasks and the %d events the destination lacked", m, 1200-700+2)
	}
	for _, task := range []uuid.UUID{long, short} {
		got, want := readAllOf(t, dst, task), readAllOf(t, src, task)
		if len(got) != len(want) {
			t.Fatalf("task %s: %d events migrated of %d", task, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i].AppendBinary(nil), want[i].AppendBinary(nil)) {
				t.Fatalf("task %s: event %d differs after the migration", task, i+1)
			}
		}
		if err := dst.Verify(context.Background(), task); err != nil {
			t.Fatal(err)
		}
	}
	if data, err := dst.Blob(sum); err != nil || string(data) != "a rule file" {
		t.Fatalf("blob after the migration: %q, %v", data, err)
	}
	if seq, data, err := dst.Snapshot(short, "rules"); err != nil || seq != 2 || string(data) != "state" {
		t.Fatalf("snapshot after the migration: %d %q, %v", seq, data, err)
	}
	if again, err := Migrate(context.Background(), dst, src, nil); err != nil || again.Events != 0 || again.Objects != 0 {
		t.Fatalf("a second migration: %+v, %v; want nothing copied", again, err)
	}
	for _, old := range []int{Layout1, Layout2} {
		if _, err := Migrate(context.Background(), openStore(t, srv, &Options{layout: old}), src, nil); !errors.Is(err, ErrNotCurrentLayout) {
			t.Fatalf("a migration into a stream of layout %d: %v, want ErrNotCurrentLayout", old, err)
		}
	}
}

// A stream's layout is read from its metadata when it is opened again: a Store never writes
// one layout into a stream of another.
func TestLayoutIsTheStreams(t *testing.T) {
	srv := startServer(t)
	for _, layout := range layouts {
		s := openStore(t, srv, &Options{layout: layout})
		task := uuid.New()
		mustAppend(t, s, task, 0, note(t, 1, "first"))
		again := openStoreOn(t, s)
		if again.Layout() != layout {
			t.Fatalf("a stream created in layout %d opens as layout %d", layout, again.Layout())
		}
		mustAppend(t, again, task, 1, note(t, 2, "second"))
		if err := again.Verify(context.Background(), task); err != nil {
			t.Fatal(err)
		}
		if n := len(rawMessages(t, s, s.stream+".log.>")); (layout == Layout2) != (n > 0) {
			t.Fatalf("layout %d: %d messages on subjects of layout 2's logs", layout, n)
		}
		if n := len(rawMessages(t, s, s.taskFilter(task))); n != 2 {
			t.Fatalf("layout %d: %d messages on the task's subjects, want 2", layout, n)
		}
	}
}

// The URL's ?layout=N chooses the layout of a stream Open creates, and an existing stream of
// another layout, or of a layout this version does not know, is refused with an error saying so.
func TestLayoutInURL(t *testing.T) {
	for raw, want := range map[string]int{"nats://h:4222/S": 0, "nats://h:4222/S?layout=1": 1, "nats://h:4222,h2:4222/S?replicas=3&layout=2": 2, "nats://h:4222/S?layout=3": 3} {
		if u, err := ParseURL(raw); err != nil || u.Layout != want {
			t.Errorf("ParseURL(%q): layout %d, %v; want %d", raw, u.Layout, err, want)
		}
	}
	if _, err := ParseURL("nats://h:4222/S?layout=4"); err == nil || !strings.Contains(err.Error(), "layout=4 is not 1, 2 or 3") {
		t.Errorf("layout=4: %v", err)
	}
	srv := startServer(t)
	s := openStore(t, srv, &Options{layout: Layout1})
	_, err := Open("nats://in-process/"+s.stream+"?layout=2", &Options{Conn: connect(t, srv)})
	if err == nil || !strings.Contains(err.Error(), "the stream is of layout 1, not of layout 2 as asked") {
		t.Fatalf("a stream of layout 1 opened as layout 2: %v", err)
	}
	cfg := jetstream.StreamConfig{Name: "FUTURE", Subjects: []string{"FUTURE.>"}, Storage: jetstream.FileStorage,
		Discard: jetstream.DiscardNew, AllowDirect: true, AllowAtomicPublish: true, Metadata: map[string]string{LayoutMetadataKey: "4"}}
	if _, err := s.js.CreateStream(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	_, err = Open("nats://in-process/FUTURE", &Options{Conn: connect(t, srv)})
	if err == nil || !strings.Contains(err.Error(), `the stream is of layout "4"`) {
		t.Fatalf("a stream of an unknown layout: %v", err)
	}
}
