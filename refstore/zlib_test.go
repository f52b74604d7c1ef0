package refstore

import (
	"bytes"
	"compress/zlib"
	"testing"
)

// readStored reads what storeZlib writes, whole, at any size (one block
// holds at most 65,535 bytes), and leaves everything else to the inflater:
// a compressed stream, a stream cut short, one whose checksum fails.
func TestReadStored(t *testing.T) {
	for _, n := range []int{0, 1, 100, 0xffff, 0x10000, 200000} {
		data := bytes.Repeat([]byte("liza "), n/5+1)[:n]
		var buf bytes.Buffer
		storeZlib(&buf, "", data)
		stream := append([]byte("junk before"), buf.Bytes()...)
		got, ok := readStored(bytes.NewReader(stream), int64(len("junk before")), uint64(n))
		if !ok || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes stored: ok %v, %d bytes back", n, ok, len(got))
		}
		// The same stream read through zlib, as git reads it.
		zr, err := zlib.NewReader(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		var back bytes.Buffer
		if _, err := back.ReadFrom(zr); err != nil || !bytes.Equal(back.Bytes(), data) {
			t.Fatalf("%d bytes stored, read by zlib: %v", n, err)
		}
		if n == 0 {
			continue
		}
		bad := append([]byte(nil), buf.Bytes()...)
		bad[len(bad)-5] ^= 1 // the last byte of data: the checksum fails
		if _, ok := readStored(bytes.NewReader(bad), 0, uint64(n)); ok {
			t.Errorf("%d bytes, one changed: read as good", n)
		}
		if _, ok := readStored(bytes.NewReader(buf.Bytes()[:buf.Len()-1]), 0, uint64(n)); ok {
			t.Errorf("%d bytes, cut short: read as good", n)
		}
		if _, ok := readStored(bytes.NewReader(buf.Bytes()), 0, uint64(n+1)); ok {
			t.Errorf("%d bytes read as %d", n, n+1)
		}
		if n < 100 {
			continue // too few to compress: zlib stores them too
		}
		var packed bytes.Buffer
		zw, _ := zlib.NewWriterLevel(&packed, zlib.BestSpeed)
		zw.Write(data)
		zw.Close()
		if _, ok := readStored(bytes.NewReader(packed.Bytes()), 0, uint64(n)); ok {
			t.Errorf("%d bytes compressed: read as stored", n)
		}
	}
}
