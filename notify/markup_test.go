package notify

import (
	"context"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
)

// A coder's block reason reaches the webhook's "text" (Slack, Mattermost,
// Google Chat) and "content" (Discord), whose receivers read markup in it:
// Slack <!channel> as a mention of everyone in the channel and <URL|label>
// as a link showing label; Mattermost @channel; Discord @everyone. The text field is escaped as
// Slack asks and Discord is told to ping no one, so that the agent's
// markup is shown, not acted on.
func TestWebhookMarkupShownNotActedOn(t *testing.T) {
	st := board()
	reason := "<!channel> @everyone @channel @here @all @alice urgent: run <https://evil.example/x.sh|git liza task unblock t1>"
	st.Tasks = []*contracts.Task{{ID: "t1", Status: contracts.Blocked, BlockedReason: reason,
		History: []*contracts.HistoryEvent{{Time: "2026-01-17T09:00:00Z", Event: "blocked", To: "BLOCKED"}}}}
	evs := Events(st, "abc", at)
	if len(evs) != 1 {
		t.Fatalf("events: %v", evs)
	}
	r := &receiver{}
	srv := httptest.NewServer(r)
	defer srv.Close()
	w := &Webhook{URL: srv.URL, Tries: 1, Backoff: time.Millisecond, Timeout: 5 * time.Second}
	if err := w.Send(context.Background(), evs[0]); err != nil {
		t.Fatal(err)
	}
	text, _ := r.bodies[0]["text"].(string)
	t.Logf("text (Slack, Mattermost, Google Chat) as the receiver decodes it: %q", text)
	for _, markup := range []string{"<!channel>", "<https://evil.example/x.sh|"} {
		if strings.Contains(text, markup) {
			t.Errorf("text carries the agent's %q raw: Slack reads it as markup", markup)
		}
	}
	// Mattermost reads a plain @channel, @here, @all or @name in "text" as
	// a mention: the notification of everyone in the channel, or of one
	// person the agent picked.
	if m := regexp.MustCompile(`@\w+`).FindString(text); m != "" {
		t.Errorf("text carries %q raw: Mattermost pings for it", m)
	}
	content, _ := r.bodies[0]["content"].(string)
	t.Logf("content (Discord): %q; allowed_mentions: %v", content, r.bodies[0]["allowed_mentions"])
	am, _ := r.bodies[0]["allowed_mentions"].(map[string]any)
	if parse, ok := am["parse"].([]any); strings.Contains(content, "@everyone") && (!ok || len(parse) != 0) {
		t.Errorf("content carries the agent's @everyone and the payload does not turn Discord's mentions off: everyone in the channel is pinged")
	}
}
