package projections

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/rules"
)

// realisticLog is a task of n events shaped like a real agent session: a user message every ~30
// events, mentions, reads, patches and shell calls over a few thousand files, tab snapshots, file
// writes and a decision every 10 events, with the default config.
func realisticLog(tb testing.TB, n int) []events.Event {
	r := rand.New(rand.NewPCG(1, 2))
	b := newLog(tb, []string{"/home/dev/proj", "/home/dev/lib"}, "")
	file := func() string {
		return fmt.Sprintf("packages/p%d/src/mod%d/file%d.ts", r.IntN(20), r.IntN(10), r.IntN(25))
	}
	for len(b.evs) < n {
		switch i := len(b.evs); {
		case i%10 == 9:
			b.decide()
		case i%30 == 1:
			b.user(fmt.Sprintf("Please fix %s and look at %s, then update docs/guide.md. See @/%s.", file(), file(), file()))
		case i%30 == 2:
			b.add(&events.Mention{Path: "/" + file(), Resolved: "/home/dev/proj/" + file()})
		default:
			switch r.IntN(7) {
			case 0, 1:
				b.tool("read_file", fmt.Sprintf(`{"path":%q,"task_progress":"- [ ] step"}`, file()))
			case 2:
				b.tool("Read", fmt.Sprintf(`{"file_path":"/home/dev/proj/%s"}`, file()))
			case 3:
				patch := fmt.Sprintf("*** Begin Patch\n*** Update File: %s\n@@\n-a\n+b\n*** End Patch", file())
				b.tool("shell", `{"command":["bash","-lc",`+quote("apply_patch <<'PATCH'\n"+patch+"\nPATCH")+`],"workdir":"."}`)
			case 4:
				b.tool("Bash", `{"command":`+quote("sed -n '1,200p' "+file()+" | grep -n foo")+`}`)
			case 5:
				open := make([]string, 12)
				for j := range open {
					open[j] = "/home/dev/proj/" + file()
				}
				b.add(&events.TabSnapshot{Open: open, Visible: open[:2]})
			default:
				b.add(&events.FileWrite{Path: "/home/dev/proj/" + file(), Op: events.OpEdit})
			}
		}
	}
	return b.evs
}

var (
	bigOnce sync.Once
	bigLog  []events.Event
)

func big100k(tb testing.TB) []events.Event {
	bigOnce.Do(func() { bigLog = realisticLog(tb, 100_000) })
	return bigLog
}

func foldAll(tb testing.TB, evs []events.Event) *Task {
	t := New()
	for _, ev := range evs {
		if err := t.Apply(ev); err != nil {
			tb.Fatal(err)
		}
	}
	return t
}

// namedTask is a folded task and its sub-benchmark name.
type namedTask struct {
	name string
	t    *Task
}

// shortAndLong folds a short task and a 100k-event one, named by their turns.
func shortAndLong(b *testing.B) []namedTask {
	short := foldAll(b, realisticLog(b, 100))
	long := foldAll(b, big100k(b))
	return []namedTask{{fmt.Sprintf("turn=%d", short.Turn()), short}, {fmt.Sprintf("turn=%d", long.Turn()), long}}
}

// BenchmarkFold is fold throughput with storage out of the picture: a pre-built log.
func BenchmarkFold(b *testing.B) {
	evs := realisticLog(b, 10_000)
	b.ResetTimer()
	for b.Loop() {
		foldAll(b, evs)
	}
	b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkContext builds the context of the next decision of a short task and of a 100k-event
// one: the cost must not grow with the log.
func BenchmarkContext(b *testing.B) {
	for _, c := range shortAndLong(b) {
		b.Run(c.name, func(b *testing.B) {
			var ctx rules.EvaluationContext
			for b.Loop() {
				ctx = c.t.Context()
				_ = c.t.Dropped()
			}
			b.ReportMetric(float64(len(ctx.Paths)), "paths")
		})
	}
}

// BenchmarkResume opens a 100k-event task as the session does: restore the latest snapshot,
// fold the tail after it, build the context. The tail is the worst case of the default
// configuration: one event short of the next snapshot.
func BenchmarkResume(b *testing.B) {
	evs := big100k(b)
	cut := len(evs) - (DefaultConfig().SnapshotEvery - 1)
	snap, err := foldAll(b, evs[:cut]).Marshal()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(snap)), "snapshot-bytes")
	b.ResetTimer()
	for b.Loop() {
		t, err := Restore(snap)
		if err != nil {
			b.Fatal(err)
		}
		for _, ev := range evs[cut:] {
			if err := t.Apply(ev); err != nil {
				b.Fatal(err)
			}
		}
		_ = t.Context()
	}
}

// BenchmarkPayloadTail is the part of BenchmarkResume that is the events package's: decoding
// the tail's payloads.
func BenchmarkPayloadTail(b *testing.B) {
	evs := big100k(b)
	tail := evs[len(evs)-(DefaultConfig().SnapshotEvery-1):]
	for b.Loop() {
		for _, ev := range tail {
			if _, err := ev.Payload(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkRestore is the snapshot half of BenchmarkResume.
func BenchmarkRestore(b *testing.B) {
	snap, err := foldAll(b, big100k(b)).Marshal()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Restore(snap); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarshal is the cost of taking a snapshot of a long task.
func BenchmarkMarshal(b *testing.B) {
	t := foldAll(b, big100k(b))
	for b.Loop() {
		if _, err := t.Marshal(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExtractPaths(b *testing.B) {
	text := "Please fix packages/p1/src/mod2/file3.ts and look at @/docs/guide.md, see https://example.com/x." +
		"\n```go\nimport \"a/b\"\n```\nThen update src/a.ts, src/b.ts; and README.md!"
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		ExtractPaths(text)
	}
}

func BenchmarkToolTargets(b *testing.B) {
	params := json.RawMessage(`{"command":["bash","-lc","sed -n '1,200p' packages/services/src/types.ts"],"workdir":"."}`)
	for b.Loop() {
		ToolTargets("shell", params)
	}
}

// BenchmarkNext is what a decision asks of the projection: the context and its dropped counts,
// built once, for a short task and a 100k-event one.
func BenchmarkNext(b *testing.B) {
	for _, c := range shortAndLong(b) {
		b.Run(c.name, func(b *testing.B) {
			var ctx rules.EvaluationContext
			b.ReportAllocs()
			for b.Loop() {
				ctx, _ = c.t.Next()
			}
			b.ReportMetric(float64(len(ctx.Paths)), "paths")
		})
	}
}
