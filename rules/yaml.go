package rules

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
)

var errYAMLLimits = errors.New("frontmatter exceeds the YAML limits")

// notMappingError is a block whose YAML is a value other than a mapping (a list, one value).
type notMappingError struct{ kind string }

func (e notMappingError) Error() string {
	return fmt.Sprintf("frontmatter is a %s, not a mapping of keys to values", e.kind)
}

// singleDocument reports whether the block holds one YAML document, as a reader that reads one
// (js-yaml's load) requires; yaml.v3 reads the first of several and leaves the rest.
func singleDocument(block string) bool {
	d := yaml.NewDecoder(strings.NewReader(block))
	var n yaml.Node
	if err := d.Decode(&n); err != nil {
		return true // an empty block, or one whose error the first parse reports
	}
	return errors.Is(d.Decode(&n), io.EOF)
}

// parseStrictYAML parses the block with yaml.v3 into a node tree and converts it itself, so
// that no tag can build an object and aliases are expanded within a budget.
func parseStrictYAML(block string, firstLine int) ([]Field, []Problem, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(block), &doc); err != nil {
		return nil, nil, err
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, nil, notMappingError{kindName(root.Kind)}
	}
	c := converter{budget: maxYAMLNodes, firstLine: firstLine}
	var fields []Field
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		val, err := c.convert(v, 1)
		if err != nil {
			return nil, c.problems, err
		}
		key := k.Value
		fields = append(fields, Field{Key: key, Value: val, Line: firstLine + k.Line - 1})
	}
	return fields, c.problems, nil
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "single value"
	case yaml.AliasNode:
		return "alias"
	}
	return "document"
}

type converter struct {
	budget    int
	firstLine int
	problems  []Problem
}

var standardTags = map[string]bool{"!!str": true, "!!int": true, "!!float": true, "!!bool": true,
	"!!null": true, "!!seq": true, "!!map": true, "!!timestamp": true, "!!binary": true, "!!merge": true, "!": true}

func (c *converter) convert(n *yaml.Node, depth int) (any, error) {
	if c.budget--; c.budget < 0 || depth > maxYAMLDepth {
		return nil, fmt.Errorf("%w (more than %d nodes after alias expansion, or deeper than %d)", errYAMLLimits, maxYAMLNodes, maxYAMLDepth)
	}
	if n.Tag != "" && !standardTags[n.Tag] {
		c.problems = append(c.problems, Problem{Line: c.firstLine + n.Line - 1, Severity: SeverityWarning, Code: DiagYAMLTag,
			Message: fmt.Sprintf("YAML tag %s is not supported; the value is read as plain text", n.Tag)})
		return n.Value, nil
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, nil
		}
		return c.convert(n.Alias, depth+1)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			v, err := c.convert(e, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := c.convert(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			out[n.Content[i].Value] = v
		}
		return out, nil
	case yaml.ScalarNode:
		return scalarValue(n), nil
	}
	return nil, nil
}

func scalarValue(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b
		}
	case "!!int":
		var i int
		if n.Decode(&i) == nil {
			return i
		}
	case "!!float":
		var f float64
		if n.Decode(&f) == nil {
			return f
		}
	}
	return n.Value
}

// parseLenient reads a block the way Cursor reads .mdc frontmatter: "key: value" lines with
// the value taken verbatim (so "globs: *.ts,*.tsx" is a string), "- item" lines under a key
// with an empty value, and comments. It gives up (ok=false) on anything else, so that YAML it
// does not understand still fails open.
func parseLenient(block string, firstLine int) ([]Field, bool) {
	var fields []Field
	listIdx := -1 // the field whose value "- item" lines extend
	for i, raw := range strings.Split(block, "\n") {
		line := strings.TrimRight(raw, " \t")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if strings.HasPrefix(trimmed, "- ") || trimmed == "-" {
			if listIdx < 0 {
				return nil, false
			}
			items, _ := fields[listIdx].Value.([]any)
			fields[listIdx].Value = append(items, lenientScalar(strings.TrimSpace(strings.TrimPrefix(trimmed, "-"))))
			continue
		}
		if line != trimmed { // indented, not a list item: nested YAML this reader does not read
			return nil, false
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || !isKey(k) {
			return nil, false
		}
		v = strings.TrimSpace(v)
		f := Field{Key: k, Line: firstLine + i}
		listIdx = -1
		switch {
		case v == "":
			listIdx = len(fields)
		case strings.HasPrefix(v, "["):
			items, ok := lenientFlowList(v)
			if !ok {
				return nil, false
			}
			f.Value = items
		default:
			f.Value = lenientScalar(v)
		}
		fields = append(fields, f)
	}
	return fields, true
}

// lenientFlowList reads "[a, "b", *.c]" without YAML's alias rules.
func lenientFlowList(v string) ([]any, bool) {
	if !strings.HasSuffix(v, "]") {
		return nil, false
	}
	inner := strings.TrimSpace(v[1 : len(v)-1])
	if inner == "" {
		return []any{}, true
	}
	var out []any
	for _, part := range splitTopLevel(inner, ',') {
		out = append(out, unquote(strings.TrimSpace(part)))
	}
	return out, true
}

func lenientScalar(v string) any {
	switch strings.ToLower(v) {
	case "true":
		return true
	case "false":
		return false
	case "null", "~":
		return nil
	}
	if i := strings.Index(v, " #"); i >= 0 && !strings.HasPrefix(v, `"`) && !strings.HasPrefix(v, `'`) {
		v = strings.TrimSpace(v[:i])
	}
	return unquote(v)
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}

// splitTopLevel splits s at sep outside {}, [] and quotes, so that "**/*.{ts,tsx}, *.md" is
// two patterns.
func splitTopLevel(s string, sep byte) []string {
	var out []string
	depthBrace, depthBracket := 0, 0
	var quote byte
	start := 0
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '\\':
			i++
		case ch == '"' || ch == '\'':
			if i == start || strings.TrimSpace(s[start:i]) == "" {
				quote = ch
			}
		case ch == '{':
			depthBrace++
		case ch == '}':
			if depthBrace > 0 {
				depthBrace--
			}
		case ch == '[':
			depthBracket++
		case ch == ']':
			if depthBracket > 0 {
				depthBracket--
			}
		case ch == sep && depthBrace == 0 && depthBracket == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
