package events

import (
	"encoding/json"
	"unicode/utf8"
)

// Decoder decodes payloads into memory it reuses, for a fold that keeps nothing of a payload
// but the strings it copies out: the payload Payload returns is valid only until the next call,
// and its byte slices (a tool call's Params) may alias the event's Data. The zero value is ready
// to use; a Decoder is not safe for concurrent use.
type Decoder struct {
	toolCall        ToolCall
	fileWrite       FileWrite
	userMessage     UserMessage
	mention         Mention
	tabSnapshot     TabSnapshot
	settingsChanged SettingsChanged
	ruleToggled     RuleToggled
	ruleTriggered   RuleTriggered
	// tools interns tool names, which a log repeats at every call; last is the last one read.
	tools map[string]string
	last  string
}

// maxInterned bounds Decoder.tools: a log with more distinct tool names allocates the others.
const maxInterned = 256

// Payload is Event.Payload, decoding the common types into the Decoder's memory: the same
// payload, or the same error.
func (d *Decoder) Payload(e Event) (Payload, error) { return e.payload(d) }

// intern returns b as a string, the same string for the same bytes while the table has room.
func (d *Decoder) intern(b []byte) string {
	if string(b) == d.last {
		return d.last
	}
	if s, ok := d.tools[string(b)]; ok {
		d.last = s
		return s
	}
	s := string(b)
	if d.tools == nil {
		d.tools = map[string]string{}
	}
	if len(d.tools) < maxInterned {
		d.tools[s] = s
		d.last = s
	}
	return s
}

// slot returns a zeroed payload of type T: the Decoder's, or a new one without a Decoder.
func slot[T any](d *Decoder, field func(*Decoder) *T) *T {
	if d == nil {
		return new(T)
	}
	p := field(d)
	var zero T
	*p = zero
	return p
}

// decodeFast decodes the payloads a log holds most of (tool calls, file writes, messages,
// mentions, tabs, the small settings events and decisions) without reflection, into d's memory
// when d is not nil (a decision never: see fastScanner.decision). It reads exactly what encoding/json reads into the same struct and returns ok false
// for anything it is not sure of: a key spelled otherwise than the field's tag (encoding/json
// also matches case-insensitively), a key given twice, a null or a value of another JSON kind,
// nesting deeper than maxFastDepth, anything after the value. The caller then decodes with
// decodeStrict, which gives the payload or the error it always gave. Without d, nothing of data
// is aliased. The payload still goes through validate.
func decodeFast(t Type, data []byte, d *Decoder) (Payload, bool) {
	s := fastScanner{b: data, d: d}
	var p Payload
	ok := false
	switch t {
	case TypeToolCall:
		v := slot(d, func(d *Decoder) *ToolCall { return &d.toolCall })
		p, ok = v, s.toolCall(v)
	case TypeFileWrite:
		v := slot(d, func(d *Decoder) *FileWrite { return &d.fileWrite })
		p, ok = v, s.object(func(k []byte) bool {
			return s.key(k, "path", 0) && s.str(&v.Path) || s.key(k, "op", 1) && s.str(&v.Op)
		})
	case TypeUserMessage:
		v := slot(d, func(d *Decoder) *UserMessage { return &d.userMessage })
		p, ok = v, s.object(func(k []byte) bool {
			return s.key(k, "text", 0) && s.str(&v.Text) || s.key(k, "guesses", 1) && s.guesses(&v.Guesses)
		})
	case TypeMention:
		v := slot(d, func(d *Decoder) *Mention { return &d.mention })
		p, ok = v, s.object(func(k []byte) bool {
			return s.key(k, "path", 0) && s.str(&v.Path) || s.key(k, "resolved", 1) && s.str(&v.Resolved)
		})
	case TypeTabSnapshot:
		v := slot(d, func(d *Decoder) *TabSnapshot { return &d.tabSnapshot })
		p, ok = v, s.object(func(k []byte) bool {
			return s.key(k, "open", 0) && s.strs(&v.Open) || s.key(k, "visible", 1) && s.strs(&v.Visible)
		})
	case TypeSettingsChanged:
		v := slot(d, func(d *Decoder) *SettingsChanged { return &d.settingsChanged })
		p, ok = v, s.object(func(k []byte) bool {
			return s.key(k, "mode", 0) && s.str(&v.Mode) || s.key(k, "provider", 1) && s.str(&v.Provider) ||
				s.key(k, "model", 2) && s.str(&v.Model) || s.key(k, "agent_version", 3) && s.str(&v.AgentVersion)
		})
	case TypeRuleToggled:
		v := slot(d, func(d *Decoder) *RuleToggled { return &d.ruleToggled })
		p, ok = v, s.object(func(k []byte) bool {
			return s.key(k, "rule", 0) && s.str(&v.Rule) || s.key(k, "enabled", 1) && s.boolean(&v.Enabled)
		})
	case TypeDecision:
		// A scanner of its own: the decision's readers are function values, which would move
		// this scanner to the heap for every payload.
		return decodeDecisionFast(data)
	case TypeRuleTriggered:
		v := slot(d, func(d *Decoder) *RuleTriggered { return &d.ruleTriggered })
		p, ok = v, s.object(func(k []byte) bool {
			return s.key(k, "rule", 0) && s.str(&v.Rule) || s.key(k, "name", 1) && s.str(&v.Name) ||
				s.key(k, "source", 2) && s.str(&v.Source) || s.key(k, "match", 3) && s.str(&v.Match)
		})
	}
	if !ok || !s.end() {
		return nil, false
	}
	return p, true
}

