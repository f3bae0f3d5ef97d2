package payloadcodec

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the newest dictionary from testdata/train.jsonl")

// dictTypeOrder is the order in which buildDictionary lays out each type's samples: the rarer
// and larger first, the most frequent last, where zstd reaches them with the shortest offsets.
var dictTypeOrder = []string{
	"rules_snapshot", "decision", "delivery", "instructions_loaded", "settings_changed",
	"task_started", "agent_stopped", "user_message", "file_write", "tool_call",
}

// buildDictionary makes a dictionary's content from a JSON Lines log of recorded events (the
// export format; only "type" and "data" are read): for each type, up to perType distinct
// payloads of at most maxSample bytes, each type's name as the binary encoding of an event
// writes it, and the JSON keys every record has.
func buildDictionary(log []byte, perType, maxSample int) ([]byte, error) {
	samples := map[string][][]byte{}
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var l struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, err
		}
		if l.Type == "" || len(l.Data) > maxSample || len(samples[l.Type]) >= perType {
			continue
		}
		if !slices.ContainsFunc(samples[l.Type], func(s []byte) bool { return bytes.Equal(s, l.Data) }) {
			samples[l.Type] = append(samples[l.Type], l.Data)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var dict []byte
	for _, t := range dictTypeOrder {
		for _, s := range samples[t] {
			dict = append(dict, s...)
		}
	}
	for _, t := range dictTypeOrder {
		dict = binary.AppendUvarint(dict, uint64(len(t)))
		dict = append(dict, t...)
		dict = append(dict, 1)
	}
	return dict, nil
}

// TestDictionary checks the newest dictionary is what buildDictionary makes of
// testdata/train.jsonl, and with -update writes it so. A dictionary already released must
// never change: values written with it name it. A new one gets the next id, its own file and
// its own entry in Dictionaries.
func TestDictionary(t *testing.T) {
	log, err := os.ReadFile(filepath.Join("testdata", "train.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := buildDictionary(log, dictPerType, dictMaxSample)
	if err != nil {
		t.Fatal(err)
	}
	d := current()
	name := filepath.Join(dictFile(d.ID))
	if *update {
		if err := os.WriteFile(name, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(got, d.Content) {
		t.Errorf("%s is not what testdata/train.jsonl makes (%d bytes, want %d); go test ./store/payloadcodec -run TestDictionary -update writes it, but only before it is released", name, len(d.Content), len(got))
	}
}
