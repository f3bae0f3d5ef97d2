package natsstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store/internal/mix"
	"github.com/tasklog/tasklog/store/payloadcodec"
)

// fileStoreRecord is what nats-server's file store adds to every message beside its subject,
// headers and payload (filestore.go, fileStoreMsgSizeRaw): the record's length (4 bytes), its
// stream sequence (8), time (8), subject length (2) and checksum (8), and with headers the
// headers' length (4). JetStream counts the same bytes in its stream state.
func fileStoreRecord(hasHeaders bool) int {
	if hasHeaders {
		return 22 + 4 + 8
	}
	return 22 + 8
}

// messageCost is the stored bytes of a stream's messages, by kind of message and part.
type messageCost struct {
	msgs  map[string]int            // kind -> messages
	parts map[string]map[string]int // kind -> part -> bytes
	total int
}

// add counts one stored message of kind: its record, subject, each header line, the header
// block's framing (NATS/1.0 line and blank line) and payload.
func (c *messageCost) add(kind string, m storedMsg) {
	if c.msgs == nil {
		c.msgs, c.parts = map[string]int{}, map[string]map[string]int{}
	}
	p := c.parts[kind]
	if p == nil {
		p = map[string]int{}
		c.parts[kind] = p
	}
	c.msgs[kind]++
	p["file store record"] += fileStoreRecord(len(m.Hdrs) > 0)
	p["subject"] += len(m.Subject)
	p["payload"] += len(m.Data)
	framed := len(m.Hdrs)
	if len(m.Hdrs) > 0 {
		lines := strings.Split(strings.TrimSuffix(string(m.Hdrs), "\r\n\r\n"), "\r\n")
		for _, l := range lines[1:] {
			name, _, _ := strings.Cut(l, ":")
			p["header "+name] += len(l) + 2
			framed -= len(l) + 2
		}
		p["header framing"] += framed
	}
	c.total += fileStoreRecord(len(m.Hdrs) > 0) + len(m.Subject) + len(m.Data) + len(m.Hdrs)
}

// table renders the cost per event (n events): a line per kind and part, sorted.
func (c *messageCost) table(n int) string {
	var b strings.Builder
	kinds := make([]string, 0, len(c.parts))
	for k := range c.parts {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		parts := make([]string, 0, len(c.parts[k]))
		sum := 0
		for p, v := range c.parts[k] {
			parts = append(parts, p)
			sum += v
		}
		slices.Sort(parts)
		fmt.Fprintf(&b, "%s: %d messages, %.1f B/event\n", k, c.msgs[k], float64(sum)/float64(n))
		for _, p := range parts {
			fmt.Fprintf(&b, "  %-40s %7.1f B/event\n", p, float64(c.parts[k][p])/float64(n))
		}
	}
	fmt.Fprintf(&b, "total: %.1f B/event\n", float64(c.total)/float64(n))
	return b.String()
}

// streamCost reads every message of s's stream, with its headers, and counts it.
func streamCost(t testing.TB, s *Store) messageCost {
	t.Helper()
	ctx := context.Background()
	var c messageCost
	for seq := uint64(1); ; {
		m, ok, err := s.getNext(ctx, s.stream+".>", seq)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return c
		}
		c.add(s.messageKind(m.Subject), m)
		seq = m.Seq + 1
	}
}

// messageKind names what a message of the stream is, from its subject.
func (s *Store) messageKind(subject string) string {
	rest := strings.TrimPrefix(subject, s.stream+".")
	switch {
	case s.layout == Layout1 && strings.HasPrefix(rest, "task."):
		return "task marker"
	case s.layout == Layout1:
		return "record"
	case s.layout == Layout2 && strings.HasPrefix(rest, "id."):
		return "id marker"
	case s.layout == Layout2:
		return "record"
	case strings.Count(rest, ".") == 1:
		return "id marker"
	}
	return "record"
}

// TestMessageCost writes the realistic mix to a stream of each layout, named TASKLOG, in the
// small appends hooks make, and accounts for every byte JetStream counts for the stream, by
// kind of message and part: the parts must add up to the stream's bytes, and layout 3 must cost
// less than layout 2. With -v it prints the table docs/storage.md quotes.
func TestMessageCost(t *testing.T) {
	const n = 600
	evs, payload := mix.Realistic(t, n)
	perEvent := map[int]float64{}
	for _, layout := range layouts {
		// A stream named as the default one is, on a server of its own.
		s, err := Open("nats://in-process/"+DefaultStream, &Options{Conn: connect(t, startServer(t)), layout: layout})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		task := uuid.New()
		appendAsHooks(t, s, task, evs)
		c := streamCost(t, s)
		if counted := countedBytes(t, s); uint64(c.total) != counted {
			t.Errorf("layout %d: the parts add up to %d bytes, JetStream counts %d for the stream", layout, c.total, counted)
		}
		perEvent[layout] = float64(c.total) / n
		t.Logf("layout %d, %d events, %.1f payload bytes an event:\n%s", layout, n, float64(payload)/n, c.table(n))
	}
	if perEvent[Layout3] >= perEvent[Layout2] {
		t.Errorf("layout 3 stores %.1f bytes an event, layout 2 %.1f: want fewer", perEvent[Layout3], perEvent[Layout2])
	}
}

// A shape is a way of writing a log's appends to a stream, for estimating what it costs: the
// written layouts, and packings this package does not write.
type shape int

const (
	// shapeLayout3 is layout 3 as Append writes it: per event its marker and its message, in one
	// atomic batch per append.
	shapeLayout3 shape = iota
	// shapePackedMarked writes per append one message holding all its events, compressed
	// together, and a marker per event, in one atomic batch.
	shapePackedMarked
	// shapePacked writes per append one message holding all its events, compressed together,
	// with the expected last subject sequence and nothing else: no markers, no batch.
	shapePacked
)