// decodeDecisionFast is decodeFast of a decision, always into fresh memory.
func decodeDecisionFast(data []byte) (Payload, bool) {
	s := fastScanner{b: data}
	v := new(Decision)
	if !s.decision(v, true) || !s.end() {
		return nil, false
	}
	return v, true
}

func (s *fastScanner) toolCall(v *ToolCall) bool {
	return s.object(func(k []byte) bool {
		switch string(k) { // a switch, for the type most events have: faster than a chain of six
		case "tool":
			return s.once(0) && s.toolName(&v.Tool)
		case "id":
			return s.once(1) && s.str(&v.ID)
		case "params":
			return s.once(2) && s.params(&v.Params)
		case "cwd":
			return s.once(3) && s.str(&v.Cwd)
		case "failed":
			return s.once(4) && s.boolean(&v.Failed)
		case "guesses":
			return s.once(5) && s.guesses(&v.Guesses)
		}
		return false
	})
}

// toolName is str, interning the name in the Decoder's table.
func (s *fastScanner) toolName(dst *string) bool {
	if s.d == nil {
		return s.str(dst)
	}
	tok, plain, ok := s.stringToken()
	if ok && plain {
		*dst = s.d.intern(tok[1 : len(tok)-1])
		return true
	}
	return ok && json.Unmarshal(tok, dst) == nil
}

// params reads a tool call's params, which must be an object; without a Decoder they are copied
// out of the data.
func (s *fastScanner) params(dst *json.RawMessage) bool {
	if s.peek() != '{' {
		return false
	}
	start := s.i
	if !s.value(0) {
		return false
	}
	*dst = s.b[start:s.i:s.i]
	if s.d == nil {
		*dst = append(json.RawMessage(nil), *dst...)
	}
	return true
}

// objects reads an array of objects into dst, each by member (called with the key and the
// element being read); like encoding/json, [] gives an empty, non-nil slice.
func objects[T any](s *fastScanner, dst *[]T, member func(s *fastScanner, v *T, key []byte) bool) bool {
	out := []T{}
	ok := s.array(func() bool {
		var zero T
		out = append(out, zero)
		v := &out[len(out)-1]
		seen := s.seen
		ok := s.object(func(k []byte) bool { return member(s, v, k) })
		s.seen = seen
		return ok
	})
	*dst = out
	return ok
}

// guesses reads an array of Guess objects; like encoding/json, [] gives an empty, non-nil slice.
// It reads with a copy of s, which objects moves to the heap (its reader is a function value),
// so that the scanner of every other payload stays on the stack.
func (s *fastScanner) guesses(out *[]Guess) bool {
	c := *s
	ok := objects(&c, out, func(s *fastScanner, g *Guess, k []byte) bool {
		return s.key(k, "path", 0) && s.str(&g.Path) || s.key(k, "confirmed", 1) && s.boolean(&g.Confirmed) ||
			s.key(k, "why", 2) && s.str(&g.Why)
	})
	*s = c
	return ok
}

// maxFastDepth bounds the nesting decodeFast follows; deeper values go to encoding/json.
const maxFastDepth = 64

// fastScanner reads one JSON value strictly (RFC 8259, as json.Valid does), conservatively:
// whatever it accepts json.Valid accepts, and it may refuse what it does not expect.
type fastScanner struct {
	b []byte
	i int
	d *Decoder // nil: copy everything out of b
	// seen marks the fields of the object being read, so a repeated key is refused.
	seen uint32
}

