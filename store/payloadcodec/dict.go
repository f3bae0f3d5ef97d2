package payloadcodec

import (
	_ "embed"
	"fmt"
)

// Dictionary is content that zstd starts a value compressed with it from, as if it had just
// been seen: the JSON keys and phrases events share, so that even a short record compresses.
// Its ID is written in every frame compressed with it.
type Dictionary struct {
	// ID is the dictionary's number, from 1; a frame without a dictionary says 0.
	ID uint32
	// Content is the dictionary's bytes.
	Content []byte
}

// dict1 is made from testdata/train.jsonl, the hook payloads that Claude Code, Codex and
// Cline sent while they worked on a small workspace (testdata/workspaces/monorepo), recorded
// by 'replay hook' and exported, with the workspace's path made /home/dev/shop:
// go test ./store/payloadcodec -run TestDictionary -update writes it.
//
//go:embed dict1.bin
var dict1 []byte

// How the dictionaries are made from their samples (see buildDictionary in the tests).
const (
	dictPerType   = 8
	dictMaxSample = 4 << 10
)

// Dictionaries are every dictionary this version reads, oldest first; values under entropyMin
// are written with the last one, larger ones without a dictionary (see newEncoder). Their IDs
// start at 1: a frame of ID 0 names no dictionary. A dictionary once released is never changed
// or removed: the values written with it name it.
var Dictionaries = []Dictionary{{ID: 1, Content: dict1}}

func current() *Dictionary {
	if len(Dictionaries) == 0 {
		return nil
	}
	return &Dictionaries[len(Dictionaries)-1]
}

func dictFile(id uint32) string { return fmt.Sprintf("dict%d.bin", id) }
