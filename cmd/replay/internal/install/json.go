package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The agents' configuration files are JSON documents their owners edit by hand. Install and
// uninstall change only their own entries, so a document is read into a tree that keeps every
// key in the order it was written (and every number as it was spelled) and written back the same
// way: a document already laid out as the agents write theirs (JSON.stringify with an indent)
// comes back byte for byte apart from what was changed.

// object is a JSON object whose members keep their order.
type object struct {
	members []member
}

type member struct {
	key   string
	value any // *object, []any, string, json.Number, bool or nil
}

// newObject builds an object from key, value pairs.
func newObject(kv ...any) *object {
	o := &object{}
	for i := 0; i+1 < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}

// get returns the value of key (the last one when a key is repeated, as JavaScript reads it).
func (o *object) get(key string) (any, bool) {
	for i := len(o.members) - 1; i >= 0; i-- {
		if o.members[i].key == key {
			return o.members[i].value, true
		}
	}
	return nil, false
}

// set replaces the value of key where it stands, or appends the key.
func (o *object) set(key string, v any) {
	for i := len(o.members) - 1; i >= 0; i-- {
		if o.members[i].key == key {
			o.members[i].value = v
			return
		}
	}
	o.members = append(o.members, member{key, v})
}

// del removes every member named key.
func (o *object) del(key string) {
	kept := o.members[:0]
	for _, m := range o.members {
		if m.key != key {
			kept = append(kept, m)
		}
	}
	o.members = kept
}

func (o *object) len() int { return len(o.members) }

// errMalformed marks a configuration file that is not the JSON its agent reads.
var errMalformed = errors.New("not valid JSON")

// parseDocument reads a JSON document whose top level must be an object. An empty (or blank)
// document is an empty object.
func parseDocument(data []byte) (*object, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return &object{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errMalformed, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: more than one value", errMalformed)
	}
	o, ok := v.(*object)
	if !ok {
		return nil, fmt.Errorf("%w: the top level is %s, not an object", errMalformed, jsonKind(v))
	}
	return o, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.members = append(o.members, member{k.(string), v})
			}
			_, err := dec.Token() // '}'
			return o, err
		case '[':
			a := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := dec.Token() // ']'
			return a, err
		}
		return nil, fmt.Errorf("unexpected %q", t)
	default:
		return t, nil // string, json.Number, bool, nil
	}
}

// layout is how a document is written: its indent unit and whether it ends with a newline.
type layout struct {
	indent  string
	newline bool
}

// defaultLayout is the agents' own: two spaces, and a final newline.
var defaultLayout = layout{indent: "  ", newline: true}

// layoutOf keeps an existing document's indent unit (the leading white space of its first
// indented line) and its final newline, so rewriting it changes only what was edited.
func layoutOf(data []byte) layout {
	if len(bytes.TrimSpace(data)) == 0 {
		return defaultLayout
	}
	l := layout{indent: defaultLayout.indent, newline: bytes.HasSuffix(data, []byte("\n"))}
	for _, line := range strings.Split(string(data), "\n")[1:] {
		ws := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
		if ws != "" && strings.TrimSpace(line) != "" {
			l.indent = ws
			break
		}
	}
	return l
}

// encodeDocument writes a document in the given layout.
func encodeDocument(o *object, l layout) []byte {
	var b bytes.Buffer
	encodeValue(&b, o, "", l.indent)
	if l.newline {
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func encodeValue(b *bytes.Buffer, v any, prefix, indent string) {
	switch t := v.(type) {
	case *object:
		if t.len() == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, m := range t.members {
			b.WriteString(prefix + indent)
			encodeString(b, m.key)
			b.WriteString(": ")
			encodeValue(b, m.value, prefix+indent, indent)
			if i < len(t.members)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(prefix + "}")
	case []any:
		if len(t) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, e := range t {
			b.WriteString(prefix + indent)
			encodeValue(b, e, prefix+indent, indent)
			if i < len(t)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(prefix + "]")
	case string:
		encodeString(b, t)
	case json.Number:
		b.WriteString(t.String())
	case int:
		fmt.Fprint(b, t)
	case bool:
		fmt.Fprint(b, t)
	case nil:
		b.WriteString("null")
	default:
		panic(fmt.Sprintf("encodeValue: unexpected %T", v))
	}
}

// encodeString writes s as JSON does, without escaping <, > and & (the agents do not).
func encodeString(b *bytes.Buffer, s string) {
	var sb bytes.Buffer
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b.Write(bytes.TrimSuffix(sb.Bytes(), []byte("\n")))
}

// jsonKind names the kind of a decoded value for error messages.
func jsonKind(v any) string {
	switch v.(type) {
	case *object:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number, int:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// equalJSON reports whether two trees are the same document, key order included.
func equalJSON(a, b any) bool {
	var x, y bytes.Buffer
	encodeValue(&x, a, "", " ")
	encodeValue(&y, b, "", " ")
	return bytes.Equal(x.Bytes(), y.Bytes())
}

// mergeJSONTargets makes one target of the JSON targets that change the same file (Gemini CLI
// and Qwen Code keep their hooks and MCP servers in one settings.json), so that each change is planned on
// top of the other's, in order.
func mergeJSONTargets(targets []target) []target {
	var out []target
	at := map[string]int{} // path → index in out of its jsonTarget
	for _, t := range targets {
		jt, ok := t.(jsonTarget)
		if !ok {
			out = append(out, t)
			continue
		}
		i, seen := at[jt.path]
		if !seen {
			at[jt.path] = len(out)
			out = append(out, jt)
			continue
		}
		first := out[i].(jsonTarget)
		first.edit = jsonEdits{first.edit, jt.edit}
		out[i] = first
	}
	return out
}

// jsonEdits are edits of one document, made in order; the document is bare when it is bare
// for every one of them.
type jsonEdits []jsonEdit

func (es jsonEdits) install(root *object) ([]string, error) {
	var lines []string
	for _, e := range es {
		l, err := e.install(root)
		if err != nil {
			return nil, err
		}
		lines = append(lines, l...)
	}
	return lines, nil
}

func (es jsonEdits) uninstall(root *object) ([]string, error) {
	var lines []string
	for _, e := range es {
		l, err := e.uninstall(root)
		if err != nil {
			return nil, err
		}
		lines = append(lines, l...)
	}
	return lines, nil
}

func (es jsonEdits) bare(root *object) bool {
	for _, e := range es {
		if !e.bare(root) {
			return false
		}
	}
	return true
}
