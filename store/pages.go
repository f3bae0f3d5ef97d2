package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"os"

	"github.com/google/uuid"
)

// When bbolt panics on a damaged file it rarely says where. damagedPage finds the page by
// reading the file itself, never through bbolt's mapping: the meta pages, the path from the
// root to a task's buckets, and every page of those buckets, checking each page's header and
// the bounds and order of its elements. It follows bbolt's on-disk format (version 2, native
// byte order, which is little-endian on every platform tasklog builds for).

const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	pageHeaderSize   = 16
	elementSize      = 16
	branchPageFlag   = 0x01
	leafPageFlag     = 0x02
	bucketLeafFlag   = 0x01
	bucketHeaderSize = 16
)

// pageDamage is a damaged page and what is wrong with it.
type pageDamage struct {
	page    uint64
	problem string
}

func (d *pageDamage) String() string { return fmt.Sprintf("page %d: %s", d.page, d.problem) }

// pageReader reads a bbolt file page by page.
type pageReader struct {
	r        io.ReaderAt
	pageSize uint64
	hwm      uint64 // the first page id past the used pages
	seen     map[uint64]bool
}

// damagedPage returns the first damaged page on the way to task's buckets or inside them, or
// nil when it finds none. A task of uuid.Nil checks the path to the root bucket's pages only.
func damagedPage(path string, task uuid.UUID) *pageDamage {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	pr, root, d := readMeta(f)
	if d != nil {
		return d
	}
	if d := pr.walk(root, nil); d != nil || task == uuid.Nil {
		return d
	}
	for _, name := range [][]byte{task[:], indexName(task)} {
		value, d := pr.find(root, name)
		if d != nil || value == nil {
			return d
		}
		if len(value) < bucketHeaderSize {
			return &pageDamage{root, fmt.Sprintf("the bucket header of %x is %d bytes", name, len(value))}
		}
		sub := binary.LittleEndian.Uint64(value)
		if sub == 0 { // an inline bucket: its page is in the value
			if d := checkPage(value[bucketHeaderSize:], 0, false, pr.hwm); d != "" {
				return &pageDamage{root, "inline bucket " + fmt.Sprintf("%x", name) + ": " + d}
			}
			continue
		}
		if d := pr.walk(sub, nil); d != nil {
			return d
		}
	}
	return nil
}

// readMeta picks the newest valid meta page, as bbolt does.
func readMeta(r io.ReaderAt) (*pageReader, uint64, *pageDamage) {
	var best struct {
		ok              bool
		txid, root, hwm uint64
		pageSize        uint32
	}
	var firstProblem *pageDamage
	buf := make([]byte, pageHeaderSize+64)
	for i, off := range []int64{0, -1} {
		if off < 0 {
			ps := int64(os.Getpagesize())
			if best.ok {
				ps = int64(best.pageSize)
			}
			off = ps
		}
		if _, err := r.ReadAt(buf, off); err != nil {
			firstProblem = cmpDamage(firstProblem, &pageDamage{uint64(i), "cannot be read: " + err.Error()})
			continue
		}
		m := buf[pageHeaderSize:]
		le := binary.LittleEndian
		h := fnv.New64a()
		h.Write(m[:56])
		switch {
		case le.Uint32(m) != boltMagic:
			firstProblem = cmpDamage(firstProblem, &pageDamage{uint64(i), "the meta page has no bbolt magic number"})
			continue
		case le.Uint32(m[4:]) != boltVersion:
			firstProblem = cmpDamage(firstProblem, &pageDamage{uint64(i), fmt.Sprintf("meta page version %d", le.Uint32(m[4:]))})
			continue
		case le.Uint64(m[56:]) != h.Sum64():
			firstProblem = cmpDamage(firstProblem, &pageDamage{uint64(i), "the meta page's checksum does not match"})
			continue
		}
		if txid := le.Uint64(m[48:]); !best.ok || txid > best.txid {
			best.ok, best.txid, best.pageSize = true, txid, le.Uint32(m[8:])
			best.root, best.hwm = le.Uint64(m[16:]), le.Uint64(m[40:])
		}
	}
	if !best.ok {
		return nil, 0, firstProblem
	}
	pr := &pageReader{r: r, pageSize: uint64(best.pageSize), hwm: best.hwm, seen: map[uint64]bool{}}
	if best.root < 2 || best.root >= best.hwm {
		return nil, 0, &pageDamage{best.root, fmt.Sprintf("the root bucket's page is outside the file's %d pages", best.hwm)}
	}
	return pr, best.root, nil
}

func cmpDamage(a, b *pageDamage) *pageDamage {
	if a != nil {
		return a
	}
	return b
}

// read returns page id with its overflow pages.
func (pr *pageReader) read(id uint64) ([]byte, *pageDamage) {
	if id < 2 || id >= pr.hwm {
		return nil, &pageDamage{id, fmt.Sprintf("referenced, but outside the file's %d used pages", pr.hwm)}
	}
	buf := make([]byte, pr.pageSize)
	if _, err := pr.r.ReadAt(buf, int64(id*pr.pageSize)); err != nil {
		return nil, &pageDamage{id, "cannot be read: " + err.Error()}
	}
	if overflow := uint64(binary.LittleEndian.Uint32(buf[12:])); overflow > 0 {
		if id+overflow >= pr.hwm {
			return nil, &pageDamage{id, fmt.Sprintf("its %d overflow pages reach past the file's %d used pages", overflow, pr.hwm)}
		}
		buf = make([]byte, (overflow+1)*pr.pageSize)
		if _, err := pr.r.ReadAt(buf, int64(id*pr.pageSize)); err != nil {
			return nil, &pageDamage{id, "cannot be read: " + err.Error()}
		}
	}
	return buf, nil
}

