package refstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime/debug"
	"sync"
)

// packFile is one file of a pack (its .idx or its .pack), read at offsets:
// from memory where the system maps it (mapFile), as git reads packs,
// else with positioned reads. A lookup in a mapped index is a binary
// search in memory: a claim on a board of 10,000 tasks made about 1,300
// pread calls to find its objects in a dozen packs.
type packFile struct {
	// mu is held to read while a read copies out of the file, and to
	// write to close it: a pack let go of (pack.close) by one goroutine
	// while another still reads it is unmapped once that read is done.
	mu     sync.RWMutex
	closed bool
	f      *os.File // nil once mapped
	data   []byte   // the mapped file
	size   int64
}

// errPackClosed is a read of a pack file let go of since (pack.close): it
// was tidied away, and its reader lists the packs again, as for one whose
// files went before it opened them.
var errPackClosed = fmt.Errorf("pack file let go of: %w", fs.ErrNotExist)

// maxMapped is the largest file mapped; a larger one is read with
// positioned reads.
const maxMapped = 1 << 30

// errPackFault is a read of a mapped file that the system could not
// serve: the file was cut short under the mapping. Files of a pack are
// never rewritten in place by git; a process that can write the object
// directory could, and then gets this error rather than a crash.
var errPackFault = errors.New("pack file changed under its mapping")

func openPackFile(path string) (*packFile, error) {
	f, err := openRead(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	pf := &packFile{f: f, size: fi.Size()}
	if pf.size > 0 && pf.size <= maxMapped {
		if data, err := mapFile(f, int(pf.size)); err == nil {
			pf.data = data
			pf.f = nil
			f.Close() // the mapping holds the file
		}
	}
	return pf, nil
}

// ReadAt reads len(b) bytes at off, as os.File.ReadAt does.
func (pf *packFile) ReadAt(b []byte, off int64) (n int, err error) {
	pf.mu.RLock()
	defer pf.mu.RUnlock()
	if pf.closed {
		return 0, errPackClosed
	}
	if pf.data == nil {
		return pf.f.ReadAt(b, off)
	}
	if off < 0 || off >= int64(len(pf.data)) {
		return 0, io.EOF
	}
	// A fault on the mapping (the file truncated) panics here instead of
	// killing the process.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			n, err = 0, errPackFault
		}
	}()
	n = copy(b, pf.data[off:])
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

func (pf *packFile) Close() error {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	if pf.closed {
		return nil
	}
	pf.closed = true
	if pf.data != nil {
		err := unmapFile(pf.data)
		pf.data = nil
		return err
	}
	return pf.f.Close()
}
