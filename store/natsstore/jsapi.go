package natsstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
)

// JetStream error codes (err_code of an API error) this package tells apart.
const (
	codeNoMessage            = 10037 // no message found
	codeWrongLastSeq         = 10071 // the expected last subject sequence does not match
	codeStoreFailed          = 10077 // e.g. a second message on an event's subject
	codeDuplicateConflict    = 10158 // a message id seen with another sequence
	codeWrongLastSeqConstant = 10164 // another write to the task is in flight (clustered)
	codeBatchIncomplete      = 10176
	codeBatchDuplicate       = 10201 // an atomic batch holds an already stored message id
	codeBatchTooMany         = 10210 // too many atomic batches in flight on the stream
)

// apiError is an error reported by the JetStream API.
type apiError struct {
	Code        int    `json:"code"`
	ErrCode     int    `json:"err_code"`
	Description string `json:"description"`
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%s (JetStream error %d)", e.Description, e.ErrCode)
}

// pubAck is the server's answer to a publish into the stream.
type pubAck struct {
	Stream    string    `json:"stream"`
	Seq       uint64    `json:"seq"`
	Duplicate bool      `json:"duplicate"`
	Batch     string    `json:"batch"`
	Count     int       `json:"count"`
	Error     *apiError `json:"error"`
}

// apiCode returns the JetStream error code of err, or 0.
func apiCode(err error) int {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.ErrCode
	}
	return 0
}

// request sends a request and waits for one reply, at most s.timeout (or until ctx is done).
func (s *Store) request(ctx context.Context, msg *nats.Msg) (*nats.Msg, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	m, err := s.nc.RequestMsgWithContext(ctx, msg)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("no answer within %v: %w", s.timeout, errTimeout)
	}
	return m, err
}

// errTimeout marks a call the server did not answer in time.
var errTimeout = errors.New("timed out")

// storedMsg is a message read back from the stream.
type storedMsg struct {
	Subject string `json:"subject"`
	Seq     uint64 `json:"seq"`
	Data    []byte `json:"data"`
	Hdrs    []byte `json:"hdrs"`
	// Spilled is the hex SHA-256 sum of the event's encoding when it is kept in the object
	// store instead of in the message (see spillHeader).
	Spilled string `json:"-"`
}

// getLast reads the last message on subject (which may hold wildcards) from the stream
// leader, so the answer includes every acknowledged write. ok is false when none is stored.
func (s *Store) getLast(ctx context.Context, subject string) (m storedMsg, ok bool, err error) {
	return s.msgGet(ctx, map[string]any{"last_by_subj": subject})
}

// getNext reads the first message on subject at stream sequence seq or later from the leader.
func (s *Store) getNext(ctx context.Context, subject string, seq uint64) (m storedMsg, ok bool, err error) {
	return s.msgGet(ctx, map[string]any{"next_by_subj": subject, "seq": seq})
}

// msgGet reads one message from the stream leader. An answer that may go away on its own (a
// leader being elected, a connection moving to another server) is asked again until the
// timeout has passed.
func (s *Store) msgGet(ctx context.Context, req map[string]any) (storedMsg, bool, error) {
	deadline := time.Now().Add(s.timeout)
	for {
		m, ok, err := s.msgGetOnce(ctx, req)
		if err == nil || !retryable(err) || ctx.Err() != nil || time.Now().After(deadline) {
			return m, ok, err
		}
		time.Sleep(retryWait)
	}
}

func (s *Store) msgGetOnce(ctx context.Context, req map[string]any) (storedMsg, bool, error) {
	body, _ := json.Marshal(req)
	reply, err := s.request(ctx, &nats.Msg{Subject: "$JS.API.STREAM.MSG.GET." + s.stream, Data: body})
	if err != nil {
		return storedMsg{}, false, err
	}
	var resp struct {
		Message *storedMsg `json:"message"`
		Error   *apiError  `json:"error"`
	}
	if err := json.Unmarshal(reply.Data, &resp); err != nil {
		return storedMsg{}, false, fmt.Errorf("reading a message: the answer does not decode: %w", err)
	}
	switch {
	case resp.Error != nil && resp.Error.ErrCode == codeNoMessage:
		return storedMsg{}, false, nil
	case resp.Error != nil:
		return storedMsg{}, false, resp.Error
	case resp.Message == nil:
		return storedMsg{}, false, errors.New("reading a message: the answer holds none")
	}
	m := *resp.Message
	if i := bytes.Index(m.Hdrs, []byte(spillHeader+": ")); i >= 0 {
		v := m.Hdrs[i+len(spillHeader)+2:]
		if j := bytes.IndexByte(v, '\r'); j >= 0 {
			v = v[:j]
		}
		m.Spilled = string(v)
	}
	return m, true, nil
}

// directBatch reads up to n messages on subject from stream sequence seq on, through the
// stream's direct get, which any replica may answer: the caller checks the answer is not
// behind what it knows is stored. With noHdr the messages come as their payloads alone: no subject, sequence or headers.
// last is the stream sequence of the last message returned, when the server says (0 if not).
func (s *Store) directBatch(ctx context.Context, subject string, seq uint64, n int, noHdr bool) (msgs []storedMsg, last uint64, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	inbox := s.nc.NewInbox()
	sub, err := s.nc.SubscribeSync(inbox)
	if err != nil {
		return nil, 0, err
	}
	defer sub.Unsubscribe()
	req := map[string]any{"seq": seq, "next_by_subj": subject, "batch": n, "max_bytes": readChunkBytes}
	if noHdr {
		req["no_hdr"] = true
	}
	body, _ := json.Marshal(req)
	if err := s.nc.PublishRequest("$JS.API.DIRECT.GET."+s.stream, inbox, body); err != nil {
		return nil, 0, err
	}
	for {
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("reading messages: no answer within %v: %w", s.timeout, errTimeout)
			}
			return nil, 0, err
		}
		if status := m.Header.Get("Status"); status != "" {
			switch status {
			case "204": // end of batch: it names the last message's stream sequence
				last, _ := strconv.ParseUint(m.Header.Get("Nats-Last-Sequence"), 10, 64)
				return msgs, last, nil
			case "404": // nothing at or after seq
				return msgs, 0, nil
			case "503":
				return nil, 0, nats.ErrNoResponders
			}
			return nil, 0, fmt.Errorf("reading messages: status %s %s", status, m.Header.Get("Description"))
		}
		if noHdr {
			msgs = append(msgs, storedMsg{Data: m.Data})
			continue
		}
		sseq, err := strconv.ParseUint(m.Header.Get("Nats-Sequence"), 10, 64)
		if err != nil {
			return nil, 0, fmt.Errorf("reading messages: a message has no sequence header: %w", err)
		}
		msgs = append(msgs, storedMsg{Subject: m.Header.Get("Nats-Subject"), Seq: sseq, Data: m.Data, Spilled: m.Header.Get(spillHeader)})
	}
}
