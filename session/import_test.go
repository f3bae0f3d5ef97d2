package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// exportedTask records a short task with two decisions and returns its export.
func exportedTask(t *testing.T) []byte {
	t.Helper()
	ctx := context.Background()
	db := openDB(t)
	s := newSession(t, db, clineWorkspace(), Options{})
	s.UserMessage(ctx, "fix apps/web/src/App.tsx")
	decide(t, s)
	s.ToolCall(ctx, "read_file", "c1", []byte(`{"path":"services/api/routes.ts"}`))
	decide(t, s)
	var buf bytes.Buffer
	if err := Export(ctx, db, s.Task(), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func importString(t *testing.T, db store.Store, in string) ([]Imported, error) {
	t.Helper()
	return Import(context.Background(), db, strings.NewReader(in), "f.jsonl", ImportOptions{})
}

func exportOf(t *testing.T, db store.Store, got []Imported) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Export(context.Background(), db, got[0].Task, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// lines splits a file into its lines, each with its newline.
func lines(b []byte) []string {
	ls := strings.SplitAfter(string(b), "\n")
	return ls[:len(ls)-1] // the file ends with a newline: the last element is empty
}

func TestExportEndsWithAClosingLine(t *testing.T) {
	exp := exportedTask(t)
	ls := lines(exp)
	l, err := events.ParseLine([]byte(strings.TrimSpace(ls[len(ls)-1])))
	if err != nil || l.End == nil {
		t.Fatalf("last line %q is not a closing line (%v)", ls[len(ls)-1], err)
	}
	prev, _ := events.ParseLine([]byte(strings.TrimSpace(ls[len(ls)-2])))
	if l.End.Events != prev.Event.Seq || l.End.Last != prev.Event.Hash || l.End.Task != prev.Event.Task {
		t.Errorf("closing line %+v does not name the last event %s", l.End, prev.Event)
	}
	db := openDB(t)
	got, err := importString(t, db, string(exp))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !got[0].Closed || got[0].Appended != got[0].Events {
		t.Fatalf("import = %+v, want one closed task, all appended", got)
	}
	if again := exportOf(t, db, got); again != string(exp) {
		t.Errorf("re-export differs from the export:\n%s\n---\n%s", again, exp)
	}
	if again, err := importString(t, db, string(exp)); err != nil || again[0].Appended != 0 {
		t.Errorf("re-import: %+v, %v; want nothing appended", again, err)
	}
}

// A file cut anywhere but after its closing line is refused when it was an export; without a
// closing line (an older export) it is accepted and says so.
func TestImportDetectsACutExport(t *testing.T) {
	exp := exportedTask(t)
	ls := lines(exp)
	n := len(ls)
	tests := []struct {
		name    string
		in      string
		wantErr error
		inErr   string
	}{
		{"last event missing", strings.Join(append(append([]string(nil), ls[:n-2]...), ls[n-1]), ""), ErrIncomplete,
			fmt.Sprintf("f.jsonl:%d: export is incomplete", n-1)},
		{"cut inside the closing line", strings.Join(ls[:n-1], "") + ls[n-1][:20], events.ErrInvalid, fmt.Sprintf("f.jsonl:%d:", n)},
		{"cut inside an event line", strings.Join(ls[:n-2], "") + ls[n-2][:40], events.ErrInvalid, fmt.Sprintf("f.jsonl:%d:", n-1)},
		{"closing line with another hash", strings.Join(ls[:n-1], "") + otherLast(t, ls[n-1], ls[0]), ErrIncomplete, "hashes to"},
		{"event after the closing line", string(exp) + ls[n-2], ErrInvalidLog, "after its closing line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkRefused(t, tt.in, tt.wantErr, tt.inErr) })
	}
	db := openDB(t)
	got, err := importString(t, db, strings.Join(ls[:n-1], ""))
	if err != nil || got[0].Closed {
		t.Errorf("an export without its closing line: %+v, %v; want accepted, not closed", got, err)
	}
}

// Lines that verify would reject are refused at import, naming the line, writing nothing.
func TestImportRefusesWhatVerifyRejects(t *testing.T) {
	exp := lines(exportedTask(t))
	blobAt := -1
	for i, l := range exp {
		if strings.HasPrefix(l, `{"blob":`) {
			blobAt = i
			break
		}
	}
	without := func(i int) string {
		return strings.Join(append(append([]string(nil), exp[:i]...), exp[i+1:]...), "")
	}
	// delta is the export written by hand, its second decision saying also what add says.
	delta := func(add string) string {
		hand := allHandWritten(t, exp)
		if strings.Count(hand, `"base":4,`) != 1 {
			t.Fatalf("the export's second decision is not written against seq 4:\n%s", hand)
		}
		return strings.Replace(hand, `"base":4,`, `"base":4,`+add, 1)
	}
	start := `{"type":"task_started","task":"7e7e7e7e-0000-4000-8000-000000000001","data":{"roots":["/ws"]}}` + "\n"
	msg := func(text string) string { return `{"type":"user_message","data":{"text":"` + text + `"}}` + "\n" }
	tests := []struct {
		name, in string
		wantErr  error
		inErr    string
	}{
		{"negative turn", start + `{"type":"user_message","turn":-1,"data":{"text":"x"}}` + "\n", events.ErrInvalid, "f.jsonl:2: invalid event: turn -1"},
		{"turn that goes back", start + `{"type":"user_message","turn":2,"data":{"text":"x"}}` + "\n" + `{"type":"user_message","turn":1,"data":{"text":"x"}}` + "\n",
			ErrInvalidLog, "f.jsonl:2: invalid log"},
		{"turn before the last decision's", allHandWritten(t, exp) + `{"type":"user_message","turn":1,"data":{"text":"x"}}` + "\n",
			ErrInvalidLog, fmt.Sprintf("f.jsonl:%d: invalid log: seq 7 is in turn 1, after turn 2: turns never go back", len(exp))},
		{"turn after a later one", start + msg("a") + `{"type":"mention","turn":1,"data":{"path":"a"}}` + "\n" + `{"type":"user_message","turn":3,"data":{"text":"x"}}` + "\n",
			ErrInvalidLog, "f.jsonl:4: invalid log"},
		{"no task_started", msg("hello") + msg("again"), ErrInvalidLog, "f.jsonl:1: invalid log: projections: event seq 1 (user_message): task log does not begin with task_started"},
		{"task_started twice", start + msg("a") + start, ErrInvalidLog, "f.jsonl:3: invalid log"},
		{"snapshot without its blob", without(blobAt), ErrInvalidLog, "is on no earlier line and not in the database"},
		{"hash on some lines only", exp[0] + msg("a"), ErrInvalidLog, "f.jsonl:2: invalid log: this line carries no hash but line 1, the task's first, does"},
		{"hand-written line then exported line", handWritten(t, exp[0]) + exp[1], ErrInvalidLog,
			"f.jsonl:2: invalid log: this line carries a hash but line 1, the task's first, does not"},
		// The second decision is written against the first (base 4): what it says changed
		// must be in the first.
		{"a decision written against another than the one before it", strings.Replace(delta(""), `"base":4,`, `"base":3,`, 1), ErrInvalidLog,
			"f.jsonl:10: invalid log: seq 6 (decision): invalid event: written against seq 3, but the decision before it is at seq 4"},
		{"a delta that removes a rule its base lacks", delta(`"removed":["cline:/ws/.clinerules/nope.md"],`), ErrInvalidLog,
			"f.jsonl:10: invalid log: seq 6 (decision): invalid event: decision of turn 2: removed rule cline:/ws/.clinerules/nope.md is not in its base"},
		{"a delta against a decision of another snapshot", newSnapshotThenDelta(t, exp), ErrInvalidLog,
			"f.jsonl:11: invalid log: seq 7 (decision): invalid event: decision of turn 2 uses snapshot 6 but is written against a decision of snapshot 3"},
		{"a delta whose path is gone from a base that lacks it", delta(`"gone":[{"path":"zzz","root":"/ws"}],`), ErrInvalidLog,
			"f.jsonl:10: invalid log: seq 6 (decision): invalid event: decision of turn 2: gone path zzz (root \"/ws\") is not in its base's context"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkRefused(t, tt.in, tt.wantErr, tt.inErr) })
	}
}

// newSnapshotThenDelta is the export written by hand with a rules snapshot of no files before
// its second decision, which names that snapshot but is still written against the first
// decision (base 4), of the snapshot before.
func newSnapshotThenDelta(t *testing.T, exp []string) string {
	t.Helper()
	var out strings.Builder
	for _, l := range strings.SplitAfter(allHandWritten(t, exp), "\n") {
		if strings.Contains(l, `"snapshot":3,"base":4`) {
			out.WriteString(`{"type":"rules_snapshot","turn":2,"data":{"files":[]}}` + "\n")
			l = strings.Replace(l, `"snapshot":3,"base":4`, `"snapshot":6,"base":4`, 1)
		}
		out.WriteString(l)
	}
	return out.String()
}

// otherLast is a closing line naming the hash of another line's event as the last one.
func otherLast(t *testing.T, end, other string) string {
	t.Helper()
	e, _ := events.ParseLine([]byte(strings.TrimSpace(end)))
	o, _ := events.ParseLine([]byte(strings.TrimSpace(other)))
	b, err := events.MarshalEndLine(events.End{Task: e.End.Task, Events: e.End.Events, Last: o.Event.Hash})
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// handWritten is an exported line without its seq, prev and hash.
func handWritten(t *testing.T, line string) string {
	t.Helper()
	l, err := events.ParseLine([]byte(strings.TrimSpace(line)))
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`{"task":%q,"id":%q,"type":%q,"data":%s}`+"\n", l.Event.Task, l.Event.ID, l.Event.Type, l.Event.Data)
}

// allHandWritten is an export as a hand-written file: lines without seq, prev and hash, and
// no closing line.
func allHandWritten(t *testing.T, exp []string) string {
	t.Helper()
	var out strings.Builder
	for _, line := range exp {
		l, err := events.ParseLine([]byte(strings.TrimSpace(line)))
		switch {
		case err != nil:
			t.Fatal(err)
		case l.Blob != nil:
			out.WriteString(line)
		case l.End == nil:
			fmt.Fprintf(&out, `{"task":%q,"id":%q,"turn":%d,"time":%q,"type":%q,"v":%d,"data":%s}`+"\n", l.Event.Task, l.Event.ID,
				l.Event.Turn, l.Event.Time.Format(time.RFC3339Nano), l.Event.Type, l.Event.V, l.Event.Data)
		}
	}
	return out.String()
}

// A re-import that conflicts says which line and what differs, not that another writer
// appended first.
func TestImportConflictSaysWhatDiffers(t *testing.T) {
	exp := lines(exportedTask(t))
	db := openDB(t)
	if _, err := importString(t, db, strings.Join(exp, "")); err != nil {
		t.Fatal(err)
	}
	// Another task's log under the same task id: the same first line, then another user message.
	var other []string
	var prev events.Hash
	for i, l := range exp[:2] {
		pl, err := events.ParseLine([]byte(strings.TrimSpace(l)))
		if err != nil {
			t.Fatal(err)
		}
		ev := pl.Event
		if i == 1 {
			alt, _ := events.New(&events.UserMessage{Text: "something else"})
			ev.Data = alt.Data
		}
		ev.Seal(prev)
		prev = ev.Hash
		b, _ := events.MarshalJSONLine(ev)
		other = append(other, string(b)+"\n")
	}
	_, err := importString(t, db, strings.Join(other, ""))
	want := `f.jsonl:2: the file's events differ from the stored ones: task `
	if !errors.Is(err, ErrImportConflict) || !strings.HasPrefix(err.Error(), want) ||
		!strings.Contains(err.Error(), "seq 2 differs: data {\"text\":\"fix apps/web/src/App.tsx\",\"guesses\":") ||
		!strings.Contains(err.Error(), " stored, {\"text\":\"something else\"} in the file") {
		t.Errorf("err = %v\nwant ErrImportConflict starting %q and naming the data", err, want)
	}
	if strings.Contains(err.Error(), "another writer") {
		t.Errorf("the error blames another writer: %v", err)
	}

	// A hand-written file gets new ids each time: importing it twice says so.
	hand := `{"type":"task_started","task":"7e7e7e7e-0000-4000-8000-000000000002","data":{"roots":["/ws"]}}` + "\n"
	now := ImportOptions{Now: fixedClock()}
	if _, err := Import(context.Background(), db, strings.NewReader(hand), "f.jsonl", now); err != nil {
		t.Fatal(err)
	}
	_, err = Import(context.Background(), db, strings.NewReader(hand), "f.jsonl", now)
	if !errors.Is(err, ErrImportConflict) || !strings.Contains(err.Error(), "f.jsonl:1:") || !strings.Contains(err.Error(), "carries no id") {
		t.Errorf("err = %v, want a conflict at line 1 saying the line carries no id", err)
	}
}

// A longer export of a task already imported in part appends what the database lacks.
func TestImportCompletesAStoredPrefix(t *testing.T) {
	exp := lines(exportedTask(t))
	var prefix []string
	for _, l := range exp {
		prefix = append(prefix, l)
		if strings.Contains(l, `"seq":3,`) {
			break
		}
	}
	db := openDB(t)
	first, err := importString(t, db, strings.Join(prefix, ""))
	if err != nil || first[0].Appended != 3 || first[0].Closed {
		t.Fatalf("prefix: %+v, %v; want 3 appended, not closed", first, err)
	}
	got, err := importString(t, db, strings.Join(exp, ""))
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Appended != got[0].Events-3 || !got[0].Closed {
		t.Errorf("whole file after its prefix: %+v; want the %d events after seq 3 appended", got, got[0].Events-3)
	}
	if again := exportOf(t, db, got); again != strings.Join(exp, "") {
		t.Errorf("the completed log does not export as the file:\n%s\n---\n%s", again, strings.Join(exp, ""))
	}
}

// nonSeeker hides a reader's Seek, as a pipe or bufio.Reader does.
type nonSeeker struct{ r io.Reader }

func (n nonSeeker) Read(p []byte) (int, error) { return n.r.Read(p) }

func TestImportFromAReaderThatCannotSeek(t *testing.T) {
	exp := exportedTask(t)
	db := openDB(t)
	got, err := Import(context.Background(), db, nonSeeker{bytes.NewReader(exp)}, "pipe", ImportOptions{})
	if err != nil || !got[0].Closed || got[0].Appended != got[0].Events {
		t.Fatalf("import from a pipe: %+v, %v", got, err)
	}
	if again := exportOf(t, db, got); again != string(exp) {
		t.Errorf("re-export differs")
	}
}

// The same log written by hand (ids and times given, no hashes) imports to the identical log;
// without turns too, each line taking the turn the decisions before it make.
func TestHandWrittenExportImportsToTheSameLog(t *testing.T) {
	exp := exportedTask(t)
	hand := allHandWritten(t, lines(exp))
	noTurns := regexp.MustCompile(`("id":"[^"]+"),"turn":\d+,`).ReplaceAllString(hand, "$1,") // the envelope's, not a decision's
	if noTurns == hand {
		t.Fatalf("the hand-written form has no turns to leave out:\n%s", hand)
	}
	for name, in := range map[string]string{"with turns": hand, "without turns": noTurns} {
		t.Run(name, func(t *testing.T) {
			db := openDB(t)
			got, err := importString(t, db, in)
			if err != nil {
				t.Fatal(err)
			}
			if again := exportOf(t, db, got); again != string(exp) {
				t.Errorf("the hand-written form did not import to the exported log:\n%s\nwant\n%s", again, exp)
			}
		})
	}
}

// A file holds its tasks one after the other, as concatenated exports do.
func TestImportSeveralTasks(t *testing.T) {
	a, b := exportedTask(t), exportedTask(t)
	db := openDB(t)
	got, err := importString(t, db, string(a)+string(b))
	if err != nil || len(got) != 2 || !got[0].Closed || !got[1].Closed || got[0].Task == got[1].Task {
		t.Fatalf("two exports in one file: %+v, %v", got, err)
	}
	la, lb := lines(a), lines(b)
	mixed := strings.Join(la[:2], "") + strings.Join(lb[:2], "") + strings.Join(la[2:], "")
	_, err = importString(t, openDB(t), mixed)
	if !errors.Is(err, ErrInvalidLog) || !strings.Contains(err.Error(), "f.jsonl:9: invalid log: task ") ||
		!strings.Contains(err.Error(), "resumes after another task's lines") {
		t.Errorf("interleaved tasks: err = %v, want line 9 (the first event after the blob lines) refused", err)
	}
}

// checkRefused imports in into a new database and checks that the import fails with wantErr,
// mentioning inErr, and writes no task.
func checkRefused(t *testing.T, in string, wantErr error, inErr string) {
	t.Helper()
	db := openDB(t)
	_, err := importString(t, db, in)
	if !errors.Is(err, wantErr) || !strings.Contains(err.Error(), inErr) {
		t.Errorf("err = %v\nwant %v mentioning %q", err, wantErr, inErr)
	}
	if tasks, _ := db.Tasks(); len(tasks) != 0 {
		t.Errorf("a refused file wrote %d tasks", len(tasks))
	}
}

// An event id is stored once in a task: a file that gives one twice, on two of its lines or on
// a line after the events the database holds, is refused before anything is written, naming
// both lines (it used to fail in the second pass, after the batches before the line, and say
// that importing the file again would complete it). So is the zero id, which names no event.
func TestImportRefusesIDsNoStoreKeeps(t *testing.T) {
	const task = "0b3c7f2a-1d4e-4f5a-9b6c-7d8e9f0a1b2c"
	// messages is a hand-written task of n user messages, the id of message i being id(i)
	// (-1: the zero id).
	messages := func(n int, id func(i int) int) string {
		var b strings.Builder
		fmt.Fprintf(&b, `{"type":"task_started","task":%q,"id":"01JD%022d","time":"2026-11-02T09:00:00Z","data":{"roots":["/ws"]}}`+"\n", task, 0)
		for i := 1; i <= n; i++ {
			ulid := fmt.Sprintf("01JD%022d", id(i))
			if id(i) < 0 {
				ulid = strings.Repeat("0", 26)
			}
			fmt.Fprintf(&b, `{"id":%q,"time":"2026-11-02T09:00:01Z","type":"user_message","data":{"text":"message %d"}}`+"\n", ulid, i)
		}
		return b.String()
	}
	same := func(i int) int { return i }
	// but gives message at the id of message of.
	but := func(at, of int) func(int) int {
		return func(i int) int {
			if i == at {
				return of
			}
			return i
		}
	}
	for _, c := range []struct {
		name   string
		stored string // what the database holds before
		file   string
		want   string
		is     error
		held   uint64
	}{
		{"two lines of one batch", "", messages(20, but(17, 3)),
			"f.jsonl:18: invalid log: duplicate event id: id 01JD0000000000000000000003 is given twice in task " + task + ", here and on line 4",
			store.ErrDuplicateID, 0},
		{"a line three batches after the other", "", messages(2500, but(2200, 10)),
			"f.jsonl:2201: invalid log: duplicate event id: id 01JD0000000000000000000010 is given twice in task " + task + ", here and on line 11",
			store.ErrDuplicateID, 0},
		{"a new line with a stored event's id", messages(3, same), messages(4, but(4, 2)),
			"f.jsonl:5: invalid log: duplicate event id: id 01JD0000000000000000000002 is given twice in task " + task + ", here and on line 3",
			store.ErrDuplicateID, 4},
		{"the zero id, two batches in", "", messages(2500, but(1500, -1)),
			"f.jsonl:1501: invalid log: event has no id: its id is zero", store.ErrMissingID, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := openDB(t)
			if c.stored != "" {
				if _, err := importString(t, db, c.stored); err != nil {
					t.Fatal(err)
				}
			}
			_, err := importString(t, db, c.file)
			if !errors.Is(err, ErrInvalidLog) || !errors.Is(err, c.is) || err.Error() != c.want {
				t.Fatalf("err = %v\nwant   %s", err, c.want)
			}
			tasks, _ := db.Tasks()
			var held uint64
			if len(tasks) > 0 {
				held = tasks[0].Events
			}
			if held != c.held {
				t.Errorf("the database holds %d events, want %d: a refused file writes nothing", held, c.held)
			}
		})
	}
}

// No store keeps a task whose id is the nil UUID: a file that names it is refused before
// anything is written, the tasks before it in the file included.
func TestImportRefusesTheNilTask(t *testing.T) {
	file := `{"type":"task_started","task":"0b3c7f2a-1d4e-4f5a-9b6c-7d8e9f0a1b2c","data":{"roots":["/ws"]}}
{"type":"user_message","data":{"text":"a task"}}
{"type":"task_started","task":"00000000-0000-0000-0000-000000000000","data":{"roots":["/ws"]}}
`
	db := openDB(t)
	_, err := importString(t, db, file)
	if !errors.Is(err, ErrInvalidLog) || !errors.Is(err, store.ErrInvalidEvent) || !strings.HasPrefix(err.Error(), "f.jsonl:3: ") {
		t.Fatalf("err = %v, want line 3 refused", err)
	}
	if tasks, _ := db.Tasks(); len(tasks) != 0 {
		t.Errorf("the database holds %+v: a refused file writes nothing", tasks)
	}
}

// An exported line may space its data out (its hash covers the spaces): imported, the event
// keeps those bytes, and its export is the same line, which imports again into another
// database.
func TestImportExportKeepsSpacedData(t *testing.T) {
	exp := lines(exportedTask(t))
	first, err := events.ParseLine([]byte(strings.TrimSpace(exp[0])))
	if err != nil || first.Event.Type != events.TypeTaskStarted {
		t.Fatalf("the export's first line: %+v, %v", first, err)
	}
	ev := first.Event
	ev.Data = bytes.ReplaceAll(ev.Data, []byte(":"), []byte(": "))
	ev.Seal(ev.Prev)
	line, err := events.MarshalJSONLine(ev)
	if err != nil || !bytes.Contains(line, []byte(`"roots": [`)) {
		t.Fatalf("the spaced line: %s, %v", line, err)
	}
	file := string(line) + "\n"
	db := openDB(t)
	got, err := importString(t, db, file)
	if err != nil {
		t.Fatal(err)
	}
	out := exportOf(t, db, got)
	if !strings.HasPrefix(out, file) {
		t.Fatalf("the export does not begin with the imported line:\n%s\nwant\n%s", out, file)
	}
	if _, err := importString(t, openDB(t), out); err != nil {
		t.Errorf("the export does not import: %v", err)
	}
}
