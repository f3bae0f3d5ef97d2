package natsstore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// A log exported from bbolt, imported into JetStream, exported from there and imported into a
// new bbolt file exports to the same bytes each time: both stores keep the same chain.
func TestExportImportRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "logs", "[a-z]*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t)
	ctx := context.Background()
	n := 0
	for _, file := range files {
		base := filepath.Base(file)
		if bytes.HasPrefix([]byte(base), []byte("bad-")) || base == "malformed.jsonl" {
			continue // logs made to be refused
		}
		n++
		t.Run(base, func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			first := openBolt(t)
			imported, err := session.Import(ctx, first, bytes.NewReader(src), base, session.ImportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			export := func(s store.Store) []byte {
				t.Helper()
				var buf bytes.Buffer
				for _, im := range imported {
					if err := session.Export(ctx, s, im.Task, &buf); err != nil {
						t.Fatalf("export from %s: %v", s.Path(), err)
					}
				}
				return buf.Bytes()
			}
			fromBolt := export(first)

			var fromNATS []byte
			for _, layout := range layouts {
				ns := openStore(t, srv, &Options{layout: layout})
				if _, err := session.Import(ctx, ns, bytes.NewReader(fromBolt), base, session.ImportOptions{}); err != nil {
					t.Fatal(err)
				}
				fromNATS = export(ns)
				if !bytes.Equal(fromNATS, fromBolt) {
					t.Fatalf("the export from JetStream (layout %d) differs from the export from bbolt:\n%s\nvs\n%s", layout, fromNATS, fromBolt)
				}
				for _, im := range imported {
					if err := ns.Verify(ctx, im.Task); err != nil {
						t.Fatal(err)
					}
				}
			}

			second := openBolt(t)
			if _, err := session.Import(ctx, second, bytes.NewReader(fromNATS), base, session.ImportOptions{}); err != nil {
				t.Fatal(err)
			}
			if again := export(second); !bytes.Equal(again, fromBolt) {
				t.Fatalf("bbolt → JetStream → bbolt changed the export")
			}
		})
	}
	if n == 0 {
		t.Fatal("no logs under testdata/logs")
	}
}

func openBolt(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "tasks.db"), &store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
