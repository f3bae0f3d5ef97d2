package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/tasklog/tasklog/events"
)

// writeEd25519Key writes a new Ed25519 key pair as ssh-keygen -t ed25519 -N ” does: path in
// OpenSSH's private key format, path.pub in the authorized_keys form.
func writeEd25519Key(path string) (privErr, pubErr error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err, nil
	}
	block, err := ssh.MarshalPrivateKey(priv, "made in Go")
	if err != nil {
		return err, nil
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil, err
	}
	return os.WriteFile(path, pem.EncodeToMemory(block), 0o600), os.WriteFile(path+".pub", ssh.MarshalAuthorizedKey(sshPub), 0o644)
}

// resealExport rewrites an export without its signing key: the first n events (all for 0),
// old replaced by new in their data, the chain sealed again, a closing line that matches, and
// the original signature line after it.
func resealExport(export []byte, n int, old, new string) ([]byte, error) {
	var out []string
	var prev events.Hash
	var sig string
	count := uint64(0)
	var task events.Event
	for _, line := range strings.Split(strings.TrimSpace(string(export)), "\n") {
		l, err := events.ParseLine([]byte(line))
		if err != nil {
			return nil, err
		}
		switch {
		case l.Blob != nil:
			out = append(out, line)
			continue
		case l.Sig != nil:
			sig = line
			continue
		case l.End != nil:
			continue
		}
		if n > 0 && count == uint64(n) {
			continue
		}
		ev := l.Event
		ev.Data = []byte(strings.ReplaceAll(string(ev.Data), old, new))
		ev.Seal(prev)
		prev, task = ev.Hash, ev
		count++
		b, err := events.MarshalJSONLine(ev)
		if err != nil {
			return nil, err
		}
		out = append(out, string(b))
	}
	end, err := events.MarshalEndLine(events.End{Task: task.Task, Events: count, Last: prev})
	if err != nil {
		return nil, err
	}
	out = append(out, string(end))
	if sig == "" {
		return nil, fmt.Errorf("the export holds no signature line")
	}
	out = append(out, sig)
	return []byte(strings.Join(out, "\n") + "\n"), nil
}

// TestKeyFingerprintIsSSHs: the fingerprint replay prints for a key is the one ssh-keygen -l
// prints (as golang.org/x/crypto/ssh computes it).
func TestKeyFingerprintIsSSHs(t *testing.T) {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := events.KeyFingerprint(pub), ssh.FingerprintSHA256(sshPub); got != want {
		t.Errorf("KeyFingerprint = %s, ssh says %s", got, want)
	}
}
