package refstore

import (
	"strings"
	"testing"
)

func TestParseHashBothFormats(t *testing.T) {
	sha1 := "0123456789abcdef0123456789abcdef01234567"
	sha256 := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, s := range []string{sha1, sha256} {
		h, ok := ParseHash(s)
		if !ok || h.String() != s || h.Size() != len(s)/2 || h.IsZero() {
			t.Errorf("ParseHash(%s) = %s (size %d), %v", s, h, h.Size(), ok)
		}
		if up, ok := ParseHash(strings.ToUpper(s)); !ok || up != h {
			t.Errorf("upper case %s reads %s", s, up)
		}
	}
	// The first 20 bytes of a SHA-256 id are not the SHA-1 id they spell.
	a, _ := ParseHash(sha1)
	b, _ := ParseHash(sha1 + strings.Repeat("0", 24))
	if a == b {
		t.Error("a SHA-1 id equals a SHA-256 id")
	}
	if m := map[Hash]int{a: 1, b: 2}; len(m) != 2 {
		t.Error("ids of both formats collide as map keys")
	}
	for _, bad := range []string{"", "0123", sha1 + "0", sha1[:39] + "g", sha256 + "00", strings.Repeat("0", 48)} {
		if _, ok := ParseHash(bad); ok {
			t.Errorf("ParseHash(%q) accepted", bad)
		}
	}
}

// The null id of either format is ZeroID, so that == and IsZero agree.
func TestZeroIDBothFormats(t *testing.T) {
	for _, n := range []int{40, 64} {
		h, ok := ParseHash(strings.Repeat("0", n))
		if !ok || !h.IsZero() || h != ZeroID || h != (Hash{}) {
			t.Errorf("%d zeros: %v, %v", n, h, ok)
		}
	}
	if ZeroID.String() != strings.Repeat("0", 40) {
		t.Errorf("ZeroID prints %s", ZeroID)
	}
	if algoSHA256.nullHex() != strings.Repeat("0", 64) || algoSHA1.nullHex() != strings.Repeat("0", 40) {
		t.Error("nullHex")
	}
	if h := hashFromBytes(algoSHA256, make([]byte, 32)); h != ZeroID {
		t.Errorf("32 zero bytes: %v", h)
	}
}

// Literals written for SHA-1 ids keep their meaning.
func TestHashLiteralIsSHA1(t *testing.T) {
	h := Hash{0xab, 0xcd}
	if h.Size() != 20 || h.String() != "abcd"+strings.Repeat("0", 36) {
		t.Errorf("Hash{0xab, 0xcd} = %s", h)
	}
}
