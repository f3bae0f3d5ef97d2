package projections

import (
	"bytes"
	"encoding/json"
)

// toolParams are the top-level members of a tool call's parameters, each value left as raw JSON
// until a handler asks for it: most of a call's bytes are file contents no handler reads, and
// decoding them into a map was most of the cost of folding a tool call.
type toolParams []member

// member is one key and value of an object, both as raw JSON: the key is decoded only when it
// holds an escape, so looking a key up allocates nothing.
type member struct {
	key []byte // the key's string token, quotes included
	val []byte
}

// name is the member's key, decoded.
func (m member) name() string { return decodeString(m.key) }

// is reports whether the member's key is key.
func (m member) is(key string) bool {
	if bytes.IndexByte(m.key, '\\') < 0 {
		return string(m.key[1:len(m.key)-1]) == key
	}
	return decodeString(m.key) == key
}

// parseParams splits a JSON object into its members; ok is false for anything else.
func parseParams(b []byte) (toolParams, bool) {
	if !json.Valid(b) {
		return nil, false
	}
	return splitObject(nil, b)
}

// splitObject appends the members of b, which must be valid JSON, to p; ok is false when b is
// not an object.
func splitObject(p toolParams, b []byte) (toolParams, bool) {
	i := skipSpace(b, 0)
	if b[i] != '{' {
		return p, false
	}
	for i = skipSpace(b, i+1); b[i] != '}'; i = skipSpace(b, i) {
		if b[i] == ',' {
			i = skipSpace(b, i+1)
		}
		end := skipString(b, i)
		key := b[i:end]
		i = skipSpace(b, skipSpace(b, end)+1) // past ':'
		vend := skipValue(b, i)
		p = append(p, member{key: key, val: b[i:vend]})
		i = vend
	}
	return p, true
}

// raw returns a member's value; the last one wins, as with encoding/json.
func (p toolParams) raw(key string) []byte {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i].is(key) {
			return p[i].val
		}
	}
	return nil
}

// The scanners below run on input json.Valid accepted, so they need no bounds checks beyond it.

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for j := i + 1; ; j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
}

func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; ; j++ {
			switch b[j] {
			case '"':
				j = skipString(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
	}
	j := i
	for j < len(b) && bytes.IndexByte([]byte(",}] \t\n\r"), b[j]) < 0 {
		j++
	}
	return j
}

// decodeString decodes a JSON string token; without escapes it is the bytes between the quotes.
func decodeString(tok []byte) string {
	if bytes.IndexByte(tok, '\\') < 0 {
		return string(tok[1 : len(tok)-1])
	}
	var s string
	_ = json.Unmarshal(tok, &s)
	return s
}

// strOr is the first of keys holding a non-empty string.
func (p toolParams) strOr(keys ...string) string {
	for _, k := range keys {
		if s := p.str(k); s != "" {
			return s
		}
	}
	return ""
}

func (p toolParams) str(key string) string {
	if v := p.raw(key); len(v) > 0 && v[0] == '"' {
		return decodeString(v)
	}
	return ""
}

func (p toolParams) isArray(key string) bool {
	v := p.raw(key)
	return len(v) > 0 && v[0] == '['
}

// strs reads a string or an array of strings, skipping elements that are not strings.
func (p toolParams) strs(key string) []string {
	v := p.raw(key)
	if len(v) == 0 {
		return nil
	}
	switch v[0] {
	case '"':
		return []string{decodeString(v)}
	case '[':
		var out []string
		eachElement(v, func(e []byte) {
			if e[0] == '"' {
				out = append(out, decodeString(e))
			}
		})
		return out
	}
	return nil
}

// eachElement calls fn with each element of a valid JSON array.
func eachElement(arr []byte, fn func([]byte)) {
	for i := skipSpace(arr, 1); arr[i] != ']'; i = skipSpace(arr, i) {
		if arr[i] == ',' {
			i = skipSpace(arr, i+1)
		}
		end := skipValue(arr, i)
		fn(arr[i:end])
		i = end
	}
}
