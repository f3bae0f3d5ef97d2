package store

import "encoding/binary"

// The layout of a task log file. Every name is a top-level bucket.
var (
	// bucketMeta holds the format marker that tells a task log from any other bbolt file.
	bucketMeta = []byte("tasklog")
	// bucketTasks holds one nested bucket per task, named by the task's 16 id bytes; inside it,
	// each event's binary encoding under its 8-byte big-endian sequence number.
	bucketTasks = []byte("tasks")
	// bucketBlobs maps a SHA-256 sum (32 bytes) to the content it addresses.
	bucketBlobs = []byte("blobs")
	// bucketSnapshots maps task id (16) + projection name to seq (8) + the snapshot's bytes.
	bucketSnapshots = []byte("snapshots")

	// keyFormat is the key of the format marker in bucketMeta.
	keyFormat = []byte("format")
	// formatV1 is the layout described above.
	formatV1 = []byte("1")
)

// uint64ToBytes encodes a sequence number as a key that sorts in numeric order.
func uint64ToBytes(u uint64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), u)
}

// bytesToUint64 decodes a key made by uint64ToBytes.
func bytesToUint64(b []byte) uint64 {
	return binary.BigEndian.Uint64(b)
}

// binaryAppendUint64 appends a sequence key to b.
func binaryAppendUint64(b []byte, u uint64) []byte {
	return binary.BigEndian.AppendUint64(b, u)
}
