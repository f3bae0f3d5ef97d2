package agentlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

// lineImporter maps the records of one JSONL agent.
type lineImporter interface {
	// record handles the record v; kind and time of the record are set by kindOf.
	record(s *sink, v any) error
	// kindOf names the record for the report and gives its timestamp.
	kindOf(v any) (string, time.Time)
	// end emits what the importer still holds at the end of the file.
	end(s *sink) error
}

// importJSONL streams a JSONL session of agent from r.
func importJSONL(agent Agent, file string, r io.Reader, opts Options, emit func(Item) error) (Report, error) {
	s := newSink(agent, file, opts, emit)
	s.start.Runtime.Name = string(agent)
	var imp lineImporter
	switch agent {
	case ClaudeCode:
		imp = &claudeImporter{}
	case Pi:
		imp = &piImporter{}
	case Codex:
		imp = &codexImporter{}
	default:
		return s.t.report(), fmt.Errorf("%w %q", ErrUnknownAgent, agent)
	}
	lr := newLineReader(r)
	for n := 0; ; n++ {
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return s.t.report(), fmt.Errorf("%s: line %d: %w: %v", file, n+1, ErrFormat, err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			s.begin(n, "blank", time.Time{})
			s.finish()
			continue
		}
		v, err := decodeLine(line)
		if err != nil || obj(v) == nil {
			if n == 0 {
				return s.t.report(), fmt.Errorf("%s: record 0: %w: not a JSON object", file, ErrFormat)
			}
			// A torn last line is what a crash mid-write leaves; keep the rest.
			s.begin(n, "malformed", time.Time{})
			s.warn("not a JSON object, skipped")
			s.finish()
			continue
		}
		kind, when := imp.kindOf(v)
		s.begin(n, kind, when)
		if err := imp.record(s, v); err != nil {
			return s.t.report(), err
		}
		s.finish()
	}
	if s.t.records == 0 {
		return s.t.report(), fmt.Errorf("%s: %w: empty file", file, ErrFormat)
	}
	if err := imp.end(s); err != nil {
		return s.t.report(), err
	}
	return s.close()
}

// detectLine tells the agent from the first record of a JSONL file.
func detectLine(line []byte) (Agent, bool) {
	v, err := decodeLine(line)
	if err != nil {
		return "", false
	}
	switch t := gets(v, "type"); {
	case t == "session_meta" || (get(v, "payload") != nil && get(v, "timestamp") != nil && t != ""):
		return Codex, true
	case t == "session" || t == "title":
		return Pi, true
	case get(v, "sessionId") != nil || get(v, "parentUuid") != nil || t == "summary" ||
		t == "file-history-snapshot" || t == "queue-operation" ||
		((t == "user" || t == "assistant" || t == "system") && get(v, "message") != nil):
		return ClaudeCode, true
	case get(v, "id") != nil && get(v, "timestamp") != nil && t == "":
		return Codex, true // legacy rollout header
	}
	return "", false
}
