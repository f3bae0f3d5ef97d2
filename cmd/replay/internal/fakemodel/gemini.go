package fakemodel

// Gemini's REST API (Gemini CLI): POST /v1beta/models/MODEL:generateContent answers one JSON
// object; :streamGenerateContent answers server-sent events with ?alt=sse and a JSON array of
// the same chunks without; :countTokens answers a token count; GET /v1beta/models lists models.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Gemini is Gemini's REST API: POST /v1beta/models/MODEL:streamGenerateContent (Gemini CLI).
const Gemini API = "gemini"

// geminiMethod splits a Gemini REST path, .../models/MODEL:METHOD, into the model and the
// method; ok is false for any other path.
func geminiMethod(path string) (model, method string, ok bool) {
	i := strings.LastIndex(path, "/models/")
	if i < 0 {
		return "", "", false
	}
	model, method, ok = strings.Cut(path[i+len("/models/"):], ":")
	return model, method, ok && model != "" && !strings.Contains(model, "/")
}

// serveGemini answers the Gemini REST routes and reports whether path was one of them.
func (s *Server) serveGemini(w http.ResponseWriter, r *http.Request, req Request) bool {
	path := strings.TrimSuffix(r.URL.Path, "/")
	if r.Method == http.MethodGet && strings.HasSuffix(path, "/models") {
		s.record(req)
		writeJSON(w, obj{"models": []any{obj{"name": "models/gemini-2.5-flash", "displayName": "fake",
			"supportedGenerationMethods": []any{"generateContent", "streamGenerateContent", "countTokens"}}}})
		return true
	}
	model, method, ok := geminiMethod(path)
	if !ok || r.Method != http.MethodPost {
		return false
	}
	switch method {
	case "countTokens":
		s.record(req)
		writeJSON(w, obj{"totalTokens": len(req.Body)/4 + 1})
	case "generateContent", "streamGenerateContent":
		stream := method == "streamGenerateContent"
		sseWanted := r.URL.Query().Get("alt") == "sse"
		s.model(w, req, Gemini, func(body []byte) (parsed, error) {
			p, err := parseGemini(body)
			p.model, p.stream = model, stream
			p.sse = stream && sseWanted
			return p, err
		})
	default:
		return false
	}
	return true
}

// gemini answers a generateContent request: one candidate with a functionCall part or a text
// part. Streaming, it is one chunk, as server-sent events when the client asked for alt=sse and
// as a JSON array of chunks when not.
func (a answer) gemini(w http.ResponseWriter, stream, sseWanted bool) {
	part := obj{"text": a.Text}
	if a.Tool != "" {
		part = obj{"functionCall": obj{"name": a.Tool, "args": a.args()}}
	}
	chunk := obj{
		"candidates": []any{obj{"content": obj{"role": "model", "parts": []any{part}},
			"finishReason": "STOP", "index": 0}},
		"usageMetadata": obj{"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120},
		"modelVersion":  a.model,
		"responseId":    fmt.Sprintf("resp_fake_%d", a.n),
	}
	switch {
	case !stream:
		writeJSON(w, chunk)
	case sseWanted:
		startSSE(w).event("", chunk)
	default:
		writeJSON(w, []any{chunk})
	}
}

// parseGemini reads a generateContent request: systemInstruction, then each content's parts.
// The role "model" is reported as assistant; a functionResponse part is a tool_result of its
// content's role (user). A turn is a model content with a function call.
func parseGemini(body []byte) (parsed, error) {
	var req struct {
		SystemInstruction json.RawMessage `json:"systemInstruction"`
		Tools             []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text         *string         `json:"text"`
				Thought      bool            `json:"thought"`
				FunctionCall json.RawMessage `json:"functionCall"`
				FunctionResp json.RawMessage `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return parsed{}, fmt.Errorf("%w: %w", errNotObject, err)
	}
	var p parsed
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			p.tools = append(p.tools, f.Name)
		}
	}
	if t := geminiSystemText(req.SystemInstruction); t != "" {
		p.parts = append(p.parts, Part{Message: -1, Role: "system", Kind: "text", Text: t})
	}
	for i, c := range req.Contents {
		role := c.Role
		if role == "model" {
			role = "assistant"
		}
		called := false
		for _, pt := range c.Parts {
			switch {
			case len(pt.FunctionCall) > 0:
				called = true
				var fc struct {
					Args json.RawMessage `json:"args"`
				}
				_ = json.Unmarshal(pt.FunctionCall, &fc)
				p.parts = append(p.parts, Part{Message: i, Role: role, Kind: "tool_call", Text: string(fc.Args)})
			case len(pt.FunctionResp) > 0:
				var fr struct {
					Response struct {
						Output json.RawMessage `json:"output"`
						Error  json.RawMessage `json:"error"`
					} `json:"response"`
				}
				_ = json.Unmarshal(pt.FunctionResp, &fr)
				text := textOf(fr.Response.Output)
				if len(fr.Response.Output) == 0 {
					text = textOf(fr.Response.Error)
				}
				p.parts = append(p.parts, Part{Message: i, Role: role, Kind: "tool_result", Text: text})
			case pt.Text != nil && *pt.Text != "" && !pt.Thought:
				p.parts = append(p.parts, Part{Message: i, Role: role, Kind: "text", Text: *pt.Text})
			}
		}
		if called && c.Role == "model" {
			p.turns++
		}
	}
	return p, nil
}

// geminiSystemText is the text of a systemInstruction: a string, or a content whose parts
// carry text.
func geminiSystemText(raw json.RawMessage) string {
	var c struct {
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	}
	if json.Unmarshal(raw, &c) == nil && len(c.Parts) > 0 {
		var texts []string
		for _, pt := range c.Parts {
			if pt.Text != "" {
				texts = append(texts, pt.Text)
			}
		}
		return strings.Join(texts, "\n")
	}
	return textOf(raw)
}
