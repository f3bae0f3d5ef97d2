package fakemodel

import (
	"encoding/json"
	"fmt"
	"strings"
)

// textOf flattens a JSON content value to its text: a string is itself; an array joins its
// elements' texts with newlines; an object gives its "text", else its "content" or "output".
func textOf(raw json.RawMessage) string {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	case '[':
		var items []json.RawMessage
		_ = json.Unmarshal(raw, &items)
		var texts []string
		for _, it := range items {
			if t := textOf(it); t != "" {
				texts = append(texts, t)
			}
		}
		return strings.Join(texts, "\n")
	case '{':
		var o map[string]json.RawMessage
		_ = json.Unmarshal(raw, &o)
		for _, k := range []string{"text", "content", "output"} {
			if v, ok := o[k]; ok {
				return textOf(v)
			}
		}
	}
	return ""
}

// rawString is a JSON value that is kept as a string: a JSON string unquoted, anything else as
// its JSON text (tool arguments arrive both ways).
func rawString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

type namedTool struct {
	Name     string `json:"name"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
	Type string `json:"type"`
}

func toolNames(tools []namedTool) []string {
	var names []string
	for _, t := range tools {
		switch {
		case t.Name != "":
			names = append(names, t.Name)
		case t.Function.Name != "":
			names = append(names, t.Function.Name)
		case t.Type != "":
			names = append(names, t.Type)
		}
	}
	return names
}

// parseAnthropic reads a Messages request: system, then each message's blocks.
func parseAnthropic(body []byte) (parsed, error) {
	var req struct {
		Model    string          `json:"model"`
		Stream   bool            `json:"stream"`
		System   json.RawMessage `json:"system"`
		Tools    []namedTool     `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return parsed{}, fmt.Errorf("%w: %w", errNotObject, err)
	}
	p := parsed{stream: req.Stream, model: req.Model, tools: toolNames(req.Tools)}
	if t := textOf(req.System); t != "" {
		p.parts = append(p.parts, Part{Message: -1, Role: "system", Kind: "text", Text: t})
	}
	for i, m := range req.Messages {
		var blocks []struct {
			Type    string          `json:"type"`
			Text    string          `json:"text"`
			Input   json.RawMessage `json:"input"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			p.parts = append(p.parts, Part{Message: i, Role: m.Role, Kind: "text", Text: textOf(m.Content)})
			continue
		}
		called := false
		for _, b := range blocks {
			switch b.Type {
			case "tool_use":
				called = true
				p.parts = append(p.parts, Part{Message: i, Role: m.Role, Kind: "tool_call", Text: string(b.Input)})
			case "tool_result":
				p.parts = append(p.parts, Part{Message: i, Role: m.Role, Kind: "tool_result", Text: textOf(b.Content)})
			default:
				if b.Text != "" {
					p.parts = append(p.parts, Part{Message: i, Role: m.Role, Kind: "text", Text: b.Text})
				}
			}
		}
		if called && m.Role == "assistant" {
			p.turns++
		}
	}
	return p, nil
}

// parseResponses reads a Responses request: instructions, then each input item. A turn is a
// run of call items with no output between them (parallel calls make one turn).
func parseResponses(body []byte) (parsed, error) {
	var req struct {
		Model        string            `json:"model"`
		Stream       bool              `json:"stream"`
		Instructions json.RawMessage   `json:"instructions"`
		Tools        []namedTool       `json:"tools"`
		Input        []json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return parsed{}, fmt.Errorf("%w: %w", errNotObject, err)
	}
	p := parsed{stream: req.Stream, model: req.Model, tools: toolNames(req.Tools)}
	if t := textOf(req.Instructions); t != "" {
		p.parts = append(p.parts, Part{Message: -1, Role: "system", Kind: "text", Text: t})
	}
	prevCall := false
	for i, raw := range req.Input {
		var it struct {
			Type      string          `json:"type"`
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			Arguments json.RawMessage `json:"arguments"`
			Input     json.RawMessage `json:"input"`
			Action    json.RawMessage `json:"action"`
			Output    json.RawMessage `json:"output"`
		}
		if json.Unmarshal(raw, &it) != nil {
			continue
		}
		call := false
		switch it.Type {
		case "function_call":
			call = true
			p.parts = append(p.parts, Part{Message: i, Role: "assistant", Kind: "tool_call", Text: rawString(it.Arguments)})
		case "custom_tool_call":
			call = true
			p.parts = append(p.parts, Part{Message: i, Role: "assistant", Kind: "tool_call", Text: rawString(it.Input)})
		case "local_shell_call":
			call = true
			p.parts = append(p.parts, Part{Message: i, Role: "assistant", Kind: "tool_call", Text: string(it.Action)})
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
			p.parts = append(p.parts, Part{Message: i, Role: "tool", Kind: "tool_result", Text: textOf(it.Output)})
		case "message", "":
			if t := textOf(it.Content); t != "" {
				p.parts = append(p.parts, Part{Message: i, Role: it.Role, Kind: "text", Text: t})
			}
		}
		if call && !prevCall {
			p.turns++
		}
		prevCall = call
	}
	return p, nil
}

// parseChat reads a Chat Completions request: each message, its text and its tool calls.
func parseChat(body []byte) (parsed, error) {
	var req struct {
		Model    string      `json:"model"`
		Stream   bool        `json:"stream"`
		Tools    []namedTool `json:"tools"`
		Messages []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []struct {
				Function struct {
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return parsed{}, fmt.Errorf("%w: %w", errNotObject, err)
	}
	p := parsed{stream: req.Stream, model: req.Model, tools: toolNames(req.Tools)}
	for i, m := range req.Messages {
		kind := "text"
		if m.Role == "tool" {
			kind = "tool_result"
		}
		if t := textOf(m.Content); t != "" {
			p.parts = append(p.parts, Part{Message: i, Role: m.Role, Kind: kind, Text: t})
		}
		for _, c := range m.ToolCalls {
			p.parts = append(p.parts, Part{Message: i, Role: m.Role, Kind: "tool_call", Text: rawString(c.Function.Arguments)})
		}
		if len(m.ToolCalls) > 0 && m.Role == "assistant" {
			p.turns++
		}
	}
	return p, nil
}
