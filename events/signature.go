package events

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrSignature is returned for an export whose signature line does not hold: made with another
// key, or over another closing line (the export was changed after it was signed).
var ErrSignature = errors.New("signature does not verify")

// Signature is the line that follows an export's closing line when the export was signed: an
// Ed25519 signature over the closing line, which names the task, counts its events and gives
// the hash of the last one, which chains to every event before it. So it covers every event of
// the export and, through the rules snapshots' SHA-256 sums, every rule file content.
type Signature struct {
	// Key is the SHA-256 fingerprint of the signing key, as ssh-keygen -l prints it
	// ("SHA256:" and the unpadded base64 of the digest of the key's SSH wire form).
	Key string
	// Sig is the 64-byte Ed25519 signature of SignedMessage(end).
	Sig []byte
}

// sigLine is the JSON form of Signature.
type sigLine struct {
	Sig []byte `json:"sig"`
	Key string `json:"key"`
}

// signatureContext starts every signed message, so that a signature made for an export cannot
// be passed off as one over anything else the same key signs.
const signatureContext = "tasklog export signature v1\n"

// SignedMessage is what the signature of an export covers: a fixed context line, then the
// closing line's canonical encoding.
func SignedMessage(e End) ([]byte, error) {
	line, err := MarshalEndLine(e)
	if err != nil {
		return nil, err
	}
	return append([]byte(signatureContext), line...), nil
}

// KeyFingerprint is an Ed25519 public key's SHA-256 fingerprint in the form ssh-keygen -l
// prints: SHA256:base64(sha256(string "ssh-ed25519" || string key)), without padding.
func KeyFingerprint(pub ed25519.PublicKey) string {
	const typ = "ssh-ed25519"
	wire := binary.BigEndian.AppendUint32(nil, uint32(len(typ)))
	wire = append(wire, typ...)
	wire = binary.BigEndian.AppendUint32(wire, uint32(len(pub)))
	wire = append(wire, pub...)
	sum := sha256.Sum256(wire)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// MarshalSignatureLine signs an export's closing line with key and encodes the signature line
// that follows it (without the newline).
func MarshalSignatureLine(e End, key ed25519.PrivateKey) ([]byte, error) {
	msg, err := SignedMessage(e)
	if err != nil {
		return nil, err
	}
	pub := key.Public().(ed25519.PublicKey)
	return marshalNoEscape(&sigLine{Sig: ed25519.Sign(key, msg), Key: KeyFingerprint(pub)})
}

func parseSignatureLine(raw []byte) (*Signature, error) {
	var sl sigLine
	if err := decodeStrict(raw, &sl); err != nil {
		return nil, fmt.Errorf("%w: signature line: %v", ErrInvalid, err)
	}
	if len(sl.Sig) != ed25519.SignatureSize {
		return nil, fmt.Errorf("%w: signature line: sig holds %d bytes, an Ed25519 signature %d", ErrInvalid, len(sl.Sig), ed25519.SignatureSize)
	}
	if sl.Key == "" {
		return nil, fmt.Errorf("%w: signature line: missing \"key\"", ErrInvalid)
	}
	return &Signature{Key: sl.Key, Sig: sl.Sig}, nil
}

// Verify checks that s is pub's signature of the closing line e.
func (s *Signature) Verify(e End, pub ed25519.PublicKey) error {
	if want := KeyFingerprint(pub); s.Key != want {
		return fmt.Errorf("%w: task %s was signed by key %s, not by %s, the key to verify with", ErrSignature, e.Task, s.Key, want)
	}
	msg, err := SignedMessage(e)
	if err != nil {
		return err
	}
	if !ed25519.Verify(pub, msg, s.Sig) {
		return fmt.Errorf("%w: task %s: the signature by %s is not of this closing line (%d events, last %s): the export was changed after it was signed",
			ErrSignature, e.Task, s.Key, e.Events, e.Last)
	}
	return nil
}
