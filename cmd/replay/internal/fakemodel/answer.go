package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// answer writes one step in a protocol's reply shape. n numbers the reply (the step's turn, from
// 1), so a retried request gets the same ids.
type answer struct {
	Step
	n     int
	model string
}

func (a answer) callID(prefix string) string { return fmt.Sprintf("%s_fake_%d", prefix, a.n) }

// args is the call's arguments object ({} when none was given).
func (a answer) args() json.RawMessage {
	if len(a.Args) == 0 {
		return json.RawMessage(`{}`)
	}
	return a.Args
}

// sse writes server-sent events; named events carry an "event:" line (Anthropic, Responses).
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func startSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return sse{w: w, f: f}
}

func (s sse) event(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(fmt.Sprintf("fakemodel: event %s: %v", name, err))
	}
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if s.f != nil {
		s.f.Flush()
	}
}

type obj = map[string]any

// anthropic answers a Messages request: one tool_use or text block.
func (a answer) anthropic(w http.ResponseWriter, stream bool) {
	id := fmt.Sprintf("msg_fake_%d", a.n)
	usage := obj{"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	block, stop := obj{"type": "text", "text": a.Text}, "end_turn"
	if a.Tool != "" {
		block, stop = obj{"type": "tool_use", "id": a.callID("toolu"), "name": a.Tool, "input": a.args()}, "tool_use"
	}
	if !stream {
		writeJSON(w, obj{"id": id, "type": "message", "role": "assistant", "model": a.model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	s := startSSE(w)
	s.event("message_start", obj{"type": "message_start", "message": obj{"id": id, "type": "message",
		"role": "assistant", "model": a.model, "content": []any{}, "stop_reason": nil,
		"stop_sequence": nil, "usage": usage}})
	if a.Tool != "" {
		s.event("content_block_start", obj{"type": "content_block_start", "index": 0,
			"content_block": obj{"type": "tool_use", "id": block["id"], "name": a.Tool, "input": obj{}}})
		s.event("content_block_delta", obj{"type": "content_block_delta", "index": 0,
			"delta": obj{"type": "input_json_delta", "partial_json": string(a.args())}})
	} else {
		s.event("content_block_start", obj{"type": "content_block_start", "index": 0,
			"content_block": obj{"type": "text", "text": ""}})
		s.event("content_block_delta", obj{"type": "content_block_delta", "index": 0,
			"delta": obj{"type": "text_delta", "text": a.Text}})
	}
	s.event("content_block_stop", obj{"type": "content_block_stop", "index": 0})
	s.event("message_delta", obj{"type": "message_delta",
		"delta": obj{"stop_reason": stop, "stop_sequence": nil}, "usage": obj{"output_tokens": 20}})
	s.event("message_stop", obj{"type": "message_stop"})
}

// responses answers a Responses request: one function_call, custom_tool_call or message item.
func (a answer) responses(w http.ResponseWriter, stream bool) {
	id := fmt.Sprintf("resp_fake_%d", a.n)
	var item obj
	switch {
	case a.Tool != "" && a.Freeform != "":
		item = obj{"type": "custom_tool_call", "id": fmt.Sprintf("ctc_fake_%d", a.n), "status": "completed",
			"call_id": a.callID("call"), "name": a.Tool, "input": a.Freeform}
	case a.Tool != "":
		item = obj{"type": "function_call", "id": fmt.Sprintf("fc_fake_%d", a.n), "status": "completed",
			"call_id": a.callID("call"), "name": a.Tool, "arguments": string(a.args())}
	default:
		item = obj{"type": "message", "id": fmt.Sprintf("msg_fake_%d", a.n), "status": "completed",
			"role": "assistant", "content": []any{obj{"type": "output_text", "text": a.Text, "annotations": []any{}}}}
	}
	usage := obj{"input_tokens": 100, "input_tokens_details": obj{"cached_tokens": 0},
		"output_tokens": 20, "output_tokens_details": obj{"reasoning_tokens": 0}, "total_tokens": 120}
	resp := obj{"id": id, "object": "response", "created_at": 0, "model": a.model, "status": "completed",
		"output": []any{item}, "usage": usage}
	if !stream {
		writeJSON(w, resp)
		return
	}
	s := startSSE(w)
	s.event("response.created", obj{"type": "response.created", "sequence_number": 0,
		"response": obj{"id": id, "object": "response", "created_at": 0, "model": a.model,
			"status": "in_progress", "output": []any{}}})
	s.event("response.output_item.added", obj{"type": "response.output_item.added", "sequence_number": 1,
		"output_index": 0, "item": item})
	if item["type"] == "message" {
		s.event("response.output_text.delta", obj{"type": "response.output_text.delta", "sequence_number": 2,
			"item_id": item["id"], "output_index": 0, "content_index": 0, "delta": a.Text})
	}
	s.event("response.output_item.done", obj{"type": "response.output_item.done", "sequence_number": 3,
		"output_index": 0, "item": item})
	s.event("response.completed", obj{"type": "response.completed", "sequence_number": 4, "response": resp})
}

// chat answers a Chat Completions request: one tool call or a text message.
func (a answer) chat(w http.ResponseWriter, stream bool) {
	id := fmt.Sprintf("chatcmpl-fake-%d", a.n)
	usage := obj{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
	msg, finish := obj{"role": "assistant", "content": a.Text}, "stop"
	if a.Tool != "" {
		call := obj{"id": a.callID("call"), "type": "function",
			"function": obj{"name": a.Tool, "arguments": string(a.args())}}
		msg, finish = obj{"role": "assistant", "content": nil, "tool_calls": []any{call}}, "tool_calls"
	}
	if !stream {
		writeJSON(w, obj{"id": id, "object": "chat.completion", "created": 0, "model": a.model,
			"choices": []any{obj{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	chunk := func(choices []any) obj {
		return obj{"id": id, "object": "chat.completion.chunk", "created": 0, "model": a.model, "choices": choices}
	}
	s := startSSE(w)
	delta := obj{"role": "assistant", "content": a.Text}
	if a.Tool != "" {
		call := msg["tool_calls"].([]any)[0].(obj)
		indexed := obj{"index": 0, "id": call["id"], "type": "function", "function": call["function"]}
		delta = obj{"role": "assistant", "content": nil, "tool_calls": []any{indexed}}
	}
	s.event("", chunk([]any{obj{"index": 0, "delta": delta, "finish_reason": nil}}))
	s.event("", chunk([]any{obj{"index": 0, "delta": obj{}, "finish_reason": finish}}))
	last := chunk([]any{})
	last["usage"] = usage // the usage chunk that stream_options.include_usage asks for
	s.event("", last)
	fmt.Fprint(w, "data: [DONE]\n\n")
	if s.f != nil {
		s.f.Flush()
	}
}
