package refstore

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// packEntryHead encodes a pack entry header: type and size.
func packEntryHead(t objType, size uint64) []byte {
	b := []byte{byte(t)<<4 | byte(size&15)}
	size >>= 4
	for size > 0 {
		b[len(b)-1] |= 0x80
		b = append(b, byte(size&0x7f))
		size >>= 7
	}
	return b
}

// ofsRel encodes an offset delta's distance back to its base.
func ofsRel(rel uint64) []byte {
	b := []byte{byte(rel & 0x7f)}
	for rel >>= 7; rel > 0; rel >>= 7 {
		rel--
		b = append([]byte{0x80 | byte(rel&0x7f)}, b...)
	}
	return b
}

func zlibOf(level int, data []byte) []byte {
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, level)
	zw.Write(data)
	zw.Close()
	return z.Bytes()
}

// writeCraftedPack writes body (entries, after the 12-byte header) as a
// pack of count entries, and an index (version 2) that names id at off.
func writeCraftedPack(t *testing.T, dir string, algo hashAlgo, count uint32, body []byte, id Hash, off uint32) {
	t.Helper()
	var pk bytes.Buffer
	pk.WriteString("PACK")
	binary.Write(&pk, binary.BigEndian, uint32(2))
	binary.Write(&pk, binary.BigEndian, count)
	pk.Write(body)
	h := algo.new()
	h.Write(pk.Bytes())
	sum := h.Sum(nil)
	pk.Write(sum)

	var ix bytes.Buffer
	ix.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	name := id.bytes()
	for i := 0; i < 256; i++ {
		n := uint32(0)
		if i >= int(name[0]) {
			n = 1
		}
		binary.Write(&ix, binary.BigEndian, n)
	}
	ix.Write(name)
	binary.Write(&ix, binary.BigEndian, crc32.ChecksumIEEE(nil))
	binary.Write(&ix, binary.BigEndian, off)
	ix.Write(sum)
	h = algo.new()
	h.Write(ix.Bytes())
	ix.Write(h.Sum(nil))

	base := filepath.Join(dir, ".git", "objects", "pack", "pack-"+id.String())
	if err := os.WriteFile(base+".pack", pk.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base+".idx", ix.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
}

// A pack an agent writes into objects/: a small blob, then a chain of N
// offset deltas, each stating 1 MiB (within the cap of a state file) of
// zeros, which deflate to about a KB. Its index names an existing object
// (README, standing for a state file) at the last delta. unpack inflated
// every delta of the chain and held them all before it applied any, so a
// read capped at 1 MiB allocated N MiB; with a chain of 10,000 (the chain
// bound), 10 GiB from a 10 MB pack. As git does, it walks the chain's
// headers, then applies one delta at a time.
func TestDeltaChainHeldOneDeltaAtATime(t *testing.T) {
	eachMode(t, fileModes[:1], func(t *testing.T) {
		dir := newRepo(t)
		algo := algoOf(mode.format)
		readme := hashOf(t, git(t, dir, "rev-parse", "HEAD:README"))
		const n, size = 128, 1 << 20
		zeros := zlibOf(9, make([]byte, size))
		var body bytes.Buffer
		prev := uint32(12)
		body.Write(packEntryHead(objBlob, 5))
		body.Write(zlibOf(9, []byte("base\n")))
		for i := 0; i < n; i++ {
			off := uint32(12 + body.Len())
			body.Write(packEntryHead(objOfsDelta, size))
			body.Write(ofsRel(uint64(off - prev)))
			body.Write(zeros)
			prev = off
		}
		writeCraftedPack(t, dir, algo, n+1, body.Bytes(), readme, prev)
		fi, _ := os.Stat(mustGlob(t, filepath.Join(dir, ".git", "objects", "pack", "pack-"+readme.String()+".pack")))
		t.Logf("crafted pack: %d bytes, chain of %d deltas of %d bytes each", fi.Size(), n, size)

		// git reads README despite the pack.
		if got, err := runGit(dir, nil, nil, "cat-file", "blob", readme.String()); err != nil || got != "hello" {
			t.Logf("git cat-file: %q, %v", got, err)
		} else {
			t.Logf("git cat-file blob README: %q", got)
		}

		r := open(t, dir)
		var err error
		alloc := allocated(func() { _, err = r.ReadBlobMax(readme, 1<<20) })
		t.Logf("git-liza ReadBlobMax(README, 1 MiB): %d MiB allocated, err %v", alloc>>20, err)
		if alloc > 8<<20 {
			t.Fatalf("a read capped at 1 MiB allocated %d MiB (a chain of %d deltas of 1 MiB each, held at once)", alloc>>20, n)
		}
	})
}

// A reference delta whose base is itself: one entry of a few dozen bytes.
// Up to the chain bound of 10,000, unpack inflated and held it 10,000
// times (625 MiB for a delta of 64 KiB); now it holds none of them while
// it walks the chain, so what the walk costs does not grow with the
// delta's size (what it allocates as garbage, a reader's buffer a step,
// depends on the build: the race detector's is larger).
func TestSelfDeltaHeldNot(t *testing.T) {
	eachMode(t, fileModes[:1], func(t *testing.T) {
		walk := func(size int) uint64 {
			dir := newRepo(t)
			algo := algoOf(mode.format)
			readme := hashOf(t, git(t, dir, "rev-parse", "HEAD:README"))
			var body bytes.Buffer
			body.Write(packEntryHead(objRefDelta, uint64(size)))
			body.Write(readme.bytes())
			body.Write(zlibOf(9, make([]byte, size)))
			writeCraftedPack(t, dir, algo, 1, body.Bytes(), readme, 12)
			// (git itself loops on this pack: not asked here.)
			r := open(t, dir)
			var err error
			alloc := allocated(func() { _, err = r.ReadBlobMax(readme, 1<<20) })
			t.Logf("a self delta of %d KiB: %d MiB allocated, err %v", size>>10, alloc>>20, err)
			return alloc
		}
		small, large := walk(16<<10), walk(64<<10)
		if large > small+64<<20 {
			t.Fatalf("a walk of the chain of a 64 KiB self delta allocated %d MiB, of a 16 KiB one %d MiB: it grows with the delta", large>>20, small>>20)
		}
	})
}

func runGitTimeout(dir string, args ...string) (string, error) {
	cmd := exec.Command("timeout", append([]string{"10", "git"}, args...)...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("%v: %s", err, errb.String())
	}
	return out.String(), nil
}

// Two packs an agent writes into objects/, of one reference delta each:
// pack A holds README (an object of the state) as a delta on Y, pack B
// holds Y as a delta on README. unpack read a base missing from its pack
// wherever it was, round the cycle with no bound (the chain bound counts
// one pack's deltas), until the stack's limit killed the process (fatal,
// not recoverable). As git does, a reference delta's base is looked for
// in its own pack only, and README's real copy is read.
func TestCrossPackDeltaCycleRefused(t *testing.T) {
	if os.Getenv("REDTEAM_H8_CHILD") != "" {
		// Lower the stack limit from 1 GB so that the crash comes sooner
		// and costs less memory; the recursion is the same.
		debug.SetMaxStack(64 << 20)
		r, err := Open(os.Getenv("REDTEAM_H8_CHILD"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.ReadBlobMax(hashOf(t, os.Getenv("REDTEAM_H8_ID")), 1<<20)
		fmt.Println("read returned:", err)
		return
	}
	eachMode(t, fileModes[:1], func(t *testing.T) {
		dir := newRepo(t)
		algo := algoOf(mode.format)
		readme := hashOf(t, git(t, dir, "rev-parse", "HEAD:README"))
		y := hashOf(t, "1111111111111111111111111111111111111111")
		// A delta: base of 6 bytes, result of 6 bytes, copy them.
		delta := []byte{6, 6, 0x90, 6}
		for _, p := range []struct{ name, base Hash }{{readme, y}, {y, readme}} {
			var body bytes.Buffer
			body.Write(packEntryHead(objRefDelta, uint64(len(delta))))
			body.Write(p.base.bytes())
			body.Write(zlibOf(9, delta))
			writeCraftedPack(t, dir, algo, 1, body.Bytes(), p.name, 12)
		}
		got, err := runGitTimeout(dir, "cat-file", "blob", readme.String())
		t.Logf("git cat-file blob README: %q, %v", got, err)

		cmd := exec.Command(os.Args[0], "-test.run=^TestCrossPackDeltaCycleRefused$")
		cmd.Env = append(os.Environ(), "REDTEAM_H8_CHILD="+dir, "REDTEAM_H8_ID="+readme.String())
		out, err := cmd.CombinedOutput()
		head := out
		if len(head) > 600 {
			head = head[:600]
		}
		t.Logf("git-liza ReadBlobMax(README, 1 MiB) in a child: %v\n%s", err, head)
		if bytes.Contains(out, []byte("stack exceeds")) {
			t.Fatalf("reading README from a repository with two crafted packs of %d bytes overflowed the stack", 12+len(delta)+40)
		}
	})
}

// An index whose fan-out says 4,294,967,295 objects, in a file of 1 KB,
// beside an empty pack: an agent writes the two into objects/pack. git
// checks an index's size against its count and ignores it ("index file
// is too small"). The next tidy (after any operation, once the repository
// has more than 8 packs) took it, the smallest pack, to merge, and
// pack.all allocated its tables by the count: about 300 GB, and the
// process died. The index is refused as git refuses it.
func TestIndexCountCheckedAgainstItsSize(t *testing.T) {
	if dir := os.Getenv("REDTEAM_H8_TIDY"); dir != "" {
		mode = fileModes[0]
		r, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		writeOperation(t, r, "the next operation", 4)
		fmt.Println("the operation and its tidy returned")
		return
	}
	eachMode(t, fileModes[:1], func(t *testing.T) {
		dir := newRepo(t)
		for i := range 8 {
			r := open(t, dir)
			writeOperation(t, r, fmt.Sprintf("op %d", i), 3)
			r.Close()
		}
		var pk bytes.Buffer
		pk.WriteString("PACK\x00\x00\x00\x02\x00\x00\x00\x00")
		h := algoOf(mode.format).new()
		h.Write(pk.Bytes())
		pk.Write(h.Sum(nil))
		var ix bytes.Buffer
		ix.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
		for i := 0; i < 256; i++ {
			binary.Write(&ix, binary.BigEndian, uint32(0xffffffff))
		}
		base := filepath.Join(dir, ".git", "objects", "pack", "pack-"+strings.Repeat("ab", 20))
		os.WriteFile(base+".pack", pk.Bytes(), 0o444)
		os.WriteFile(base+".idx", ix.Bytes(), 0o444)
		t.Logf("packs: %d", indexCount(t, dir))
		out, err := runGit(dir, nil, nil, "log", "--oneline", "-1")
		t.Logf("git log -1: %q, %v", out, err)
		out, err = runGit(dir, nil, nil, "count-objects", "-v")
		t.Logf("git count-objects -v: %v %q", err, out)

		cmd := exec.Command(os.Args[0], "-test.run=^TestIndexCountCheckedAgainstItsSize$")
		cmd.Env = append(os.Environ(), "REDTEAM_H8_TIDY="+dir)
		out2, err := cmd.CombinedOutput()
		head := out2
		if i := bytes.Index(out2, []byte("refstore.(*pack).all")); i >= 0 {
			t.Logf("crashed in: %s", bytes.SplitN(out2[i:], []byte("\n"), 3)[:2])
		}
		if len(head) > 500 {
			head = head[:500]
		}
		t.Logf("an operation in a child: %v\n%s", err, head)
		if bytes.Contains(out2, []byte("out of memory")) {
			t.Fatal("the operation's tidy died of a 1 KB index")
		}
	})
}
