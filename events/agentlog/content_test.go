package agentlog

import (
	"encoding/json"
	"testing"
	"time"
)

// A record's time is read from an ISO 8601 string or milliseconds since 1970; one a log cannot
// keep (before 1677 or after 2262, which its encoding would bring back as another time) is no
// time, as an unreadable one is.
func TestParseTime(t *testing.T) {
	for _, c := range []struct {
		name string
		v    any
		want string
	}{
		{"RFC 3339", "2026-11-02T09:00:01.5Z", "2026-11-02T09:00:01.5Z"},
		{"without a zone", "2026-11-02T09:00:01", "2026-11-02T09:00:01Z"},
		{"milliseconds", json.Number("1762074001500"), "2025-11-02T09:00:01.5Z"},
		{"milliseconds as a float", 1762074001500.0, "2025-11-02T09:00:01.5Z"},
		{"unreadable", "yesterday", ""},
		{"after 2262", "2300-01-01T00:00:00Z", ""},
		{"milliseconds after 2262", json.Number("10000000000000"), ""},
		{"before 1677", "1600-01-01T00:00:00Z", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := parseTime(c.v)
			if s := got.Format(time.RFC3339Nano); got.IsZero() && c.want != "" || !got.IsZero() && s != c.want {
				t.Errorf("parseTime(%v) = %v, want %q", c.v, got, c.want)
			}
		})
	}
}
