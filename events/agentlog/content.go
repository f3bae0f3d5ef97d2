package agentlog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/tasklog/tasklog/events"
)

// omitted stands in for a large string left out of tool parameters.
type omitted struct {
	Omitted bool   `json:"omitted"`
	Bytes   int    `json:"bytes"`
	SHA256  string `json:"sha256"`
}

func omit(s string) omitted {
	sum := sha256.Sum256([]byte(s))
	return omitted{Omitted: true, Bytes: len(s), SHA256: hex.EncodeToString(sum[:])}
}

// compactParams turns a tool's parameters into a JSON object with every string longer than the
// inline limit replaced by its digest (unless opts.KeepContent). A value that is not an object is
// wrapped as {"value": v}; a missing one becomes {}.
func compactParams(v any, opts Options) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage("{}"), nil
	}
	if _, ok := v.(map[string]any); !ok {
		v = map[string]any{"value": v}
	}
	if !opts.KeepContent {
		v = shrink(v, opts.maxInline())
	}
	return marshal(v)
}

// compactRaw is compactParams for parameters still in JSON form.
func compactRaw(raw []byte, opts Options) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("{}"), nil
	}
	v, err := decodeAny(raw)
	if err != nil {
		return nil, err
	}
	return compactParams(v, opts)
}

func shrink(v any, limit int) any {
	switch x := v.(type) {
	case string:
		if len(x) > limit {
			return omit(x)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = shrink(e, limit)
		}
	case []any:
		for i, e := range x {
			x[i] = shrink(e, limit)
		}
	}
	return v
}

// decodeAny is events.DecodeJSON: numbers stay as written, so parameters re-encode unchanged.
func decodeAny(raw []byte) (any, error) { return events.DecodeJSON(raw) }

func marshal(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// str returns v as a string when it is one.
func str(v any) string {
	s, _ := v.(string)
	return s
}

// parseTime reads a record timestamp: an ISO 8601 string or a number of milliseconds since the
// epoch. The zero time when absent or unreadable, or outside what a log keeps (1677 to 2262).
func parseTime(v any) time.Time {
	if t := recordTime(v); events.KeepsTime(t) {
		return t
	}
	return time.Time{}
}

func recordTime(v any) time.Time {
	switch x := v.(type) {
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
			if t, err := time.Parse(layout, x); err == nil {
				return t.UTC()
			}
		}
	case json.Number:
		if n, err := x.Int64(); err == nil && n > 0 {
			return time.UnixMilli(n).UTC()
		}
		if f, err := x.Float64(); err == nil && f > 0 {
			return time.UnixMilli(int64(f)).UTC()
		}
	case float64:
		if x > 0 {
			return time.UnixMilli(int64(x)).UTC()
		}
	}
	return time.Time{}
}
