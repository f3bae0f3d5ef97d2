package session

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/events"
)

// signedExport records a short task and exports it signed with key.
func signedExport(t *testing.T, key ed25519.PrivateKey) []byte {
	t.Helper()
	plain := exportedTask(t)
	db := openDB(t)
	got, err := importString(t, db, string(plain))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := ExportSigned(context.Background(), db, got[0].Task, &buf, key); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), string(plain)) || strings.Count(buf.String()[len(plain):], "\n") != 1 {
		t.Fatalf("a signed export is not the export and one line after it:\n%s", buf.String())
	}
	return buf.Bytes()
}

func newKey(t *testing.T) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv
}

// recut rewrites an export as one without the key can: its first n events, the chain sealed
// again, a closing line that matches, and then the given signature line.
func recut(t *testing.T, export []byte, n int, sig string) string {
	t.Helper()
	var out []string
	var prev events.Hash
	var task events.Event
	for _, line := range lines(export) {
		l, err := events.ParseLine([]byte(strings.TrimSpace(line)))
		if err != nil {
			t.Fatal(err)
		}
		if l.Blob != nil {
			out = append(out, line)
		}
		if l.Event.Seq == 0 || int(l.Event.Seq) > n {
			continue
		}
		ev := l.Event
		ev.Seal(prev)
		prev, task = ev.Hash, ev
		b, _ := events.MarshalJSONLine(ev)
		out = append(out, string(b)+"\n")
	}
	end, _ := events.MarshalEndLine(events.End{Task: task.Task, Events: uint64(n), Last: prev})
	return strings.Join(out, "") + string(end) + "\n" + sig
}

// TestImportVerifiesTheSignature: with VerifyKey, only an export signed with that key, unchanged,
// imports; whatever else is refused with ErrSignature (or ErrInvalidLog for a signature line out
// of place) and writes nothing. Without a key, a consistent rewrite imports: the chain alone
// cannot tell.
func TestImportVerifiesTheSignature(t *testing.T) {
	pub, priv := newKey(t)
	otherPub, otherPriv := newKey(t)
	signed := signedExport(t, priv)
	ls := lines(signed)
	sigLine := ls[len(ls)-1]
	plain := strings.Join(ls[:len(ls)-1], "")
	cut := recut(t, signed, 3, sigLine)
	if _, err := importString(t, openDB(t), cut); err != nil {
		t.Fatalf("without a key a consistent rewrite imports, as it must (nothing can tell): %v", err)
	}
	tests := []struct {
		name    string
		in      string
		key     ed25519.PublicKey
		wantErr error
		inErr   string
	}{
		{"signed, right key", string(signed), pub, nil, ""},
		{"signed, another key", string(signed), otherPub, events.ErrSignature, "was signed by key " + events.KeyFingerprint(pub) + ", not by " + events.KeyFingerprint(otherPub)},
		{"re-signed by another key", recut(t, signed, 3, string(mustSig(t, signed, 3, otherPriv))), pub, events.ErrSignature, "was signed by key " + events.KeyFingerprint(otherPub)},
		{"cut, closing line recomputed", cut, pub, events.ErrSignature, "the export was changed after it was signed"},
		{"unsigned export", plain, pub, events.ErrSignature, "no signature line follows its closing line"},
		{"hand-written", allHandWritten(t, ls[:len(ls)-2]), pub, events.ErrSignature, "its lines do not end with a closing line and a signature line"},
		{"signature line out of place", strings.Join(ls[:len(ls)-2], "") + sigLine, pub, ErrInvalidLog, "a signature line that does not follow a closing line"},
		{"two exports, the second unsigned", string(signed) + string(exportedTask(t)), pub, events.ErrSignature, "no signature line follows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			got, err := Import(context.Background(), db, strings.NewReader(tt.in), "f.jsonl", ImportOptions{VerifyKey: tt.key})
			if tt.wantErr == nil {
				if err != nil || len(got) != 1 || !got[0].Verified {
					t.Fatalf("got %+v, %v; want one verified task", got, err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.inErr) {
				t.Errorf("err = %v\nwant %v mentioning %q", err, tt.wantErr, tt.inErr)
			}
			if tasks, _ := db.Tasks(); len(tasks) != 0 {
				t.Errorf("a refused file wrote %d tasks", len(tasks))
			}
		})
	}
}

// mustSig signs, with key, the closing line recut writes for the first n events of export.
func mustSig(t *testing.T, export []byte, n int, key ed25519.PrivateKey) []byte {
	t.Helper()
	ls := lines([]byte(recut(t, export, n, "")))
	l, err := events.ParseLine([]byte(strings.TrimSpace(ls[len(ls)-1])))
	if err != nil || l.End == nil {
		t.Fatalf("no closing line: %v", err)
	}
	sig, err := events.MarshalSignatureLine(*l.End, key)
	if err != nil {
		t.Fatal(err)
	}
	return append(sig, '\n')
}
