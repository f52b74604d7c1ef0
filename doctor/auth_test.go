package doctor

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/agent"
)

// fakeCLI is a preset's program that answers a status command: claude
// auth status as claude 2.1.328 does when not logged in (exit 1, JSON),
// codex login status as codex 0.169.0 does (exit 1, "Not logged in").
func fakeCLI(t *testing.T, name, script string) agent.Launch {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := agent.Resolve(name, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	l.Command[0] = p
	return l
}

const claudeLoggedOut = `echo '{"loggedIn": false, "authMethod": "none", "apiProvider": "firstParty"}'; exit 1`
const codexLoggedOut = `echo 'Not logged in' >&2; exit 1`

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestAuth(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	for _, tc := range []struct {
		name   string
		launch agent.Launch
		env    map[string]string
		files  map[string]string // under home
		level  string
		want   string // in Detail + Fix
	}{
		{"claude no key", fakeCLI(t, "claude", claudeLoggedOut), nil, nil, Fail,
			"claude is not logged in (claude auth status: loggedIn false) and no ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_OAUTH_TOKEN is set: set ANTHROPIC_API_KEY"},
		{"claude key", fakeCLI(t, "claude", claudeLoggedOut), map[string]string{"ANTHROPIC_API_KEY": "sk-x"}, nil, OK, "ANTHROPIC_API_KEY is set"},
		{"claude logged in", fakeCLI(t, "claude", `echo '{"loggedIn": true, "authMethod": "claude.ai"}'`), nil, nil, OK, "logged in (claude.ai)"},
		{"codex no key", fakeCLI(t, "codex", codexLoggedOut), nil, nil, Fail,
			"codex is not logged in (codex login status) and neither CODEX_API_KEY nor OPENAI_API_KEY is set: set CODEX_API_KEY"},
		{"codex key", fakeCLI(t, "codex", codexLoggedOut), map[string]string{"CODEX_API_KEY": "sk-x"}, nil, OK, "CODEX_API_KEY is set"},
		{"codex provider env_key unset", fakeCLI(t, "codex", codexLoggedOut), nil,
			map[string]string{".codex/config.toml": "model = \"m\"\nmodel_provider = \"mine\"\n\n[model_providers.mine]\nname = \"Mine\"\nbase_url = \"http://127.0.0.1:1/v1\"\nenv_key = \"MINE_KEY\"\n"}, Fail,
			"codex's model provider mine (in " + home + "/.codex/config.toml) takes its key from MINE_KEY, which is not set: set MINE_KEY"},
		{"codex provider without key", fakeCLI(t, "codex", codexLoggedOut), nil,
			map[string]string{".codex/config.toml": "profile = \"p\"\n[profiles.p]\nmodel_provider = \"local\" # ours\n[model_providers.local]\nbase_url = 'http://127.0.0.1:1/v1'\n"}, OK,
			"codex's model provider local (http://127.0.0.1:1/v1) takes no key"},
		{"gemini nothing", fakeCLI(t, "gemini", "exit 0"), nil, nil, Fail,
			"gemini has no auth method: no GEMINI_API_KEY, no Vertex AI settings, no security.auth.selectedType in " + home + "/.gemini/settings.json: set GEMINI_API_KEY"},
		{"gemini api-key type without key", fakeCLI(t, "gemini", "exit 0"), nil,
			map[string]string{".gemini/settings.json": `{"security": {"auth": {"selectedType": "gemini-api-key"}}}`}, Fail,
			"gemini's auth type is gemini-api-key and GEMINI_API_KEY is not set: set GEMINI_API_KEY"},
		{"gemini key", fakeCLI(t, "gemini", "exit 0"), map[string]string{"GEMINI_API_KEY": "x"}, nil, OK, "GEMINI_API_KEY is set"},
		{"gemini key in .env", fakeCLI(t, "gemini", "exit 0"), nil, map[string]string{".gemini/.env": "GEMINI_API_KEY=abc\n"}, OK, "GEMINI_API_KEY is set in " + home + "/.gemini/.env"},
		{"gemini oauth without login", fakeCLI(t, "gemini", "exit 0"), nil,
			map[string]string{".gemini/settings.json": `{"security": {"auth": {"selectedType": "oauth-personal"}}}`}, Fail,
			"gemini's auth type is oauth-personal and it has not logged in (no " + home + "/.gemini/oauth_creds.json): log gemini in as this user"},
		{"command of one's own", agent.Launch{Command: []string{"/bin/sh"}}, nil, nil, OK, "a command of your own: git-liza cannot tell how it authenticates"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.RemoveAll(home)
			for f, c := range tc.files {
				p := filepath.Join(home, f)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			e := map[string]string{"HOME": home}
			for k, v := range tc.env {
				e[k] = v
			}
			c := Auth(ctx, tc.launch, env(e), "", false)
			got := c.Detail
			if c.Fix != "" {
				got += ": " + c.Fix
			}
			if c.Name != "agent auth" || c.Level != tc.level || !strings.Contains(got, tc.want) {
				t.Errorf("%s %s: %s\nwant %s ...%s...", c.Name, c.Level, got, tc.level, tc.want)
			}
			if c.Failed() && c.Err() == nil {
				t.Errorf("a failed check without an error")
			}
		})
	}
}

// The network probe, in doctor only: one request to the endpoint the base
// URL variable names; a key the endpoint refuses fails, an endpoint that
// does not answer fails, any other answer is taken as a working endpoint.
func TestAuthProbe(t *testing.T) {
	ctx := context.Background()
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("x-api-key"))
		if r.Header.Get("x-api-key") != "good" {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`))
			return
		}
		w.Write([]byte(`{"data":[]}`))
	}))
	defer srv.Close()
	l := fakeCLI(t, "claude", claudeLoggedOut)
	home := t.TempDir()
	c := Auth(ctx, l, env(map[string]string{"HOME": home, "ANTHROPIC_API_KEY": "good", "ANTHROPIC_BASE_URL": srv.URL}), "", true)
	if c.Level != OK || !strings.Contains(c.Detail, srv.URL+" answers") {
		t.Errorf("good key: %+v", c)
	}
	c = Auth(ctx, l, env(map[string]string{"HOME": home, "ANTHROPIC_API_KEY": "bad", "ANTHROPIC_BASE_URL": srv.URL}), "", true)
	if c.Level != Fail || !strings.Contains(c.Detail, "refuses the key in ANTHROPIC_API_KEY (HTTP 401)") {
		t.Errorf("bad key: %+v", c)
	}
	if strings.Join(seen, "\n") != "GET /v1/models good\nGET /v1/models bad" {
		t.Errorf("requests: %q", seen)
	}
	url := srv.URL
	srv.Close()
	c = Auth(ctx, l, env(map[string]string{"HOME": home, "ANTHROPIC_API_KEY": "good", "ANTHROPIC_BASE_URL": url}), "", true)
	if c.Level != Fail || !strings.Contains(c.Detail, url+" does not answer") || !strings.Contains(c.Fix, "ANTHROPIC_BASE_URL") {
		t.Errorf("closed: %+v", c)
	}
	// Offline (agent and run), no request is made.
	c = Auth(ctx, l, env(map[string]string{"HOME": home, "ANTHROPIC_API_KEY": "good", "ANTHROPIC_BASE_URL": url}), "", false)
	if c.Level != OK {
		t.Errorf("offline: %+v", c)
	}
}