func (sh shape) String() string {
	return [...]string{"layout3", "packed-with-markers", "packed-no-markers"}[sh]
}

// storedSize is what nats-server's file store takes for a message (fileStoreMsgSizeRaw), with
// its headers given as name and value pairs.
func storedSize(subject string, payload int, hdrs ...string) int {
	if len(hdrs) == 0 {
		return fileStoreRecord(false) + len(subject) + payload
	}
	h := len("NATS/1.0\r\n") + len("\r\n")
	for i := 0; i < len(hdrs); i += 2 {
		h += len(hdrs[i]) + len(": ") + len(hdrs[i+1]) + len("\r\n")
	}
	return fileStoreRecord(true) + len(subject) + h + payload
}

// estimateCost returns the bytes a stream of s's name holds once appends (each a run of events,
// sealed, of one task) are written in shape sh, the first at stream sequence 1, and the bytes
// of the events' records (compressed each, or per append together).
func estimateCost(s *Store, task uuid.UUID, appends [][]events.Event, sh shape) (stream, records int) {
	const batchID = "0123456789abcdef" // layout 3's batch ids are 16 characters
	logSubject := s.stream + "." + subjectToken(task)
	sseq := uint64(0) // the log's last stream sequence
	next := uint64(1) // the stream's next sequence
	for _, evs := range appends {
		var enc [][]byte
		for i := range evs {
			enc = append(enc, payloadcodec.Encode(nil, evs[i].AppendBinary(nil)))
		}
		if sh != shapeLayout3 {
			var packed []byte
			for i := range evs {
				raw := evs[i].AppendBinary(nil)
				packed = binary.AppendUvarint(packed, uint64(len(raw)))
				packed = append(packed, raw...)
			}
			enc = [][]byte{payloadcodec.Encode(nil, packed)}
		}
		n := 0 // messages of the batch so far
		msgs := len(enc) + len(evs)
		if sh == shapePacked {
			msgs = 1
		}
		batch := func() []string {
			n++
			h := []string{"Nats-Batch-Id", batchID, "Nats-Batch-Sequence", strconv.Itoa(n)}
			if n == msgs {
				h = append(h, "Nats-Batch-Commit", "1")
			}
			return h
		}
		if sh == shapePackedMarked {
			for i := range evs {
				stream += storedSize(logSubject+"."+subjectToken(evs[i].ID), 0, append(batch(), "Nats-Expected-Last-Subject-Sequence", "0")...)
				next++
			}
		}
		for i, rec := range enc {
			if sh == shapeLayout3 {
				stream += storedSize(logSubject+"."+subjectToken(evs[i].ID), 0, append(batch(), "Nats-Expected-Last-Subject-Sequence", "0")...)
				next++
			}
			var h []string
			if sh != shapePacked {
				h = batch()
			}
			if i == 0 {
				h = append(h, "Nats-Expected-Last-Subject-Sequence", strconv.FormatUint(sseq, 10))
			}
			stream += storedSize(logSubject, len(rec), h...)
			records += len(rec)
			sseq = next
			next++
		}
	}
	return stream, records
}

// sealedAppends seals evs for task and cuts them into the appends hooks make: one to three
// events each, as BenchmarkDiskUsageRealistic appends them.
func sealedAppends(task uuid.UUID, evs []events.Event) [][]events.Event {
	sealed := seal(task, head{}, evs)
	var out [][]events.Event
	for i, k := 0, 0; i < len(sealed); k++ {
		j := min(len(sealed), i+1+k%3)
		out = append(out, sealed[i:j])
		i = j
	}
	return out
}

// The estimate of what a shape costs is exact for the shape Append writes: estimateCost's
// layout 3 is the bytes JetStream counts once the same appends are written.
func TestEstimateCostIsExact(t *testing.T) {
	evs, _ := mix.Realistic(t, 300)
	s := openStore(t, startServer(t), &Options{layout: Layout3})
	task := uuid.New()
	appends := sealedAppends(task, evs)
	var head uint64
	for _, a := range appends {
		mustAppend(t, s, task, head, a...)
		head += uint64(len(a))
	}
	if got, _ := estimateCost(s, task, appends, shapeLayout3); uint64(got) != countedBytes(t, s) {
		t.Fatalf("estimated %d bytes for layout 3, JetStream counts %d", got, countedBytes(t, s))
	}
}

// BenchmarkPackingEstimate estimates, for the realistic mix of BenchmarkDiskUsageRealistic in
// a stream named TASKLOG, what layout 3 and two packings of each append's events into one
// message would store per event (their records and the stream's bytes, and the ratio to the
// payload), from the file store's sizes (exact for layout 3, TestEstimateCostIsExact).
func BenchmarkPackingEstimate(b *testing.B) {
	const n = 5_000
	evs, payload := mix.Realistic(b, n)
	s := &Store{stream: DefaultStream, layout: Layout3}
	task := uuid.New()
	appends := sealedAppends(task, evs)
	for _, sh := range []shape{shapeLayout3, shapePackedMarked, shapePacked} {
		b.Run(sh.String(), func(b *testing.B) {
			var stream, records int
			for b.Loop() {
				stream, records = estimateCost(s, task, appends, sh)
			}
			b.ReportMetric(float64(records)/n, "records-B/event")
			b.ReportMetric(float64(stream)/n, "stream-B/event")
			b.ReportMetric(float64(payload)/n, "payload-B/event")
			b.ReportMetric(float64(stream)/float64(payload), "stream/payload")
		})
	}
}

// countedBytes is what JetStream counts for s's stream.
func countedBytes(t *testing.T, s *Store) uint64 {
	t.Helper()
	st, err := s.js.Stream(context.Background(), s.stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Bytes
}