// walk checks the tree under page id. Below a leaf it does not descend into sub-buckets: the
// buckets that matter are looked up by name.
func (pr *pageReader) walk(id uint64, stack []uint64) *pageDamage {
	if pr.seen[id] {
		return &pageDamage{id, fmt.Sprintf("referenced twice (from page %v)", stack)}
	}
	pr.seen[id] = true
	p, d := pr.read(id)
	if d != nil {
		return d
	}
	if problem := checkPage(p, id, true, pr.hwm); problem != "" {
		return &pageDamage{id, problem}
	}
	if binary.LittleEndian.Uint16(p[8:]) != branchPageFlag {
		return nil
	}
	for i := range int(binary.LittleEndian.Uint16(p[10:])) {
		child := binary.LittleEndian.Uint64(p[pageHeaderSize+i*elementSize+8:])
		if d := pr.walk(child, append(stack, id)); d != nil {
			return d
		}
	}
	return nil
}

// find descends from page id to the leaf element whose key is name and returns its value.
func (pr *pageReader) find(id uint64, name []byte) ([]byte, *pageDamage) {
	for {
		p, d := pr.read(id)
		if d != nil {
			return nil, d
		}
		if problem := checkPage(p, id, true, pr.hwm); problem != "" {
			return nil, &pageDamage{id, problem}
		}
		n := int(binary.LittleEndian.Uint16(p[10:]))
		if binary.LittleEndian.Uint16(p[8:]) == leafPageFlag {
			for i := range n {
				k, v := leafElement(p, i)
				if bytes.Equal(k, name) {
					return v, nil
				}
			}
			return nil, nil
		}
		next := uint64(0)
		for i := range n {
			k := branchKey(p, i)
			if i > 0 && bytes.Compare(k, name) > 0 {
				break
			}
			next = binary.LittleEndian.Uint64(p[pageHeaderSize+i*elementSize+8:])
		}
		id = next
	}
}

func branchKey(p []byte, i int) []byte {
	at := pageHeaderSize + i*elementSize
	pos, ksize := int(binary.LittleEndian.Uint32(p[at:])), int(binary.LittleEndian.Uint32(p[at+4:]))
	return p[at+pos : at+pos+ksize]
}

func leafElement(p []byte, i int) (k, v []byte) {
	at := pageHeaderSize + i*elementSize
	pos := int(binary.LittleEndian.Uint32(p[at+4:]))
	ksize, vsize := int(binary.LittleEndian.Uint32(p[at+8:])), int(binary.LittleEndian.Uint32(p[at+12:]))
	return p[at+pos : at+pos+ksize], p[at+pos+ksize : at+pos+ksize+vsize]
}

// checkPage checks a branch or leaf page's header and that every element lies inside it, in
// key order. It returns what is wrong, or "".
func checkPage(p []byte, id uint64, hasID bool, hwm uint64) string {
	if len(p) < pageHeaderSize {
		return fmt.Sprintf("%d bytes, shorter than a page header", len(p))
	}
	le := binary.LittleEndian
	if got := le.Uint64(p); hasID && got != id {
		return fmt.Sprintf("its header says it is page %d", got)
	}
	flags, n := le.Uint16(p[8:]), int(le.Uint16(p[10:]))
	if flags != branchPageFlag && flags != leafPageFlag {
		return fmt.Sprintf("its type flags are %#x, neither branch nor leaf", flags)
	}
	if pageHeaderSize+n*elementSize > len(p) {
		return fmt.Sprintf("it counts %d elements, more than fit in it", n)
	}
	var prev []byte
	for i := range n {
		at := pageHeaderSize + i*elementSize
		var key []byte
		if flags == branchPageFlag {
			pos, ksize := int(le.Uint32(p[at:])), int(le.Uint32(p[at+4:]))
			if at+pos+ksize > len(p) || ksize == 0 {
				return fmt.Sprintf("element %d of %d points outside the page", i, n)
			}
			if child := le.Uint64(p[at+8:]); child < 2 || child >= hwm {
				return fmt.Sprintf("element %d of %d points at page %d, outside the file's %d used pages", i, n, child, hwm)
			}
			key = branchKey(p, i)
		} else {
			pos := int(le.Uint32(p[at+4:]))
			ksize, vsize := int(le.Uint32(p[at+8:])), int(le.Uint32(p[at+12:]))
			if at+pos+ksize+vsize > len(p) || ksize == 0 || le.Uint32(p[at:])&^bucketLeafFlag != 0 {
				return fmt.Sprintf("element %d of %d points outside the page", i, n)
			}
			key, _ = leafElement(p, i)
		}
		if prev != nil && bytes.Compare(prev, key) >= 0 {
			return fmt.Sprintf("element %d of %d is out of key order", i, n)
		}
		prev = key
	}
	return ""
}
