package ops_test

import (
	"context"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/ops"
)

// TestUnregisterReason: a supervisor that stops for a crash loop or its
// environment says why on the board, where the next registration clears
// it; a clean stop writes exactly what it wrote before the reason existed;
// the whole history verifies.
func TestUnregisterReason(t *testing.T) {
	human, root := newBoard(t)
	ctx := context.Background()
	coder := human.As("coder-1", 0)
	reg, err := coder.Register(ctx, ops.RegisterRequest{Host: "here"})
	if err != nil {
		t.Fatal(err)
	}
	clean := human.As("coder-1", reg.Generation)
	if _, err := clean.Unregister(ctx, ops.UnregisterRequest{}); err != nil {
		t.Fatal(err)
	}
	if msg := git(t, root, "log", "-1", "--format=%B", "refs/liza/state"); !strings.HasSuffix(strings.TrimSpace(msg), "Liza-Input: {}") || strings.Contains(msg, "reason") {
		t.Fatalf("a clean stop's commit:\n%s", msg)
	}
	reg, err = coder.Register(ctx, ops.RegisterRequest{Host: "here"})
	if err != nil {
		t.Fatal(err)
	}
	long := "crash loop: 3 crashes in 10m0s, last: " + strings.Repeat("x", 5000) + "\x1b[2J"
	if _, err := human.As("coder-1", reg.Generation).Unregister(ctx, ops.UnregisterRequest{Reason: long}); err != nil {
		t.Fatal(err)
	}
	st, err := human.State(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	got := st.Agents["coder-1"].StopReason
	if !strings.HasPrefix(got, "crash loop: 3 crashes in 10m0s, last: xxx") || len(got) > ops.MaxStopReason || strings.Contains(got, "\x1b") {
		t.Fatalf("stop reason %q (%d bytes)", got[:min(len(got), 80)], len(got))
	}
	if subject := git(t, root, "log", "-1", "--format=%s", "refs/liza/state"); !strings.HasPrefix(subject, "supervisor of coder-1 stopped (generation 2): crash loop") {
		t.Fatalf("subject %q", subject)
	}
	if _, err := coder.Register(ctx, ops.RegisterRequest{Host: "here"}); err != nil {
		t.Fatal(err)
	}
	if st, _ = human.State(ctx, ""); st.Agents["coder-1"].StopReason != "" {
		t.Fatal("a new registration kept the stop reason")
	}
	v, err := human.Validate(ctx, ops.ValidateRequest{History: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Problems) != 0 {
		t.Fatalf("history: %v", v.Problems)
	}
}
