package transcript

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"
)

// The kinds of Failure.
const (
	FailAuth        = "auth"        // not logged in, no or a bad API key
	FailUnreachable = "unreachable" // the endpoint did not answer (connection refused, DNS)
	FailRateLimit   = "rate_limit"  // too many requests: waiting helps
	FailQuota       = "quota"       // the account's credits or usage limit are spent
	FailModel       = "model"       // the model asked for does not exist for the account
)

// Classify says whether a session failed for its environment (the CLI not
// logged in, its endpoint unreachable, a rate limit or quota, an unknown
// model) rather than its task, from the steps of its stream (the last few
// hundred) and its exit status (-1 when it was stopped); nil when it did
// not, or cannot be told.
//
// Only what the CLI itself reports counts: the error events of its stream
// after the model's last text or tool call (what came before, the CLI
// retried past), and its exit code. The model's text and the tools'
// output, which an agent writes as it likes, are never read, and a
// session that exited 0 did not fail. Claude Code names the failure with
// an error code of its own (the parser keeps it as Step.Code); codex
// exec --json and gemini give text only, so their own fixed messages are
// matched, and the API's error object where gemini quotes it.
func Classify(format string, steps []Step, exit int) *Failure {
	if exit == 0 {
		return nil
	}
	var last *Step
	var stderr []string
	for i := len(steps) - 1; i >= 0; i-- {
		st := &steps[i]
		if st.Kind == KindText || st.Kind == KindTool || st.Kind == KindResult {
			break
		}
		if st.Failure != nil {
			return st.Failure
		}
		if format == FormatClaude && st.Kind == KindError && st.Code != "" {
			if f := claudeFailure(st.Code, st.Text); f != nil {
				return f
			}
		}
		switch {
		case st.Kind == KindError && st.Error && last == nil:
			last = st
		case st.Kind == KindStderr && len(stderr) < 64:
			stderr = append(stderr, st.Text)
		}
	}
	switch format {
	case FormatCodex:
		if last != nil {
			return codexFailure(last.Text)
		}
	case FormatGemini:
		if last != nil {
			if f := geminiFailure(last.Text, stderr); f != nil {
				return f
			}
		}
		if exit == geminiAuthExit {
			return geminiAuth(stderr)
		}
	}
	return nil
}

// claudeFailure is the failure a Claude Code error code names (the
// "error" of the assistant message it makes itself for a failed request),
// text being that message; nil for a code that is no environment failure.
// A server_error without an HTTP response is an endpoint that did not
// answer: its text ends with the network error's code, "(ECONNREFUSED)".
func claudeFailure(code, text string) *Failure {
	f := &Failure{Message: oneLineCut(text)}
	switch code {
	case "authentication_failed", "oauth_org_not_allowed", "account_on_hold", "verification_required", "cloud_credential_error":
		f.Kind, f.Fix = FailAuth, "set ANTHROPIC_API_KEY (or log claude in: claude auth login, or claude setup-token for CLAUDE_CODE_OAUTH_TOKEN)"
	case "billing_error":
		f.Kind, f.Fix = FailQuota, "add credits or raise the usage limit of the Anthropic account"
	case "rate_limit", "overloaded":
		f.Kind, f.Fix = FailRateLimit, "wait for the API's rate limit to reset, or run fewer agents at once"
	case "model_not_found":
		f.Kind, f.Fix = FailModel, "set a model the account can use (ANTHROPIC_MODEL, or model in Claude Code's settings)"
	case "server_error", "unknown":
		if !nodeNetErr().MatchString(text) {
			return nil
		}
		f.Kind, f.Fix = FailUnreachable, "check the network, and ANTHROPIC_BASE_URL if set"
	default:
		return nil
	}
	return f
}

// nodeNetErr is the code of a network error of Node.js, as Claude Code
// ends its message with it.
var nodeNetErr = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\((ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNRESET|EHOSTUNREACH|ENETUNREACH)\)`)
})

// codexMissingEnv is codex's refusal to start a request without its model
// provider's env_key.
var codexMissingEnv = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("^Missing environment variable: `([A-Za-z_][A-Za-z0-9_]*)`")
})

// codexStatus is the HTTP status codex gives up on: "unexpected status
// 401 Unauthorized: ...", "exceeded retry limit, last status: 429 ...".
var codexStatus = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^unexpected status|^exceeded retry limit, last status:) (\d{3})\b`)
})

