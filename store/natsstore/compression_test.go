package natsstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store/internal/mix"
)

// A stream tasklog creates, and its two object stores, are compressed on the server's disk.
func TestNewStreamsAreCompressed(t *testing.T) {
	s := openStore(t, startServer(t), nil)
	ctx := context.Background()
	st, err := s.js.Stream(ctx, s.stream)
	if err != nil {
		t.Fatal(err)
	}
	if c := st.CachedInfo().Config.Compression; c != jetstream.S2Compression {
		t.Errorf("the stream's compression is %v, want s2", c)
	}
	if !s.BlocksCompressed() {
		t.Error("BlocksCompressed is false for a stream created compressed")
	}
	for _, os := range []jetstream.ObjectStore{s.blobs, s.snaps} {
		status, err := os.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !status.IsCompressed() {
			t.Errorf("object store %s is not compressed", status.Bucket())
		}
	}
}

// A stream made without compression (by an earlier version, or switched off by its operator)
// keeps its setting: tasklog opens it, appends to it and reads it as it is.
func TestUncompressedStreamIsKept(t *testing.T) {
	s := openUncompressed(t, startServer(t))
	task := uuid.New()
	evs, _ := mix.Realistic(t, 3)
	if _, err := s.Append(context.Background(), task, 0, evs...); err != nil {
		t.Fatal(err)
	}
	var got []events.Event
	for ev, err := range s.Events(context.Background(), task, 1) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	if len(got) != len(evs) {
		t.Fatalf("read %d events back, want %d", len(got), len(evs))
	}
	st, err := s.js.Stream(context.Background(), s.stream)
	if err != nil {
		t.Fatal(err)
	}
	if c := st.CachedInfo().Config.Compression; c != jetstream.NoCompression {
		t.Errorf("opening the stream changed its compression to %v", c)
	}
	if s.BlocksCompressed() {
		t.Error("BlocksCompressed is true for a stream created without compression")
	}
}

// openUncompressed opens a Store on a fresh stream of srv that was created as tasklog creates
// one, but without compression, as an earlier version did; closed when tb ends.
func openUncompressed(tb testing.TB, srv *server.Server) *Store {
	tb.Helper()
	nc := connect(tb, srv)
	js, err := jetstream.New(nc)
	if err != nil {
		tb.Fatal(err)
	}
	name := fmt.Sprintf("T%d", streams.Add(1))
	cfg := streamConfig(name, 1, 2*time.Minute, LayoutCurrent)
	cfg.Compression = jetstream.NoCompression
	if _, err := js.CreateStream(context.Background(), cfg); err != nil {
		tb.Fatal(err)
	}
	s, err := Open("nats://in-process/"+name, &Options{Conn: nc})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkDiskSealedBlocks writes a task of the realistic mix long enough for the server to
// seal message blocks (8 MiB each; a sealed block is the unit the server compresses), once
// into a stream compressed as tasklog creates it and once into the same stream with compression
// off, as an earlier version created it (its object stores, which hold little of this mix, are
// compressed in both), then restarts the server and reads the task back from disk.
//
//	inuse-B/event   what JetStream counts for the stream (uncompressed in both)
//	disk-B/event    the server's store folder, the last block (never compressed) included
//	sealed-B/event  the sealed blocks alone, against the events they hold: what a long log costs
//	read-events/s   the whole task read after the restart, from the blocks on disk
func BenchmarkDiskSealedBlocks(b *testing.B) {
	n := 60_000
	if v, err := strconv.Atoi(os.Getenv("TASKLOG_BENCH_SEALED_EVENTS")); err == nil && v > 0 {
		n = v
	}
	evs, payload := mix.Realistic(b, n)
	for _, tc := range []struct {
		name       string
		compressed bool
	}{{"s2", true}, {"none", false}} {
		b.Run(tc.name, func(b *testing.B) {
			var inUse, onDisk, sealed, sealedEvents int64
			var read time.Duration
			for b.Loop() {
				dir := b.TempDir()
				srv := startServerIn(b, dir)
				open := openUncompressed
				if tc.compressed {
					open = func(tb testing.TB, srv *server.Server) *Store { return openStore(tb, srv, nil) }
				}
				s := open(b, srv)
				task := uuid.New()
				appendAsHooks(b, s, task, evs)
				stream := s.stream
				inUse = streamBytes(b, s)
				info, err := s.js.Stream(context.Background(), stream)
				if err != nil {
					b.Fatal(err)
				}
				perEvent := float64(info.CachedInfo().State.Bytes) / float64(n)
				s.Close()
				srv.Shutdown()
				srv.WaitForShutdown()
				onDisk = dirBytes(b, dir)
				sealed, sealedEvents = sealedBlocks(b, dir, stream, n, perEvent)

				srv = startServerIn(b, dir)
				var again *Store
				again, err = Open("nats://in-process/"+stream, &Options{Conn: connect(b, srv)})
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				count := 0
				for _, err := range again.Events(context.Background(), task, 1) {
					if err != nil {
						b.Fatal(err)
					}
					count++
				}
				read = time.Since(start)
				if count != n {
					b.Fatalf("read %d events back, want %d", count, n)
				}
				if err := again.Verify(context.Background(), task); err != nil {
					b.Fatal(err)
				}
				again.Close()
			}
			b.ReportMetric(float64(inUse)/float64(n), "inuse-B/event")
			b.ReportMetric(float64(onDisk)/float64(n), "disk-B/event")
			b.ReportMetric(float64(onDisk)/float64(payload), "disk/payload")
			if sealedEvents > 0 {
				b.ReportMetric(float64(sealed)/float64(sealedEvents), "sealed-B/event")
				b.ReportMetric(float64(sealed)/float64(sealedEvents)/(float64(payload)/float64(n)), "sealed/payload")
			}
			b.ReportMetric(float64(n)/read.Seconds(), "read-events/s")
			b.ReportMetric(float64(payload)/float64(n), "payload-B/event")
		})
	}
}

// sealedBlocks is the size of the stream's message blocks but its last, the one being written,
// and the number of events they hold: all n but those of the last block. The last block is
// never compressed, so its events are counted at perEvent, the stream's stored bytes an event as
// JetStream counts them (the size of a message's record in an uncompressed block).
func sealedBlocks(b *testing.B, dir, stream string, n int, perEvent float64) (bytes, evs int64) {
	b.Helper()
	blocks, err := filepath.Glob(filepath.Join(dir, "jetstream", "$G", "streams", stream, "msgs", "*.blk"))
	if err != nil || len(blocks) == 0 {
		b.Fatalf("the stream's message blocks: %v, %v", blocks, err)
	}
	index := func(p string) int {
		i, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(p), ".blk"))
		return i
	}
	if len(blocks) == 1 {
		return 0, 0 // nothing is full yet
	}
	slices.SortFunc(blocks, func(x, y string) int { return index(x) - index(y) })
	for _, p := range blocks[:len(blocks)-1] {
		info, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		bytes += info.Size()
	}
	last, err := os.Stat(blocks[len(blocks)-1])
	if err != nil {
		b.Fatal(err)
	}
	return bytes, int64(n) - int64(float64(last.Size())/perEvent)
}
