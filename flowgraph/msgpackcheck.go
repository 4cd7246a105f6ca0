package flowgraph

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// checkLengths walks the first msgpack item of b and fails if an array or
// map claims more elements than bytes remain, or a string, binary or
// extension runs past the end.
//
// Why: msgpack v5.4 allocates a slice for every element an array header
// declares before reading any of them (its allocation limit is never
// applied, vmihailenco/msgpack#401), so a few corrupt bytes would make a
// reader allocate gigabytes and die. Every element takes at least one
// byte, so after this check a decoder allocates in proportion to its
// input.
func checkLengths(b []byte) error {
	_, err := checkItem(bufio.NewReader(bytes.NewReader(b)), uint64(len(b)))
	return err
}

// checkItem is checkLengths on the first item of r, which holds size
// bytes; it returns the bytes of the item.
func checkItem(r *bufio.Reader, size uint64) (uint64, error) {
	i := uint64(0)
	w := newWindow(r)
	defer w.release()
	for pending := uint64(1); pending > 0; pending-- {
		// An item's first byte and length take 5 bytes at most.
		b := w.fill(5)
		if size == i || len(b) == 0 {
			return i, w.truncated()
		}
		c := b[0]
		// n: the item's elements (a map's keys and values); lenBytes:
		// the size of its length field; fixed: bytes that follow it
		// besides the length's.
		n, lenBytes, fixed, err := itemShape(c, i+1)
		if err != nil {
			return i, err
		}
		counted := lenBytes < 0 // array16/32, map16/32: the length is n
		lenBytes = max(lenBytes, -lenBytes)
		head := 1 + lenBytes
		if len(b) < head || size-i < uint64(head) {
			return i, w.truncated()
		}
		size0 := uint64(fixed)
		switch {
		case counted:
			if n = readLen(b[1:], lenBytes); c >= 0xde {
				n *= 2
			}
		case lenBytes > 0:
			size0 += readLen(b[1:], lenBytes)
		}
		w.buf = w.buf[head:]
		i += uint64(head)
		if size0 > size-i {
			return i, fmt.Errorf("msgpack: %d bytes at %d, %d left", size0, i, size-i)
		}
		if err := w.skip(size0); err != nil {
			return i, fmt.Errorf("msgpack: %w", err)
		}
		i += size0
		// The current item is done, pending-1 items wait, and each of
		// them and of its n elements takes a byte at least.
		if n > size-i || pending-1+n > size-i {
			return i, fmt.Errorf("msgpack: %d elements at %d, %d bytes left", n, i, size-i)
		}
		pending += n
	}
	return i, nil
}

// window reads a bufio.Reader in its buffer: a byte at a time through
// Peek and Discard took four times as long.
type window struct {
	r   *bufio.Reader
	buf []byte // the buffered bytes not taken yet
	err error  // of the reader, other than its end
}

func newWindow(r *bufio.Reader) *window {
	w := &window{r: r}
	w.buf, _ = r.Peek(r.Buffered())
	return w
}

// fill returns the bytes not taken, at least k (k at most the reader's
// buffer) unless the stream ends before.
func (w *window) fill(k int) []byte {
	if len(w.buf) < k {
		w.release()
		if _, err := w.r.Peek(k); err != nil && err != io.EOF {
			w.err = err
		}
		w.buf, _ = w.r.Peek(w.r.Buffered())
	}
	return w.buf
}

// truncated is the error of a stream that ends before its item.
func (w *window) truncated() error {
	if w.err != nil {
		return fmt.Errorf("msgpack: %w", w.err)
	}
	return errors.New("msgpack: truncated")
}

// skip takes n bytes, n less than 2^31.
func (w *window) skip(n uint64) error {
	if n <= uint64(len(w.buf)) {
		w.buf = w.buf[n:]
		return nil
	}
	n -= uint64(len(w.buf))
	w.buf = w.buf[len(w.buf):]
	w.release()
	_, err := w.r.Discard(int(n))
	if err != nil {
		return fmt.Errorf("msgpack: %w", err)
	}
	w.buf, _ = w.r.Peek(w.r.Buffered())
	return nil
}

// release discards from the reader the bytes taken.
func (w *window) release() {
	_, _ = w.r.Discard(w.r.Buffered() - len(w.buf))
}

// itemShape tells what follows the first byte c of an item at i: its
// elements n (a map's keys and values), the size of its length field and
// the bytes besides it. Arrays and maps of 16 or 32 bits have n 0 and a
// negative lenBytes, the size of their count.
func itemShape(c byte, i uint64) (n uint64, lenBytes, fixed int, err error) {
	switch {
	case c <= 0x7f || c >= 0xe0: // fixint
	case c&0xf0 == 0x80: // fixmap
		n = 2 * uint64(c&0x0f)
	case c&0xf0 == 0x90: // fixarray
		n = uint64(c & 0x0f)
	case c&0xe0 == 0xa0: // fixstr
		fixed = int(c & 0x1f)
	default:
		switch c {
		case 0xc0, 0xc2, 0xc3: // nil, false, true
		case 0xc4, 0xd9: // bin8, str8
			lenBytes = 1
		case 0xc5, 0xda: // bin16, str16
			lenBytes = 2
		case 0xc6, 0xdb: // bin32, str32
			lenBytes = 4
		case 0xc7: // ext8: length, type
			lenBytes, fixed = 1, 1
		case 0xc8:
			lenBytes, fixed = 2, 1
		case 0xc9:
			lenBytes, fixed = 4, 1
		case 0xcc, 0xd0: // uint8, int8
			fixed = 1
		case 0xcd, 0xd1:
			fixed = 2
		case 0xca, 0xce, 0xd2: // float32, uint32, int32
			fixed = 4
		case 0xcb, 0xcf, 0xd3:
			fixed = 8
		case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1 to 16, after a type byte
			fixed = 1 + 1<<(c-0xd4)
		case 0xdc, 0xdd, 0xde, 0xdf: // array16/32, map16/32
			lenBytes = -(2 << ((c - 0xdc) & 1))
		default:
			return 0, 0, 0, fmt.Errorf("msgpack: invalid byte 0x%02x at %d", c, i-1)
		}
	}
	return n, lenBytes, fixed, nil
}

// readLen reads a big-endian length of k = 1, 2 or 4 bytes.
func readLen(b []byte, k int) uint64 {
	switch k {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.BigEndian.Uint16(b))
	}
	return uint64(binary.BigEndian.Uint32(b))
}