// codexFailure reads the message of codex's last error event (turn.failed
// or error).
func codexFailure(msg string) *Failure {
	f := &Failure{Message: oneLineCut(msg)}
	status := ""
	if m := codexStatus().FindStringSubmatch(msg); m != nil {
		status = m[1]
	}
	switch {
	case codexMissingEnv().MatchString(msg):
		v := codexMissingEnv().FindStringSubmatch(msg)[1]
		f.Kind, f.Fix = FailAuth, "set "+v+" (the env_key of codex's model provider in $CODEX_HOME/config.toml)"
	case status == "401" || status == "403" || strings.HasPrefix(msg, "Not logged in"):
		f.Kind, f.Fix = FailAuth, "set CODEX_API_KEY (or OPENAI_API_KEY), or log codex in: codex login"
	case strings.HasPrefix(msg, "Quota exceeded.") || strings.Contains(msg, "hit your usage limit") || strings.HasPrefix(msg, "Usage limit reached"):
		f.Kind, f.Fix = FailQuota, "add credits or raise the usage limit of the account codex uses"
	case status == "429":
		f.Kind, f.Fix = FailRateLimit, "wait for the API's rate limit to reset, or run fewer agents at once"
	case status == "404" || (strings.HasPrefix(msg, "The model `") && strings.Contains(msg, "does not exist")):
		f.Kind, f.Fix = FailModel, "set a model the account can use (model in $CODEX_HOME/config.toml)"
	case strings.Contains(msg, "waiting for network") || strings.Contains(msg, "Connection failed") ||
		strings.Contains(msg, "failed to lookup address information"):
		f.Kind, f.Fix = FailUnreachable, "check the network, and the base_url of codex's model provider in $CODEX_HOME/config.toml"
	default:
		return nil
	}
	return f
}

// geminiAuthExit is gemini's exit code for a failed authentication
// (FatalAuthenticationError), before any request: no key, no auth type.
const geminiAuthExit = 41

// geminiAuth is gemini's authentication failure: its words are on stderr.
func geminiAuth(stderr []string) *Failure {
	msg := "gemini could not authenticate (exit 41)"
	// stderr holds the lines last first: its first words after the
	// notices it always prints.
	for i := len(stderr) - 1; i >= 0; i-- {
		l := strings.TrimSpace(stderr[i])
		if l != "" && !strings.HasPrefix(l, "YOLO mode") && !strings.HasPrefix(l, "Warning:") {
			msg = l
			break
		}
	}
	return &Failure{Kind: FailAuth, Message: oneLineCut(msg), Fix: geminiAuthFix}
}

const geminiAuthFix = "set GEMINI_API_KEY (or an auth type in ~/.gemini/settings.json: security.auth.selectedType)"

// geminiFailure reads gemini's last error: "[API Error: JSON]" quotes the
// API's error object, whose code, status and reason say what failed; an
// unknown model gemini reports as ModelNotFoundError (on stderr, the
// error's class) with the API's words in its result.
func geminiFailure(msg string, stderr []string) *Failure {
	f := &Failure{Message: oneLineCut(msg)}
	var api struct {
		Error struct {
			Code    int    `json:"code"`
			Status  string `json:"status"`
			Details []struct {
				Reason string `json:"reason"`
			} `json:"details"`
		} `json:"error"`
	}
	inner := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(msg), "[API Error: "), "]")
	if json.Unmarshal([]byte(inner), &api) == nil && api.Error.Code != 0 {
		reason := ""
		for _, d := range api.Error.Details {
			reason += d.Reason + " "
		}
		switch e := api.Error; {
		case e.Code == 401 || e.Code == 403 || e.Status == "UNAUTHENTICATED" || e.Status == "PERMISSION_DENIED" || strings.Contains(reason, "API_KEY_INVALID"):
			f.Kind, f.Fix = FailAuth, geminiAuthFix
		case e.Code == 429 || e.Status == "RESOURCE_EXHAUSTED":
			f.Kind, f.Fix = FailRateLimit, "wait for the Gemini API's rate limit or daily quota to reset, or run fewer agents at once"
		case e.Code == 404:
			f.Kind, f.Fix = FailModel, geminiModelFix
		default:
			return nil
		}
		return f
	}
	for _, l := range stderr {
		if strings.Contains(l, "ModelNotFoundError:") {
			f.Kind, f.Fix = FailModel, geminiModelFix
			return f
		}
	}
	if strings.Contains(msg, "fetch failed") {
		f.Kind, f.Fix = FailUnreachable, "check the network, and GOOGLE_GEMINI_BASE_URL if set"
		return f
	}
	return nil
}

const geminiModelFix = "set a model the account can use (GEMINI_MODEL, or model.name in ~/.gemini/settings.json)"

// oneLineCut is a message on one line, cut to a few hundred bytes.
func oneLineCut(s string) string {
	s = oneLine(s)
	if len(s) > 400 {
		s = cut(s, 400) + "…"
	}
	return s
}