func (s *fastScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, or 0 at the end.
func (s *fastScanner) peek() byte {
	s.space()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *fastScanner) end() bool {
	s.space()
	return s.i == len(s.b)
}

// once marks field bit f as seen and reports whether it was not yet.
func (s *fastScanner) once(f uint) bool {
	if s.seen&(1<<f) != 0 {
		return false
	}
	s.seen |= 1 << f
	return true
}

// key reports whether k is the field name (bit f), seen for the first time: the scanner is then
// at its value, for the caller to read. Each type's fields are one chain of
// key(k, name, f) && read(&field), joined by ||.
func (s *fastScanner) key(k []byte, name string, f uint) bool {
	return string(k) == name && s.once(f)
}

// object reads an object, calling member for each key with the scanner at the value; member
// reads the value and returns false to refuse. Keys with escapes are refused.
func (s *fastScanner) object(member func(key []byte) bool) bool {
	if s.peek() != '{' {
		return false
	}
	s.i++
	s.seen = 0
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		if s.peek() != '"' {
			return false
		}
		start := s.i + 1
		plain, ok := s.skipString()
		if !ok || !plain {
			return false
		}
		key := s.b[start : s.i-1]
		if s.peek() != ':' {
			return false
		}
		s.i++
		s.space()
		if !member(key) {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// array reads an array, calling elem with the scanner at each element.
func (s *fastScanner) array(elem func() bool) bool {
	if s.peek() != '[' {
		return false
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		return true
	}
	for {
		s.space()
		if !elem() {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

// stringToken moves past a string at the next byte, returning it quoted and whether it needs no
// unquoting.
func (s *fastScanner) stringToken() (tok []byte, plain, ok bool) {
	if s.peek() != '"' {
		return nil, false, false
	}
	start := s.i
	plain, ok = s.skipString()
	return s.b[start:s.i], plain, ok
}

// str reads a string into dst.
func (s *fastScanner) str(dst *string) bool {
	tok, plain, ok := s.stringToken()
	if ok && plain {
		*dst = string(tok[1 : len(tok)-1])
		return true
	}
	// Escapes or invalid UTF-8: encoding/json's own unquoting, so the result is its result.
	return ok && json.Unmarshal(tok, dst) == nil
}

// strs reads an array of strings; [] gives an empty, non-nil slice, as encoding/json does.
func (s *fastScanner) strs(dst *[]string) bool {
	out := []string{}
	ok := s.array(func() bool {
		// Read in place: a string variable of its own would go to the heap at every element
		// (str's slow path hands it to encoding/json).
		out = append(out, "")
		return s.str(&out[len(out)-1])
	})
	*dst = out
	return ok
}

func (s *fastScanner) boolean(dst *bool) bool {
	switch {
	case s.literal("true"):
		*dst = true
	case s.literal("false"):
		*dst = false
	default:
		return false
	}
	return true
}

func (s *fastScanner) literal(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// skipString moves past the string at s.b[s.i] == '"', checking it. plain reports a string
// that needs no unquoting: no escape, valid UTF-8.
func (s *fastScanner) skipString() (plain, ok bool) {
	plain = true
	ascii := true
	start := s.i + 1
	for j := start; ; j++ {
		if j = plainUntil(s.b, j); j >= len(s.b) {
			break
		}
		c := s.b[j]
		switch {
		case c == '"':
			s.i = j + 1
			if !ascii && plain {
				plain = utf8.Valid(s.b[start:j])
			}
			return plain, true
		case c == '\\':
			plain = false
			if j+1 >= len(s.b) {
				return false, false
			}
			j++
			switch s.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(s.b) {
					return false, false
				}
				for _, h := range s.b[j+1 : j+5] {
					if !isHex(h) {
						return false, false
					}
				}
				j += 4
			default:
				return false, false
			}
		case c < 0x20:
			return false, false
		case c >= 0x80:
			ascii = false
		}
	}
	return false, false
}

// plainByte marks the bytes a string holds as they are: printable ASCII but '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// value moves past any JSON value, checking it.
func (s *fastScanner) value(depth int) bool {
	if depth > maxFastDepth {
		return false
	}
	switch c := s.peek(); {
	case c == '"':
		_, ok := s.skipString()
		return ok
	case c == '{':
		s.i++
		if s.peek() == '}' {
			s.i++
			return true
		}
		for {
			if s.peek() != '"' {
				return false
			}
			if _, ok := s.skipString(); !ok || s.peek() != ':' {
				return false
			}
			s.i++
			if !s.value(depth + 1) {
				return false
			}
			switch s.peek() {
			case ',':
				s.i++
			case '}':
				s.i++
				return true
			default:
				return false
			}
		}
	case c == '[':
		return s.array(func() bool { return s.value(depth + 1) })
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	}
	return false
}

// number moves past a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *fastScanner) number() bool {
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.digits() == 0:
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

func (s *fastScanner) digits() int {
	n := 0
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}
