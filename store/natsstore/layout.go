package natsstore

// The layouts of a stream. A stream records the layout it was created with in its metadata,
// under LayoutMetadataKey; a stream that records none was created before layouts were named
// and is of layout 1. A Store reads and writes a stream in the stream's own layout, never in
// two at once: Migrate copies the tasks of a stream of an earlier layout into a new stream of
// the current layout.
const (
	// Layout1 keeps each event on a subject of its own, STREAM.ev.TASK.ID, one message per
	// subject; a task's log is the filter STREAM.ev.TASK.*, and the server's check of an
	// append's expected position visits every event subject of the task, so an append costs
	// more the longer its task.
	Layout1 = 1
	// Layout2 keeps a task's log on one literal subject, STREAM.log.TASK, and each event's id as
	// a marker message on STREAM.id.TASK.ID, written in the same atomic batch as the event with
	// an expected last subject sequence of 0: an append's check is on one subject, whatever the
	// length of the task.
	Layout2 = 2
	// Layout3 is layout 2 with less written per event: the task's log on STREAM.TASK and each
	// event's id marker on STREAM.TASK.ID, task and id each spelled in 22 characters (the
	// unpadded URL-safe base64 of their 16 bytes, see subjectToken); each marker is stored just
	// before its event, which it names by that position alone, with no payload; an event's
	// message carries no Nats-Msg-Id (its marker keeps the id from being stored twice); and an
	// atomic batch's id is 16 characters, not 36.
	Layout3 = 3
	// LayoutCurrent is the layout Open creates a stream with.
	LayoutCurrent = Layout3
	// LayoutMetadataKey is the key of the stream's metadata that names its layout.
	LayoutMetadataKey = "tasklog_layout"
)

// msgsPerEvent is how many messages one event costs in an atomic batch: its own, and in
// layouts 2 and 3 its id marker.
func (s *Store) msgsPerEvent() int {
	if s.layout == Layout1 {
		return 1
	}
	return 2
}

// maxEvents is the most events one atomic batch holds: JetStream's default max_batch_size
// messages.
func (s *Store) maxEvents() int { return maxBatch / s.msgsPerEvent() }
