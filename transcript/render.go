package transcript

import (
	"fmt"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
)

// Render shows a step on one line, without its time: a word for its kind,
// then what it says, escaped for a terminal (contracts.Printable: newlines
// and escapes are shown, never acted on). A text longer than width bytes
// (width <= 0: 200) is cut, with its full size: "… (4,312 bytes)". A
// failed tool result reads "error  TOOL: TEXT".
func Render(st Step, width int) string {
	if width <= 0 {
		width = 200
	}
	var head, body string
	full := st.Bytes
	switch st.Kind {
	case KindStart:
		head = "start"
		var parts []string
		if st.SessionID != "" {
			parts = append(parts, "session "+st.SessionID)
		}
		if st.Model != "" {
			parts = append(parts, "model "+st.Model)
		}
		body = strings.Join(parts, ", ")
	case KindTool:
		head, body = "tool", st.Tool
		if st.Input != "" {
			body += " " + st.Input
		}
	case KindResult:
		head, body = "result", st.Text
		if st.Error {
			head = "error"
			if st.Tool != "" {
				body = st.Tool + ": " + st.Text
			}
		}
	case KindUsage:
		head = "usage"
		if u := st.Usage; u != nil {
			body = fmt.Sprintf("%s in, %s out", contracts.Thousands(u.InputTokens), contracts.Thousands(u.OutputTokens))
			if u.CacheReadTokens > 0 || u.CacheWriteTokens > 0 {
				body += fmt.Sprintf(", cache %s read, %s written", contracts.Thousands(u.CacheReadTokens), contracts.Thousands(u.CacheWriteTokens))
			}
			if u.CostUSD > 0 {
				body += fmt.Sprintf(", $%.4f", u.CostUSD)
			}
		}
	case KindError:
		head, body = "error", st.Text
		if !st.Error {
			head = "warn"
		}
	default:
		head, body = st.Kind, st.Text
	}
	if st.Failure != nil {
		body += " [" + st.Failure.Kind + ": " + st.Failure.Fix + "]"
	}
	if full < len(body) {
		full = 0
	}
	shown := contracts.Printable(body)
	if len(shown) > width || full > 0 {
		size := full
		if size == 0 {
			size = len(body)
		}
		shown = contracts.Printable(cut(body, width))
		if len(shown) > width {
			shown = cut(shown, width)
		}
		shown += "… (" + contracts.Thousands(int64(size)) + " bytes)"
	}
	return fmt.Sprintf("%-6s %s", head, shown)
}
