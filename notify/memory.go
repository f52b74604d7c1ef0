package notify

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"

	"github.com/liza-dev/git-liza/atomicfile"
)

// MemoryKeep bounds how many sent events a watcher remembers: far more
// than a board holds conditions at once, so that an event still on is
// never forgotten and sent again.
const MemoryKeep = 2000

// MemoryFile is where a repository's watchers remember what they sent,
// relative to the git common dir: outside every checkout, shared by the
// watchers of all the worktrees.
const MemoryFile = "liza/notify-sent.json"

// Memory is the ids of the events sent, oldest first.
type Memory struct {
	path string
	ids  []string
	set  map[string]bool
}

// LoadMemory reads the memory at path; none yet, or a file that does not
// read (the next Save replaces it), is an empty memory.
func LoadMemory(path string) (*Memory, error) {
	m := &Memory{path: path, set: map[string]bool{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	if json.Unmarshal(data, &ids) == nil {
		for _, id := range ids {
			m.Add(id)
		}
	}
	return m, nil
}

// lockMemory takes the lock of the memory at path, waiting for another
// watcher of the repository that holds it; the function it returns lets
// it go. The lock is an flock on a file beside the memory: the kernel lets
// it go when its holder dies.
func lockMemory(path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// Sent reports whether the event id was sent.
func (m *Memory) Sent(id string) bool { return m.set[id] }

// Add remembers id, forgetting the oldest beyond MemoryKeep.
func (m *Memory) Add(id string) {
	if m.set[id] {
		return
	}
	m.ids = append(m.ids, id)
	m.set[id] = true
	if n := len(m.ids) - MemoryKeep; n > 0 {
		for _, old := range m.ids[:n] {
			delete(m.set, old)
		}
		m.ids = slices.Clone(m.ids[n:])
	}
}

// Save replaces the file atomically: a watcher and a cron job never read
// half of it.
func (m *Memory) Save() error {
	data, err := json.MarshalIndent(m.ids, "", " ")
	if err != nil {
		return err
	}
	return atomicfile.Write(m.path, append(data, '\n'), 0o644)
}
