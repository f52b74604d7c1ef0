package refstore

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"
)

// hashAlgo is a repository's object format (extensions.objectFormat).
type hashAlgo byte

const (
	algoSHA1   hashAlgo = 0 // the default, and what the zero Hash is
	algoSHA256 hashAlgo = 1
)

// The length of an object id in bytes, in each format.
const (
	sha1Size   = 20
	sha256Size = 32
)

// size is the length of an id in bytes.
func (a hashAlgo) size() int {
	if a == algoSHA256 {
		return sha256Size
	}
	return sha1Size
}

// new returns the hash function that names objects.
func (a hashAlgo) new() hash.Hash {
	if a == algoSHA256 {
		return sha256.New()
	}
	return sha1.New()
}

func (a hashAlgo) String() string {
	if a == algoSHA256 {
		return "sha256"
	}
	return "sha1"
}

// parseAlgo reads an extensions.objectFormat value.
func parseAlgo(s string) (hashAlgo, bool) {
	switch s {
	case "sha1":
		return algoSHA1, true
	case "sha256":
		return algoSHA256, true
	}
	return 0, false
}

// nullHex is the all-zero id as git spells it in this format: the old
// value that means "the ref must not exist".
func (a hashAlgo) nullHex() string {
	return zeros[:2*a.size()]
}

var zeros = strings.Repeat("0", 2*sha256Size)

// Hash is a git object id: a SHA-1 (20 bytes) or a SHA-256 (32 bytes)
// name, whichever the repository uses. The id's bytes come first; the last
// byte says which format it is in, 0 for SHA-1, so that the zero value and
// literals such as Hash{1, 2, 3} are SHA-1 ids. Hashes compare with == and
// serve as map keys: ids of different formats are never equal, except that
// every all-zero id is ZeroID.
type Hash [sha256Size + 1]byte

// algoByte is the index of the byte that holds the format.
const algoByte = sha256Size

// ZeroID is the all-zero object id: as an expected old value it means "the
// ref must not exist". ParseHash gives it for the null id of either format,
// and the ref writer spells it in the repository's format.
var ZeroID Hash

func (h *Hash) algo() hashAlgo { return hashAlgo(h[algoByte]) }

// Size is the length of the id in bytes: 20 for SHA-1, 32 for SHA-256.
func (h Hash) Size() int { return h.algo().size() }

// bytes is the id itself, without the format byte.
func (h *Hash) bytes() []byte { return h[:h.algo().size()] }

// String is the id in hexadecimal, as git prints it: 40 digits for SHA-1,
// 64 for SHA-256.
func (h Hash) String() string { return hex.EncodeToString(h.bytes()) }

// IsZero reports whether h is the all-zero id.
func (h Hash) IsZero() bool { return h == ZeroID }

// ParseHash reads a full hexadecimal object id, in either case: 40 digits
// for SHA-1, 64 for SHA-256.
func ParseHash(s string) (Hash, bool) {
	var h Hash
	switch len(s) {
	case 2 * sha1Size:
	case 2 * sha256Size:
		h[algoByte] = byte(algoSHA256)
	default:
		return Hash{}, false
	}
	if _, err := hex.Decode(h.bytes(), []byte(s)); err != nil {
		return Hash{}, false
	}
	return h.canonical(), true
}

// hashFromBytes makes the id whose bytes are b (of length a.size()).
func hashFromBytes(a hashAlgo, b []byte) Hash {
	var h Hash
	h[algoByte] = byte(a)
	copy(h.bytes(), b)
	return h.canonical()
}

// canonical gives ZeroID for a null id of either format, so that == holds
// between them.
func (h Hash) canonical() Hash {
	for _, b := range h.bytes() {
		if b != 0 {
			return h
		}
	}
	return ZeroID
}

// mustHash reads an id that has already been checked, or gives the zero id.
func mustHash(s string) Hash {
	h, _ := ParseHash(s)
	return h
}

// ErrCorrupt is an object whose content does not hash to its name.
var ErrCorrupt = errors.New("corrupt object")

// checkName refuses an object whose content is not what its id names.
// Neither git nor its object files check this when an object is read,
// and an agent whose sandbox lets it commit can write the object files:
// one that rewrote a loose object of a state commit git-liza has verified
// would otherwise have its content read under the verified id.
func checkName(a hashAlgo, id Hash, t objType, data []byte) error {
	h := a.new()
	io.WriteString(h, t.String()+" "+strconv.Itoa(len(data))+"\x00")
	h.Write(data)
	var sum [sha256Size]byte
	if got := hashFromBytes(a, h.Sum(sum[:0])); got != id {
		return fmt.Errorf("%w: %s holds content whose id is %s (git fsck names it; restore it from a clone)", ErrCorrupt, id, got)
	}
	return nil
}
