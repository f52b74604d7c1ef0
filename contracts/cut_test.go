package contracts

import (
	"strings"
	"testing"
)

// CutText keeps max characters (not bytes), two thirds from the start and
// the rest from the end, and says how many went; a text that fits comes
// back as it is. CutAgain cuts what CutText kept, and counts all it lost.
func TestCutText(t *testing.T) {
	if got, lost := CutText("héllo", 5); got != "héllo" || lost != 0 {
		t.Fatalf("a text that fits: %q, %d", got, lost)
	}
	s := "A" + strings.Repeat("é", 98) + "Z"
	got, lost := CutText(s, 30)
	want := "A" + strings.Repeat("é", 19) + " […70 characters cut…] " + strings.Repeat("é", 9) + "Z"
	if got != want || lost != 70 {
		t.Fatalf("cut: %q, %d\nwant %q", got, lost, want)
	}
	again, lost := CutAgain(got, 9)
	want = "Aééééé" + " […91 characters cut…] " + "ééZ"
	if again != want || lost != 91 {
		t.Fatalf("cut again: %q, %d\nwant %q", again, lost, want)
	}
	if same, lost := CutAgain(got, 30); same != got || lost != 70 {
		t.Fatalf("cut again to the same bound: %q, %d", same, lost)
	}
}
