package projections

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Config is the engine configuration of the context projection. It is recorded in task_started's
// config object, so a task keeps the windows and caps it started with and replay reproduces them.
type Config struct {
	// MaxPaths caps the context: at most this many paths, kept by source confidence, then
	// newest first. Each evidence source also keeps at most this many paths.
	MaxPaths int `json:"max_paths"`
	// MaxSources caps the evidence kept per path: its newest MaxSources sources.
	MaxSources int `json:"max_sources"`
	// ToolTurns is how many turns tool-call targets (and shell paths) count for: the turn of the
	// next decision and the ToolTurns-1 before it. 0 turns tool evidence off.
	ToolTurns int `json:"tool_turns"`
	// UserMessages is how many user messages mentions and prose paths count for: 1 is the
	// current user turn, until the next user message. 0 turns them off.
	UserMessages int `json:"user_messages"`
	// SnapshotEvery is how many events the session lets pass between projection snapshots; 0
	// means never. The projection itself only records it.
	SnapshotEvery int `json:"snapshot_every"`
	// ActivateUnconfirmed lets a guessed path (from prose or a shell command) that the workspace
	// did not confirm when it was recorded into the context. By default such a guess is left out
	// and counted as dropped, reason "unconfirmed".
	ActivateUnconfirmed bool `json:"activate_unconfirmed_guesses,omitempty"`
}

// Bounds on configuration values, beyond which a value is a mistake rather than a choice.
const (
	maxMaxPaths   = 100_000
	maxMaxSources = 1_000
	maxWindow     = 100_000
)

// DefaultConfig is the configuration of a task whose task_started has no config: 100 paths, 8
// sources each, tool targets for 3 turns, mentions and prose for the current user message, a
// snapshot every 256 events, so that reopening a task folds at most 255 events after its
// snapshot.
func DefaultConfig() Config {
	return Config{MaxPaths: 100, MaxSources: 8, ToolTurns: 3, UserMessages: 1, SnapshotEvery: 256}
}

// DecodeConfig reads the config object of task_started. Absent, empty or null gives the
// defaults, and a missing field keeps its default. An unknown field, a value of the wrong type
// and a value out of range are errors wrapping ErrConfig.
func DecodeConfig(raw json.RawMessage) (Config, error) {
	cfg := DefaultConfig()
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return cfg, nil
	}
	if raw[0] != '{' {
		return Config{}, fmt.Errorf("%w: want a JSON object", ErrConfig)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return Config{}, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if dec.More() {
		return Config{}, fmt.Errorf("%w: trailing data after the object", ErrConfig)
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// Validate checks every value is in range; the error wraps ErrConfig and names the field.
func (c Config) Validate() error {
	checks := []struct {
		name     string
		v        int
		min, max int
	}{
		{"max_paths", c.MaxPaths, 1, maxMaxPaths},
		{"max_sources", c.MaxSources, 1, maxMaxSources},
		{"tool_turns", c.ToolTurns, 0, maxWindow},
		{"user_messages", c.UserMessages, 0, maxWindow},
		{"snapshot_every", c.SnapshotEvery, 0, 1 << 30},
	}
	for _, ch := range checks {
		if ch.v < ch.min || ch.v > ch.max {
			return fmt.Errorf("%w: %s is %d, want %d to %d", ErrConfig, ch.name, ch.v, ch.min, ch.max)
		}
	}
	return nil
}
