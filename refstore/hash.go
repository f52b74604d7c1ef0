package refstore

import "encoding/hex"

// Hash is a git object id (SHA-1).
type Hash [20]byte

// ZeroID is the all-zero object id: as an expected old value it means "the
// ref must not exist".
var ZeroID Hash

// String is the id in hexadecimal, as git prints it.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports whether h is the all-zero id.
func (h Hash) IsZero() bool { return h == ZeroID }

// ParseHash reads a full hexadecimal object id (40 digits, either case).
func ParseHash(s string) (Hash, bool) {
	var h Hash
	if len(s) != 2*len(h) {
		return Hash{}, false
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return Hash{}, false
	}
	return h, true
}

// mustHash reads an id that has already been checked, or gives the zero id.
func mustHash(s string) Hash {
	h, _ := ParseHash(s)
	return h
}
