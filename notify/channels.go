package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/url"
	"os/exec"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/httpcall"
)

// Channel is one way of telling a person.
type Channel interface {
	// Name is "desktop", "command" or "webhook".
	Name() string
	// Send delivers one event, within the channel's own time bound.
	Send(ctx context.Context, e Event) error
}

// Desktop shows an event with notify-send (seed 003).
type Desktop struct {
	Program string // the notify-send found on PATH
	Timeout time.Duration
}

func (d *Desktop) Name() string { return "desktop" }

// Send runs notify-send with the title and body as arguments: no shell
// sees them. Notification servers read a subset of HTML in the body, and
// terminals may show the title: both are made plain text.
func (d *Desktop) Send(ctx context.Context, e Event) error {
	urgency := "normal"
	if e.Kind == KindBlocked || e.Kind == KindIntegrationFailed || e.Kind == KindBreakerTriggered || e.Kind == KindSupervisorStopped || e.Kind == KindRemoteUnreachable ||
		e.Kind == KindRemoteUnstored || e.Kind == KindDiskFull {
		urgency = "critical"
	}
	body := html.EscapeString(contracts.PrintableText(e.Body + "\n→ " + e.Action))
	return run(ctx, d.Timeout, exec.Command(d.Program, "--app-name=git-liza", "--urgency="+urgency, "--", contracts.Printable(e.Title), body), nil)
}

// Command runs liza.notifyCommand through /bin/sh -c with the event as
// JSON on its standard input.
type Command struct {
	Line    string
	Timeout time.Duration
}

func (c *Command) Name() string { return "command" }

func (c *Command) Send(ctx context.Context, e Event) error {
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return run(ctx, c.Timeout, exec.Command("/bin/sh", "-c", c.Line), append(data, '\n'))
}

// run runs cmd with stdin, in a process group of its own, killed whole
// when it outlasts timeout; a failure quotes the first line of its stderr.
func run(ctx context.Context, timeout time.Duration, cmd *exec.Cmd, stdin []byte) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr boundedBuffer
	cmd.Stderr = &stderr
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			if msg := firstLine(stderr.String()); msg != "" {
				return fmt.Errorf("%v: %s", err, msg)
			}
		}
		return err
	case <-ctx.Done():
		killGroup(cmd)
		select {
		case <-done:
		case <-time.After(2 * time.Second): // a child that left the group keeps stderr open
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("did not finish within %s", timeout)
		}
		return ctx.Err()
	}
}

// boundedBuffer keeps the first 4 KiB written to it.
type boundedBuffer struct{ bytes.Buffer }

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := 4096 - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// firstLine is the first line of s, printable and bounded, as a channel's
// failure is said.
func firstLine(s string) string {
	return clip(contracts.Printable(contracts.FirstLine(s)), 300)
}

// Webhook posts an event as JSON to liza.notifyURL.
type Webhook struct {
	URL string
	// Tries bounds the posts of one event; Backoff is the wait after the
	// first failed one, doubled after each next one; Timeout bounds each.
	Tries   int
	Backoff time.Duration
	Timeout time.Duration
}

func (w *Webhook) Name() string { return "webhook" }

// payload is what the webhook receives: the event's fields, and the same
// text under the names the common receivers read, so that one URL setting
// works with each: "title" and "message" (ntfy's JSON publishing, Gotify,
// most generic receivers), "text" (Slack and Mattermost incoming
// webhooks, Google Chat), "content" (Discord, at most 2000 characters).
type payload struct {
	Event
	Message string `json:"message"`
	Text    string `json:"text"`
	Content string `json:"content"`
	// AllowedMentions tells Discord to ping no one, whatever the text
	// says: an agent's "@everyone" is shown, not acted on.
	AllowedMentions mentions `json:"allowed_mentions"`
}

type mentions struct {
	Parse []string `json:"parse"`
}

// slackText is text as Slack's (and Google Chat's, Mattermost's) text
// field must carry it: &, < and > escaped, so that an agent's <!channel>
// or <https://elsewhere|label> is shown, not read as a mention or a link;
// and a zero-width space after each @, which Mattermost, reading a plain
// @channel, @all, @here or @name as a mention, has no escape for: the
// text shows as written and pings no one.
var slackText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "@", "@\u200b").Replace

// Send posts the event, again after a 5xx, a 429 or no answer, up to
// Tries times with a growing wait; any other status is final.
func (w *Webhook) Send(ctx context.Context, e Event) error {
	text := clip(e.Title+"\n"+e.Body+"\n→ "+e.Action, 1900)
	data, err := json.Marshal(payload{Event: e, Message: text, Text: slackText(text), Content: text,
		AllowedMentions: mentions{Parse: []string{}}})
	if err != nil {
		return err
	}
	wait := w.Backoff
	var last error
	for try := 1; try <= max(w.Tries, 1); try++ {
		if try > 1 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
			wait *= 2
		}
		var again bool
		again, last = w.post(ctx, data, e.Title)
		if last == nil || !again {
			return last
		}
	}
	return last
}

// post makes one POST (through git-liza-http: package httpcall) and says
// whether a failure is worth another try.
func (w *Webhook) post(ctx context.Context, data []byte, title string) (bool, error) {
	resp, err := httpcall.Do(ctx, httpcall.Request{Method: "POST", URL: w.URL, Body: data, Timeout: w.Timeout,
		Header: map[string]string{
			"Content-Type": "application/json",
			"User-Agent":   "git-liza",
			"Title":        title, // ntfy's title, when the URL is a topic's
		}})
	switch {
	case err != nil:
		return false, err
	case resp.Err != "":
		return true, errors.New(resp.Err)
	case resp.Status/100 == 2:
		return false, nil
	}
	again := resp.Status >= 500 || resp.Status == 429
	return again, fmt.Errorf("answered %s", resp.StatusText)
}

// ShowURL is a webhook URL as it may be shown: without the password of
// its user part nor its query, where services put their tokens.
func ShowURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL that does not parse)"
	}
	if u.RawQuery != "" {
		u.RawQuery = "…"
	}
	return u.Redacted()
}
