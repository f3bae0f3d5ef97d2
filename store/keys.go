package store

import "encoding/binary"

// The layout of a task log file. Each task's events are in a top-level bucket named by the
// task's 16 id bytes, each event's binary encoding under its 8-byte big-endian sequence number.
// Task buckets sit at the top level, not inside a parent bucket, because a parent costs every
// commit one more page to write; so does each task's id index, named by the task's id and 'i'.
// The other buckets have names that are never 16 or 17 bytes long.
var (
	// bucketMeta holds the format marker that tells a task log from any other bbolt file.
	bucketMeta = []byte("tasklog")
	// bucketBlobs maps a SHA-256 sum (32 bytes) to the content it addresses.
	bucketBlobs = []byte("blobs")
	// bucketSnapshots maps task id (16) + projection name to seq (8) + the snapshot's bytes.
	bucketSnapshots = []byte("snapshots")

	// keyFormat is the key of the format marker in bucketMeta.
	keyFormat = []byte("format")
	// formatV1 is the layout described above without the id indexes. It is read, and upgraded
	// to formatV2 when opened for writing.
	formatV1 = []byte("1")
	// formatV2 is the layout described above with an id index beside each task's log (see
	// idindex.go). Code that knows only formatV1 refuses it: its appends would leave the
	// indexes behind. It is read, and marked formatV4 when opened for writing: its records
	// stay as they are.
	formatV2 = []byte("2")
	// formatV3 is formatV2 whose event records and blobs may be kept compressed (see package
	// payloadcodec), beside records of format 2 kept as they were. Code that knows only
	// formatV2 refuses it: it could not read the compressed records. It is read, and marked
	// formatV4 when opened for writing: its records stay as they are.
	formatV3 = []byte("3")
	// formatV4 is formatV3 whose new event records leave out what the file holds elsewhere:
	// the task id, the sequence number and the prev hash, with the record's own hash in front
	// of it (see record.go), beside records of formats 2 and 3 kept as they were. Code that
	// knows only formatV3 refuses it: it could not read the new records.
	formatV4 = []byte("4")
)

// uint64ToBytes encodes a sequence number as a key that sorts in numeric order.
func uint64ToBytes(u uint64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), u)
}

// bytesToUint64 decodes a key made by uint64ToBytes.
func bytesToUint64(b []byte) uint64 {
	return binary.BigEndian.Uint64(b)
}

// appendSeqKey appends a sequence key to b.
func appendSeqKey(b []byte, u uint64) []byte {
	return binary.BigEndian.AppendUint64(b, u)
}

// isTaskBucket tells a task's bucket from the others by its name's length.
func isTaskBucket(name []byte) bool { return len(name) == 16 }
