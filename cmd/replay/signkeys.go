package main

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"

	"golang.org/x/crypto/ssh"
)

// readSigningKey reads the Ed25519 private key of 'replay export --sign' from an OpenSSH key
// file, as 'ssh-keygen -t ed25519' writes it.
func readSigningKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the signing key: %w", err)
	}
	raw, err := ssh.ParseRawPrivateKey(b)
	var missing *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &missing):
		return nil, fmt.Errorf("signing key %s is protected by a passphrase, which replay does not ask for: "+
			"sign with a key of its own, made with 'ssh-keygen -t ed25519 -N \"\" -f %s'", path, path)
	case err != nil:
		if _, _, _, _, perr := ssh.ParseAuthorizedKey(b); perr == nil {
			return nil, fmt.Errorf("signing key %s is a public key: --sign takes the private key (the file without .pub)", path)
		}
		return nil, fmt.Errorf("signing key %s: %w; --sign takes an OpenSSH private key, as 'ssh-keygen -t ed25519' writes", path, err)
	}
	switch k := raw.(type) {
	case *ed25519.PrivateKey:
		return *k, nil
	case ed25519.PrivateKey:
		return k, nil
	}
	typ := fmt.Sprintf("%T", raw)
	if signer, err := ssh.NewSignerFromKey(raw); err == nil {
		typ = signer.PublicKey().Type()
	}
	return nil, fmt.Errorf("signing key %s is an %s key: --sign takes an Ed25519 key (ssh-keygen -t ed25519)", path, typ)
}

// readVerifyKey reads the Ed25519 public key of 'replay import --verify-key' from a file in
// the authorized_keys form ('ssh-ed25519 AAAA… comment'), as ssh-keygen writes KEY.pub.
func readVerifyKey(path string) (ed25519.PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the key to verify with: %w", err)
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(b)
	if err != nil {
		if _, perr := ssh.ParseRawPrivateKey(b); perr == nil || errors.As(perr, new(*ssh.PassphraseMissingError)) {
			return nil, fmt.Errorf("key %s is a private key: --verify-key takes the public key (KEY.pub); keep the private key with the one who signs", path)
		}
		return nil, fmt.Errorf("key %s: %w; --verify-key takes a public key as ssh-keygen writes it (ssh-ed25519 AAAA…)", path, err)
	}
	if pub.Type() != ssh.KeyAlgoED25519 {
		return nil, fmt.Errorf("key %s is an %s key: --verify-key takes an Ed25519 key (ssh-keygen -t ed25519)", path, pub.Type())
	}
	k, ok := pub.(ssh.CryptoPublicKey).CryptoPublicKey().(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("key %s: not an Ed25519 public key", path)
	}
	return k, nil
}
