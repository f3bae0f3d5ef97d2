package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/session/replaytest"
	testsamples "github.com/tasklog/tasklog/session/replaytest/samples"
	"github.com/tasklog/tasklog/session/serve"
	"github.com/tasklog/tasklog/store"
)

var update = flag.Bool("update", false, "rewrite the recorded logs under testdata/logs")

func TestMain(m *testing.M) {
	testscript.Main(testenv.Private(m), map[string]func(){
		"replay": func() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI transcripts in testdata/script/*.txtar. $ROOT is the repository root.
func TestScripts(t *testing.T) {
	root := testenv.RepoRoot(t)
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("ROOT", root)
			dir, _ := testsamples.Find()
			env.Setenv("SAMPLES", dir)
			env.Setenv("TASKLOG_DB", filepath.Join(env.WorkDir, "tasklog.db"))
			// The user's data folder (install's records): never the real one, nor testscript's
			// /no-home, which root could create.
			env.Setenv("XDG_DATA_HOME", filepath.Join(env.WorkDir, ".data"))
			env.Setenv("UID", strconv.Itoa(os.Getuid()))
			env.Setenv("TASKLOG_MACHINE", testenv.Machine)
			env.Setenv("TASKLOG_USER", testenv.User)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// emptydb FILE creates a tasklog database without tasks.
			"emptydb": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: emptydb FILE")
				}
				db, err := store.Open(ts.MkAbs(args[0]), &store.Options{NoSync: true})
				ts.Check(err)
				ts.Check(db.Close())
			},
			// expand IN OUT writes IN with $VAR and ${VAR} replaced by the script's variables:
			// a captured hook payload moved into the script's folders.
			"expand": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 2 {
					ts.Fatalf("usage: expand IN OUT")
				}
				ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(os.Expand(ts.ReadFile(args[0]), ts.Getenv)), 0o644))
			},
			// serverup DB waits until a server of the database DB answers on its socket.
			"serverup": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: serverup DB")
				}
				c, err := testenv.DialWhenUp(serve.SocketPath(ts.MkAbs(args[0])))
				ts.Check(err)
				ts.Check(c.Close())
			},
			// holddb FILE opens a tasklog database and holds it, as another process would, until
			// the script ends.
			"holddb": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: holddb FILE")
				}
				db, err := store.Open(ts.MkAbs(args[0]), &store.Options{NoSync: true})
				ts.Check(err)
				ts.Defer(func() { db.Close() })
			},
			// edkey NAME writes an Ed25519 key pair made in Go: NAME in OpenSSH's private key
			// format, NAME.pub in the authorized_keys form, as ssh-keygen -t ed25519 does.
			"edkey": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: edkey NAME")
				}
				priv, pub := writeEd25519Key(ts.MkAbs(args[0]))
				ts.Check(priv)
				ts.Check(pub)
			},
			// reseal IN OUT N OLD NEW rewrites an export as someone without the signing key
			// can: keeps its first N events (all for 0), replaces OLD by NEW in their data,
			// re-seals the hash chain, writes a closing line that matches, and keeps the
			// original signature line.
			"reseal": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 5 {
					ts.Fatalf("usage: reseal IN OUT N OLD NEW")
				}
				n, err := strconv.Atoi(args[2])
				ts.Check(err)
				out, err := resealExport([]byte(ts.ReadFile(args[0])), n, args[3], args[4])
				ts.Check(err)
				ts.Check(os.WriteFile(ts.MkAbs(args[1]), out, 0o644))
			},
		},
		// [samples] holds when the real samples are there; a script needing them starts with
		// [!samples] skip.
		Condition: func(cond string) (bool, error) {
			if cond != "samples" {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			_, ok := testsamples.Find()
			return ok, nil
		},
	})
}

// TestRecordedLogs records every fixture session with a fixed clock and seeded ids and compares
// the export with testdata/logs/NAME.jsonl: recording is deterministic, and the stored logs are
// what today's code records (go test ./cmd/replay -update rewrites them; review the diff).
func TestRecordedLogs(t *testing.T) {
	root := testenv.RepoRoot(t)
	data := filepath.Join(root, "testdata")
	scripts, _ := filepath.Glob(filepath.Join(data, "sessions", "*.jsonl"))
	if len(scripts) < 6 {
		t.Fatalf("want at least six fixture sessions, found %d", len(scripts))
	}
	for _, script := range scripts {
		name := strings.TrimSuffix(filepath.Base(script), ".jsonl")
		t.Run(name, func(t *testing.T) {
			got := recordFixture(t, data, script, name)
			want := filepath.Join(data, "logs", name+".jsonl")
			if *update {
				if err := os.WriteFile(want, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(want)
			if err != nil {
				t.Fatalf("%v (run go test ./cmd/replay -update)", err)
			}
			if !bytes.Equal(b, got) {
				t.Errorf("recording %s differs from %s (go test ./cmd/replay -update rewrites it; review the diff)", script, want)
			}
		})
	}
}

func recordFixture(t *testing.T, data, script, name string) []byte {
	db, err := store.Open(filepath.Join(t.TempDir(), "t.db"), &store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ids := events.NewIDSource(rand.New(rand.NewSource(int64(len(name)))))
	s, _, err := recordScript(db, script, fixtureWorkspace(data, name), ids)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := session.Export(context.Background(), db, s.Task(), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestRecordedLogsReplay is the regression test a runtime writes: every recorded log replays.
func TestRecordedLogsReplay(t *testing.T) {
	replaytest.Dir(t, filepath.Join(testenv.RepoRoot(t), "testdata", "logs"))
}

// TestBrokenLogs asserts the exact first line a person reads for each deliberately broken log.
func TestBrokenLogs(t *testing.T) {
	dir := filepath.Join(testenv.RepoRoot(t), "testdata", "logs")
	if *update {
		writeBrokenLogs(t, dir)
	}
	tests := []struct{ file, want string }{
		{"bad-tampered.jsonl", "bad-tampered.jsonl:8: hash chain broken: seq 5: hash"},
		{"bad-truncated.jsonl", "bad-truncated.jsonl:16: invalid event: unexpected EOF"},
		{"bad-gap.jsonl", "bad-gap.jsonl:7: hash chain broken: seq 5 where 4 was expected (a line is missing or out of order)"},
		{"bad-drift.jsonl", "bad-drift.jsonl: decision differs from the recorded one: turn 1: rule frontend was excluded (no_match), now included"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			err := replaytest.File(filepath.Join(dir, tt.file))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error = %v\nwant it to start with %q", err, tt.want)
			}
		})
	}
}

// writeBrokenLogs derives the broken logs from the monorepo recording: one event line altered,
// the last line cut short, one event line removed, and a decision rewritten (and the chain
// re-sealed after it) so that it no longer matches what the engine computes.
func writeBrokenLogs(t *testing.T, dir string) {
	good, err := os.ReadFile(filepath.Join(dir, "monorepo.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(good), "\n"), "\n")
	write := func(name string, ls []string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(ls, "")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tampered := append([]string(nil), lines...)
	tampered[7] = strings.Replace(tampered[7], "apps/web/src/App.tsx", "apps/web/src/Ap.tsx", 1)
	write("bad-tampered.jsonl", tampered)
	// A log cut short ends inside its last event, before the closing line an export ends with.
	last := len(lines) - 1
	if strings.HasPrefix(lines[last], `{"end":`) {
		last--
	}
	write("bad-truncated.jsonl", append(append([]string(nil), lines[:last]...), lines[last][:len(lines[last])/2]))
	write("bad-gap.jsonl", append(append([]string(nil), lines[:6]...), lines[7:]...))

	var out []string
	var prev events.Hash
	for _, line := range lines {
		l, err := events.ParseLine([]byte(strings.TrimSpace(line)))
		if err != nil {
			t.Fatal(err)
		}
		if l.Blob != nil {
			out = append(out, line)
			continue
		}
		if l.End != nil {
			continue // it names the exported chain's last hash; an edited log has no closing line
		}
		ev := l.Event
		if ev.Type == events.TypeDecision && ev.Turn == 1 {
			p, _ := ev.Payload()
			d := p.(*events.Decision)
			var kept []events.RuleOutcome
			for _, o := range d.Included {
				if o.Name == "frontend" {
					o.Reason, o.Detail, o.Matches = "no_match", "edited by hand", nil
					d.Excluded = append(d.Excluded, o)
					continue
				}
				kept = append(kept, o)
			}
			d.Included = kept
			alt, err := events.New(d)
			if err != nil {
				t.Fatal(err)
			}
			ev.Data = alt.Data
		}
		ev.Seal(prev)
		prev = ev.Hash
		b, err := events.MarshalJSONLine(ev)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b)+"\n")
	}
	write("bad-drift.jsonl", out)
}
