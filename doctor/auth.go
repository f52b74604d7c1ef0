package doctor

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/liza-dev/git-liza/agent"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/httpcall"
)

// Auth checks that a preset's CLI can authenticate, as it would in a
// session: from its API key variable, its own login state (the CLI's
// status command where it has a cheap one: claude auth status, codex
// login status, both offline and a fraction of a second), or the
// settings it reads its auth from (codex's model provider, gemini's auth
// type). With probe (git liza doctor, not agent or run) and a key known,
// it also makes one request to the endpoint, honouring the base-URL
// variable, with a short timeout. A CLI that cannot authenticate fails
// the check (exit 5) with the fix; a command of one's own is not checked.
// getenv is the environment the agents get; root is the project root
// (gemini reads .env files from there), or "".
func Auth(ctx context.Context, l agent.Launch, getenv func(string) string, root string, probe bool) Check {
	c := Check{Name: "agent auth", Level: OK}
	if l.Preset == nil || len(l.Command) == 0 {
		c.Detail = "a command of your own: git-liza cannot tell how it authenticates"
		return c
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	a := auther{ctx: ctx, getenv: getenv, root: root, program: l.Command[0], probe: probe}
	switch l.Preset.Name {
	case "claude":
		a.claude(&c)
	case "codex":
		a.codex(&c)
	case "gemini":
		a.gemini(&c)
	default:
		c.Detail = "no check for " + l.Preset.Name
	}
	if c.Failed() {
		c.Code = contracts.CodeMissingDep
	}
	return c
}

type auther struct {
	ctx     context.Context
	getenv  func(string) string
	root    string
	program string
	probe   bool
}

// home is the user's home directory as the agents get it.
func (a auther) home() string {
	if h := a.getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// firstSet is the first of the variables that is set and not empty.
func (a auther) firstSet(names ...string) string {
	for _, n := range names {
		if strings.TrimSpace(a.getenv(n)) != "" {
			return n
		}
	}
	return ""
}

// status runs the CLI's status command, bounded, with the agents'
// environment; it returns its output (stdout and stderr) and exit code.
func (a auther) status(args ...string) (string, int, error) {
	ctx, cancel := context.WithTimeout(a.ctx, 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.program, args...)
	cmd.Env = agentEnv(a.getenv)
	cmd.Stdin = nil
	out, err := cmd.CombinedOutput()
	if len(out) > 64<<10 {
		out = out[:64<<10]
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode(), nil
	}
	return string(out), 0, err
}

// agentEnv is the environment for a status command: this process's, with
// the variables getenv answers differently (tests) replaced.
func agentEnv(getenv func(string) string) []string {
	env := os.Environ()
	for _, k := range []string{"HOME", "CODEX_HOME", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CONFIG_DIR"} {
		if v := getenv(k); v != os.Getenv(k) {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// claude: a key in the environment (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN,
// CLAUDE_CODE_OAUTH_TOKEN), a cloud provider (Bedrock, Vertex, Foundry),
// else claude auth status: exit 0 when logged in, 1 with "loggedIn":
// false when not (measured with 2.1.328; it also sees an apiKeyHelper).
func (a auther) claude(c *Check) {
	const fix = "set ANTHROPIC_API_KEY, or log claude in as this user: claude auth login (or claude setup-token, then set CLAUDE_CODE_OAUTH_TOKEN)"
	if v := a.firstSet("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"); v != "" {
		c.Detail = v + " is set"
		if a.probe && v != "CLAUDE_CODE_OAUTH_TOKEN" {
			base := strings.TrimRight(a.getenv("ANTHROPIC_BASE_URL"), "/")
			header := map[string]string{"x-api-key": a.getenv(v), "anthropic-version": "2023-06-01"}
			if v == "ANTHROPIC_AUTH_TOKEN" {
				header = map[string]string{"Authorization": "Bearer " + a.getenv(v), "anthropic-version": "2023-06-01"}
			}
			a.probeURL(c, cmpOr(base, "https://api.anthropic.com"), "/v1/models", header, v, "ANTHROPIC_BASE_URL")
		}
		return
	}
	if v := a.firstSet("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY"); v != "" {
		c.Detail = v + " is set: the cloud provider's credentials are not checked here"
		return
	}
	out, code, err := a.status("auth", "status", "--json")
	if err != nil {
		c.Level, c.Detail = Warn, "claude auth status did not run: "+contracts.FirstLine(err.Error())
		return
	}
	var st struct {
		LoggedIn   *bool  `json:"loggedIn"`
		AuthMethod string `json:"authMethod"`
	}
	_ = json.Unmarshal([]byte(out), &st)
	switch {
	case code == 0:
		c.Detail = "logged in"
		if st.AuthMethod != "" {
			c.Detail += " (" + st.AuthMethod + ")"
		}
	case st.LoggedIn != nil && !*st.LoggedIn:
		c.Level, c.Fix = Fail, fix
		c.Detail = "claude is not logged in (claude auth status: loggedIn false) and no ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_OAUTH_TOKEN is set"
	default:
		c.Level, c.Detail = Warn, fmt.Sprintf("claude auth status exited %d: %s", code, contracts.FirstLine(out))
	}
}

// codex: its model provider, from $CODEX_HOME/config.toml (its profile's,
// else model_provider; default openai). A provider of one's own takes its
// key from its env_key variable, or none; openai's is CODEX_API_KEY or
// OPENAI_API_KEY, else codex's login (codex login status: exit 0 logged
// in, 1 "Not logged in", measured with 0.169.0). Without any, codex exec
// does not fail: it retries its request without end.
func (a auther) codex(c *Check) {
	home := cmpOr(a.getenv("CODEX_HOME"), filepath.Join(a.home(), ".codex"))
	file := filepath.Join(home, "config.toml")
	cfg := readCodexConfig(file)
	name := cmpOr(cfg.provider(), "openai")
	p := cfg.section("model_providers." + name)
	switch {
	case name == "oss" || name == "ollama" || name == "lmstudio":
		c.Detail = "codex's model provider " + name + " is local: it takes no key"
		return
	case name != "openai" && p["env_key"] != "":
		key := p["env_key"]
		if a.firstSet(key) == "" {
			c.Level = Fail
			c.Detail = fmt.Sprintf("codex's model provider %s (in %s) takes its key from %s, which is not set", name, file, key)
			c.Fix = "set " + key
			return
		}
		c.Detail = fmt.Sprintf("codex's model provider %s: %s is set", name, key)
		if a.probe && p["base_url"] != "" {
			a.probeURL(c, strings.TrimRight(p["base_url"], "/"), "/models", map[string]string{"Authorization": "Bearer " + a.getenv(key)}, key, "the base_url of model provider "+name+" in "+file)
		}
		return
	case name != "openai" && p["requires_openai_auth"] != "true":
		c.Detail = fmt.Sprintf("codex's model provider %s (%s) takes no key", name, cmpOr(p["base_url"], "no base_url"))
		return
	}
	if v := a.firstSet("CODEX_API_KEY", "OPENAI_API_KEY"); v != "" {
		c.Detail = v + " is set"
		if a.probe && name == "openai" {
			a.probeURL(c, "https://api.openai.com/v1", "/models", map[string]string{"Authorization": "Bearer " + a.getenv(v)}, v, "the network")
		}
		return
	}
	out, code, err := a.status("login", "status")
	switch {
	case err != nil:
		c.Level, c.Detail = Warn, "codex login status did not run: "+contracts.FirstLine(err.Error())
	case code == 0:
		c.Detail = "logged in: " + contracts.FirstLine(out)
	default:
		c.Level = Fail
		c.Detail = "codex is not logged in (codex login status) and neither CODEX_API_KEY nor OPENAI_API_KEY is set"
		c.Fix = "set CODEX_API_KEY, or log codex in as this user: codex login (or printenv OPENAI_API_KEY | codex login --with-api-key)"
	}
}

// codexConfig is what Auth reads of codex's config.toml: the top-level
// keys and those of each [section], as strings; TOML's other forms
// (inline tables, arrays, multi-line strings) are not read.
type codexConfig map[string]map[string]string

var tomlKey = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([A-Za-z0-9_.-]+)\s*=\s*("(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_.+-]+)`)
})

func readCodexConfig(file string) codexConfig {
	cfg := codexConfig{"": {}}
	f, err := os.Open(file)
	if err != nil {
		return cfg
	}
	defer f.Close()
	section := ""
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") && !strings.HasPrefix(line, "[[") {
			section = strings.Trim(strings.TrimSpace(strings.SplitN(line, "#", 2)[0]), "[] ")
			section = strings.ReplaceAll(section, "\"", "")
			if cfg[section] == nil {
				cfg[section] = map[string]string{}
			}
			continue
		}
		if m := tomlKey().FindStringSubmatch(line); m != nil && cfg[section] != nil {
			v := m[2]
			if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
				v = v[1 : len(v)-1]
			}
			cfg[section][m[1]] = v
		}
	}
	return cfg
}

func (c codexConfig) section(name string) map[string]string {
	if s := c[name]; s != nil {
		return s
	}
	return map[string]string{}
}

// provider is the model provider codex uses: its profile's, else the
// top-level one.
func (c codexConfig) provider() string {
	if p := c[""]["profile"]; p != "" {
		if v := c.section("profiles." + p)["model_provider"]; v != "" {
			return v
		}
	}
	return c[""]["model_provider"]
}

// gemini: GEMINI_API_KEY (in the environment, or a .env file gemini
// reads), Vertex AI's settings, else the auth type its settings.json
// selects (security.auth.selectedType), as gemini 0.61.0 refuses to start
// (exit 41) without one.
func (a auther) gemini(c *Check) {
	const fix = "set GEMINI_API_KEY (or choose an auth type in ~/.gemini/settings.json: security.auth.selectedType)"
	key, where := a.geminiKey()
	vertex := strings.EqualFold(a.getenv("GOOGLE_GENAI_USE_VERTEXAI"), "true") &&
		(a.firstSet("GOOGLE_API_KEY") != "" || a.firstSet("GOOGLE_CLOUD_PROJECT") != "" && a.firstSet("GOOGLE_CLOUD_LOCATION") != "")
	settings := filepath.Join(a.home(), ".gemini", "settings.json")
	kind := geminiAuthType(settings)
	if a.root != "" {
		if k := geminiAuthType(filepath.Join(a.root, ".gemini", "settings.json")); k != "" {
			kind = k
		}
	}
	switch {
	case vertex:
		c.Detail = "Vertex AI (GOOGLE_GENAI_USE_VERTEXAI) is set"
	case strings.EqualFold(a.getenv("GOOGLE_GENAI_USE_GCA"), "true"):
		c.Detail = "GOOGLE_GENAI_USE_GCA is set: its login is not checked here"
	case key != "" && (kind == "" || kind == "gemini-api-key"):
		c.Detail = "GEMINI_API_KEY is set" + where
		if a.probe {
			base := strings.TrimRight(a.getenv("GOOGLE_GEMINI_BASE_URL"), "/")
			a.probeURL(c, cmpOr(base, "https://generativelanguage.googleapis.com"), "/v1beta/models", map[string]string{"x-goog-api-key": key}, "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL")
		}
	case kind == "gemini-api-key":
		c.Level, c.Fix = Fail, "set GEMINI_API_KEY"
		c.Detail = "gemini's auth type is gemini-api-key and GEMINI_API_KEY is not set"
	case kind == "oauth-personal":
		creds := filepath.Join(a.home(), ".gemini", "oauth_creds.json")
		if _, err := os.Stat(creds); err != nil {
			c.Level, c.Fix = Fail, "log gemini in as this user (run gemini once and sign in), or set GEMINI_API_KEY"
			c.Detail = "gemini's auth type is oauth-personal and it has not logged in (no " + creds + ")"
			return
		}
		c.Detail = "logged in with Google (" + creds + ")"
	case kind == "vertex-ai":
		c.Level, c.Fix = Fail, "set GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_API_KEY, or GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION"
		c.Detail = "gemini's auth type is vertex-ai and its variables are not set"
	case kind != "":
		c.Detail = "gemini's auth type is " + kind + ": not checked here"
	default:
		c.Level, c.Fix = Fail, fix
		c.Detail = "gemini has no auth method: no GEMINI_API_KEY, no Vertex AI settings, no security.auth.selectedType in " + settings
	}
}

// geminiKey is GEMINI_API_KEY from the environment, else from the first
// .env file gemini reads (from the project root up, then the home's), and
// where it was found.
func (a auther) geminiKey() (string, string) {
	if v := strings.TrimSpace(a.getenv("GEMINI_API_KEY")); v != "" {
		return v, ""
	}
	var files []string
	for dir := a.root; dir != ""; {
		files = append(files, filepath.Join(dir, ".gemini", ".env"), filepath.Join(dir, ".env"))
		up := filepath.Dir(dir)
		if up == dir {
			break
		}
		dir = up
	}
	files = append(files, filepath.Join(a.home(), ".gemini", ".env"), filepath.Join(a.home(), ".env"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || len(b) > 1<<20 {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			l = strings.TrimPrefix(strings.TrimSpace(l), "export ")
			if v, ok := strings.CutPrefix(l, "GEMINI_API_KEY="); ok && strings.Trim(v, `"' `) != "" {
				return strings.Trim(v, `"' `), " in " + f
			}
		}
		// gemini reads the first .env it finds.
		return "", ""
	}
	return "", ""
}

var selectedType = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"selectedType"\s*:\s*"([^"]*)"`) })

// geminiAuthType is the auth type a gemini settings file selects, or "".
func geminiAuthType(file string) string {
	b, err := os.ReadFile(file)
	if err != nil || len(b) > 1<<20 {
		return ""
	}
	var s struct {
		Security struct {
			Auth struct {
				SelectedType string `json:"selectedType"`
			} `json:"auth"`
		} `json:"security"`
	}
	if json.Unmarshal(b, &s) == nil {
		return s.Security.Auth.SelectedType
	}
	// Settings with comments: the key itself.
	if m := selectedType().FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return ""
}

// probeURL makes one GET of base+path with header, bounded: an endpoint
// that does not answer fails (fix: setting, the variable or setting that
// names it), as does one that refuses the key in keyVar (401, 403, or
// Google's 400 API_KEY_INVALID); any other answer shows an endpoint that
// works.
func (a auther) probeURL(c *Check, base, path string, header map[string]string, keyVar, setting string) {
	resp, err := httpcall.Do(a.ctx, httpcall.Request{Method: "GET", URL: base + path, Header: header, Timeout: 8 * time.Second})
	if err != nil {
		// git-liza-http missing: the offline checks stand, unprobed.
		c.Detail = fmt.Sprintf("%s; the endpoint %s was not probed: %v", c.Detail, base, err)
		return
	}
	if resp.Err != "" {
		c.Level, c.Fix = Fail, "check the network, and "+setting
		c.Detail = fmt.Sprintf("%s; the endpoint %s does not answer: %s", c.Detail, base, resp.Err)
		return
	}
	if resp.Status == 401 || resp.Status == 403 || resp.Status == 400 && strings.Contains(resp.Body, "API_KEY_INVALID") {
		c.Level, c.Fix = Fail, "set "+keyVar+" to a key the endpoint takes"
		c.Detail = fmt.Sprintf("%s, but %s refuses the key in %s (HTTP %d)", c.Detail, base, keyVar, resp.Status)
		return
	}
	c.Detail = fmt.Sprintf("%s; %s answers (HTTP %d)", c.Detail, base, resp.Status)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
