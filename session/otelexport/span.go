// Package otelexport turns a task's log into OpenTelemetry spans: one trace per task, shaped by
// the GenAI semantic conventions v1.40.0 (SemconvVersion), so that tasklog's decisions and
// deliveries sit beside the agent's own telemetry in Jaeger, Langfuse or Phoenix.
//
// The mapping is a pure fold (Mapper, Map): the same log gives the same spans, ids and times,
// whether a task is exported live as its hooks arrive (Live) or after the fact (Export). The
// spans are sent over OTLP by an Exporter whose queue is bounded: a collector that is down or
// hung costs a hook nothing, and what does not fit is dropped and counted.
//
// The trace is the task's: its id is the task's UUID, and each span's id is derived from the
// task and the sequence number of the event it stands for, so a trace exported twice is the
// same trace. Rule text and the user's prompts are never exported unless asked for
// (Options.UserPrompts, as Claude Code's OTEL_LOG_USER_PROMPTS).
package otelexport

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"

	"github.com/google/uuid"
)

// SemconvVersion is the version of the OpenTelemetry semantic conventions whose GenAI
// attributes (still at Development status) the spans follow.
const SemconvVersion = "1.40.0"

// Span is one span of a task's trace, in a form that is plain data: the golden files hold it as
// JSON and ToOTLP turns it into the SDK's.
type Span struct {
	// TraceID is the task's UUID as 32 hex digits.
	TraceID string `json:"trace_id"`
	// SpanID is 16 hex digits, derived from the task, the span's kind and its event's seq.
	SpanID string `json:"span_id"`
	// Parent is the parent span's id; "" for the task's root span.
	Parent string `json:"parent,omitempty"`
	// Name is the span's name ("invoke_agent claude-code", "prompt 1", "decide", …).
	Name  string    `json:"name"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Attrs are sorted by key.
	Attrs []Attr `json:"attrs"`
	// Events are in the log's order.
	Events []Event `json:"events,omitempty"`
}

// Event is a span event: a rule's outcome, an instruction file the agent loaded, a finding.
type Event struct {
	Name  string    `json:"name"`
	Time  time.Time `json:"time"`
	Attrs []Attr    `json:"attrs"`
}

// Attr is one attribute. Value is a string, an int64, a bool or a []string.
type Attr struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// Attribute keys of the GenAI semantic conventions (SemconvVersion).
const (
	KeyOperationName  = "gen_ai.operation.name"
	KeyConversationID = "gen_ai.conversation.id"
	KeyAgentName      = "gen_ai.agent.name"
	KeyAgentID        = "gen_ai.agent.id"
	KeyRequestModel   = "gen_ai.request.model"
	KeyProviderName   = "gen_ai.provider.name"
)

// tasklog's own attribute keys.
const (
	KeyTask          = "tasklog.task.id"
	KeySeq           = "tasklog.seq"
	KeyPrompt        = "tasklog.prompt"
	KeyPromptText    = "tasklog.prompt.text"
	KeyPromptBytes   = "tasklog.prompt.bytes"
	KeyRequest       = "tasklog.request"
	KeyTurn          = "tasklog.turn"
	KeyEngine        = "tasklog.engine"
	KeyIncluded      = "tasklog.rules.included"
	KeyExcluded      = "tasklog.rules.excluded"
	KeyContextPaths  = "tasklog.context.paths"
	KeyRuleID        = "tasklog.rule.id"
	KeyRuleName      = "tasklog.rule.name"
	KeyRuleDecision  = "tasklog.rule.decision"
	KeyRuleReason    = "tasklog.rule.reason"
	KeyRulePattern   = "tasklog.rule.pattern"
	KeyRulePath      = "tasklog.rule.path"
	KeyRuleFile      = "tasklog.rule.file"
	KeyRuleEvidence  = "tasklog.rule.evidence.seq"
	KeyDecisionSeq   = "tasklog.decision.seq"
	KeyChannel       = "tasklog.delivery.channel"
	KeyHook          = "tasklog.delivery.hook"
	KeyForm          = "tasklog.delivery.form"
	KeyBytes         = "tasklog.delivery.bytes"
	KeySHA256        = "tasklog.delivery.sha256"
	KeyDelivered     = "tasklog.delivery.rules"
	KeyLoadPath      = "tasklog.load.path"
	KeyLoadMemory    = "tasklog.load.memory_type"
	KeyLoadReason    = "tasklog.load.reason"
	KeyFindingKind   = "tasklog.finding.kind"
	KeyFindingSev    = "tasklog.finding.severity"
	KeyFindingRule   = "tasklog.finding.rule"
	KeyFindingText   = "tasklog.finding.evidence"
	KeyFindingPrompt = "tasklog.finding.prompt"
	KeyStopReason    = "tasklog.stop.reason"
	KeyCompaction    = "tasklog.compaction.trigger"
	KeyToolName      = "gen_ai.tool.name"
)

// Span kinds, for the span ids: a span of each kind per event seq.
const (
	kindRoot     = "root"
	kindPrompt   = "prompt"
	kindDecision = "decision"
	kindDelivery = "delivery"
)

// TraceID is the trace id of a task: its UUID's 16 bytes.
func TraceID(task uuid.UUID) [16]byte { return task }

// spanID derives a span's id from the task, the span's kind and the seq of its event.
func spanID(task uuid.UUID, kind string, seq uint64) [8]byte {
	h := sha256.New()
	h.Write(task[:])
	h.Write([]byte(kind))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], seq)
	h.Write(b[:])
	var id [8]byte
	copy(id[:], h.Sum(nil))
	if id == ([8]byte{}) {
		id[7] = 1 // an all-zero span id is invalid
	}
	return id
}

func hexID(b []byte) string { return hex.EncodeToString(b) }
