package events

import (
	"strconv"
	"unicode/utf8"
)

// The decision is the largest payload a task writes, one per turn, and encoding it through
// reflection was a fifth of Decide. appendJSON writes the same bytes encoding/json does (with
// HTML escaping off, as every payload is encoded): the field order and omitempty rules of the
// struct tags, null for a nil slice. TestDecisionJSONMatchesEncodingJSON holds the two to the
// same output.

func (p *Decision) appendJSON(b []byte) []byte {
	b = append(b, `{"turn":`...)
	b = strconv.AppendInt(b, int64(p.Turn), 10)
	b = append(b, `,"snapshot":`...)
	b = strconv.AppendUint(b, p.Snapshot, 10)
	if p.Base != 0 {
		b = append(b, `,"base":`...)
		b = strconv.AppendUint(b, p.Base, 10)
	}
	b = appendField(b, "engine", p.Engine)
	b = appendOptional(b, "mode", p.Mode)
	b = appendOptional(b, "provider", p.Provider)
	b = appendOptional(b, "model", p.Model)
	b = appendOptional(b, "os", p.OS)
	b = append(b, `,"context":`...)
	b = appendSlice(b, p.Context, ContextPath.appendJSON)
	if len(p.Gone) > 0 {
		b = append(b, `,"gone":`...)
		b = appendSlice(b, p.Gone, PathRef.appendJSON)
	}
	if len(p.Dropped) > 0 {
		b = append(b, `,"dropped":`...)
		b = appendSlice(b, p.Dropped, Count.appendJSON)
	}
	b = append(b, `,"included":`...)
	b = appendSlice(b, p.Included, RuleOutcome.appendJSON)
	b = append(b, `,"excluded":`...)
	b = appendSlice(b, p.Excluded, RuleOutcome.appendJSON)
	if len(p.Removed) > 0 {
		b = append(b, `,"removed":`...)
		b = appendSlice(b, p.Removed, func(s string, b []byte) []byte { return appendJSONString(b, s) })
	}
	if len(p.Diagnostics) > 0 {
		b = append(b, `,"diagnostics":`...)
		b = appendSlice(b, p.Diagnostics, Diagnostic.appendJSON)
	}
	return append(b, '}')
}

func (c ContextPath) appendJSON(b []byte) []byte {
	b = append(b, `{"path":`...)
	b = appendJSONString(b, c.Path)
	b = appendOptional(b, "root", c.Root)
	b = append(b, `,"sources":`...)
	b = appendSlice(b, c.Sources, Source.appendJSON)
	return append(b, '}')
}

func (r PathRef) appendJSON(b []byte) []byte {
	b = append(b, `{"path":`...)
	b = appendJSONString(b, r.Path)
	b = appendOptional(b, "root", r.Root)
	return append(b, '}')
}

func (s Source) appendJSON(b []byte) []byte {
	b = append(b, `{"kind":`...)
	b = appendJSONString(b, s.Kind)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, s.Seq, 10)
	b = append(b, `,"turn":`...)
	b = strconv.AppendInt(b, int64(s.Turn), 10)
	b = appendOptional(b, "detail", s.Detail)
	return append(b, '}')
}

func (c Count) appendJSON(b []byte) []byte {
	b = append(b, `{"name":`...)
	b = appendJSONString(b, c.Name)
	b = append(b, `,"n":`...)
	b = strconv.AppendInt(b, int64(c.N), 10)
	return append(b, '}')
}

func (o RuleOutcome) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, o.ID)
	b = appendField(b, "name", o.Name)
	b = appendField(b, "category", o.Category)
	b = appendOptional(b, "source", o.Source)
	b = appendOptional(b, "path", o.Path)
	b = appendField(b, "reason", o.Reason)
	b = appendOptional(b, "detail", o.Detail)
	if len(o.Matches) > 0 {
		b = append(b, `,"matched":`...)
		b = appendSlice(b, o.Matches, Match.appendJSON)
	}
	b = appendOptional(b, "shadowed_by", o.ShadowedBy)
	return append(b, '}')
}

func (m Match) appendJSON(b []byte) []byte {
	b = append(b, `{"condition":`...)
	b = appendJSONString(b, m.Condition)
	b = appendOptional(b, "pattern", m.Pattern)
	b = appendOptional(b, "path", m.Path)
	b = appendOptional(b, "root", m.Root)
	return append(b, '}')
}

func (d Diagnostic) appendJSON(b []byte) []byte {
	b = append(b, '{')
	first := true
	sep := func() {
		if !first {
			b = append(b, ',')
		}
		first = false
	}
	for _, f := range [...]struct{ key, val string }{{"rule", d.Rule}, {"file", d.File}} {
		if f.val != "" {
			sep()
			b = appendJSONString(append(append(b, '"'), f.key+`":`...), f.val)
		}
	}
	if d.Line != 0 {
		sep()
		b = strconv.AppendInt(append(b, `"line":`...), int64(d.Line), 10)
	}
	for _, f := range [...]struct{ key, val string }{{"severity", d.Severity}, {"code", d.Code}} {
		if f.val != "" {
			sep()
			b = appendJSONString(append(append(b, '"'), f.key+`":`...), f.val)
		}
	}
	sep()
	b = appendJSONString(append(b, `"message":`...), d.Message)
	return append(b, '}')
}

// appendSlice writes a JSON array, or null for a nil slice as encoding/json does.
func appendSlice[T any](b []byte, s []T, elem func(T, []byte) []byte) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = elem(v, b)
	}
	return append(b, ']')
}

// appendField writes `,"key":"val"`; appendOptional writes it only for a non-empty val.
func appendField(b []byte, key, val string) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return appendJSONString(b, val)
}

func appendOptional(b []byte, key, val string) []byte {
	if val == "" {
		return b
	}
	return appendField(b, key, val)
}

// appendJSONString writes s as a JSON string the way encoding/json does without HTML escaping:
// control characters, quote and backslash escaped (\n, \r, \t, \b, \f by name), invalid UTF-8
// as \ufffd, and U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; ; {
		if i = plainUntil(s, i); i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
