package transcript

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// maxRecordLine bounds a log line when reading: a record holds at most
// MaxLine bytes of output, which JSON may spell in up to six bytes each
// (\u001b).
const maxRecordLine = 6*MaxLine + 4096

// MaxReadFile is the largest session log ReadFile reads whole; a bigger
// one is refused (read it with Scan or Follow, which stream).
const MaxReadFile = 512 << 20

// ErrNotLog is returned for a file whose first line is no header: not a
// session log (an older plain .log, or another file).
var ErrNotLog = errors.New("not a session log (its first line is no header)")

// Scan reads the records of a session log from r, calling fn with each
// after the header, which it returns. A line that cannot be read (cut,
// too long, not a record) is given as a record with only Bytes set.
// A last line without its newline that is not whole JSON is being
// written: it is left for a later read. fn's error stops the scan and is
// returned.
func Scan(r io.Reader, fn func(Record) error) (Header, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var h Header
	first := true
	for {
		line, size, err := readLine(br)
		if err == io.EOF && size > 0 && !json.Valid(line) {
			// The last line of a log still being written, not whole yet.
			size = 0
		}
		if size > 0 {
			rec, ok := decode(line, size)
			if first {
				if !ok || rec.Header == nil {
					return h, ErrNotLog
				}
				h, first = *rec.Header, false
			} else if ferr := fn(rec); ferr != nil {
				return h, ferr
			}
		}
		if err == io.EOF {
			if first {
				return h, ErrNotLog
			}
			return h, nil
		}
		if err != nil {
			return h, err
		}
	}
}

// ReadFile reads a whole session log: its header and its records.
func ReadFile(path string) (Header, []Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > MaxReadFile {
		return Header{}, nil, fmt.Errorf("%s is %d bytes, more than the %d a whole read takes", path, fi.Size(), MaxReadFile)
	}
	var recs []Record
	h, err := Scan(f, func(r Record) error { recs = append(recs, r); return nil })
	return h, recs, err
}

// readLine reads one line of at most maxRecordLine bytes (the rest of a
// longer one is skipped), returning its full size; size 0 at the end.
func readLine(br *bufio.Reader) ([]byte, int, error) {
	var line []byte
	size := 0
	for {
		chunk, err := br.ReadSlice('\n')
		size += len(chunk)
		if len(line)+len(chunk) <= maxRecordLine {
			line = append(line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), size, err
	}
}

// decode reads one log line as a record; one that is not is given with
// only its size.
func decode(line []byte, size int) (Record, bool) {
	var r Record
	if len(line) == 0 {
		return r, false
	}
	if json.Unmarshal(line, &r) != nil {
		return Record{Bytes: size}, false
	}
	return r, true
}

// followPoll is how often Follow looks for more of the log.
var followPoll = 200 * time.Millisecond

// Follow calls fn with the log's records as they are written, from the
// first (the header) on: it reads what the log holds, then what is appended,
// until the End record (it returns nil) or ctx is done (its error). A line
// still being written is read once whole.
func Follow(ctx context.Context, path string, fn func(Record)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var pending []byte
	skipping := false // inside a line longer than maxRecordLine
	first := true
	buf := make([]byte, 64<<10)
	for {
		n, rerr := f.Read(buf)
		data := buf[:n]
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				if !skipping && len(pending)+len(data) <= maxRecordLine {
					pending = append(pending, data...)
				} else {
					skipping, pending = true, pending[:0]
				}
				break
			}
			part := data[:i]
			data = data[i+1:]
			if skipping {
				skipping, pending = false, pending[:0]
				fn(Record{Bytes: maxRecordLine + 1})
				continue
			}
			line := append(pending, part...)
			pending = pending[:0]
			rec, ok := decode(bytes.TrimRight(line, "\r"), len(line))
			if first {
				if !ok || rec.Header == nil {
					return ErrNotLog
				}
				first = false
			}
			fn(rec)
			if rec.End != nil {
				return nil
			}
		}
		if rerr != nil && rerr != io.EOF {
			return rerr
		}
		if n == 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(followPoll):
			}
		}
	}
}
