package agent

import (
	"os"
	"path/filepath"
)

// CLICache is where .ci/run installs the agent CLIs for the tests that run
// them for real: $LIZA_AGENT_CLIS, else git-liza/agent-clis in the user's
// cache directory ("" when there is none).
func CLICache() string {
	if d := os.Getenv("LIZA_AGENT_CLIS"); d != "" {
		return d
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(cache, "git-liza", "agent-clis")
}

// CachedCLI is the program of the npm package dir installed in CLICache
// (claude, codex, gemini), or "".
func CachedCLI(dir, program string) string {
	base := CLICache()
	if base == "" {
		return ""
	}
	p := filepath.Join(base, dir, "node_modules", ".bin", program)
	if fi, err := os.Stat(p); err != nil || fi.IsDir() {
		return ""
	}
	return p
}
