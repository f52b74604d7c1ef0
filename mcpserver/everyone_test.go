package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.yaml.in/yaml/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/mcpserver"
	"github.com/liza-dev/git-liza/ops"
)

// show_task is the task whole, in the seed's field names and order, as
// git liza show ID --json prints it.
func TestShowTask(t *testing.T) {
	b := newBoard(t)
	cs := b.coder(t)
	res := call(t, cs, "show_task", `{"task":"a"}`)
	if res.IsError {
		t.Fatalf("show_task refused: %s", text(res))
	}
	raw := text(res)
	if !strings.HasPrefix(raw, `{"id":"a","description":"do a",`) {
		t.Fatalf("show_task is not in the seed's order: %.120s", raw)
	}
	// The same content as the task's seed YAML.
	y, err := contracts.EncodeYAML(b.task(t, "a"))
	if err != nil {
		t.Fatal(err)
	}
	var want, got map[string]any
	if err := yaml.Unmarshal(y, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("show_task = %v\nwant %v", got, want)
	}
	for _, k := range []string{"status", "assigned_to", "history", "worktree", "base_commit"} {
		if _, ok := got[k]; !ok {
			t.Fatalf("show_task has no %s: %v", k, got)
		}
	}
	if got["priority"] != float64(3) || got["assigned_to"] != "coder-1" {
		t.Fatalf("show_task types: priority %v (%T)", got["priority"], got["priority"])
	}
	// Any task: a coder reads the others too.
	if res := call(t, cs, "show_task", `{"task":"b"}`); res.IsError || !strings.Contains(text(res), `"status":"UNCLAIMED"`) {
		t.Fatalf("show_task b = %s", text(res))
	}
	refused(t, call(t, cs, "show_task", `{"task":"nope"}`), contracts.CodeInvalid, "no task nope")
	refused(t, call(t, cs, "show_task", `{"task":"../../x"}`), contracts.CodeInvalid, "")
}

// log_task is the task's audit log, newest first, bounded.
func TestLogTask(t *testing.T) {
	b := newBoard(t)
	cs := b.planner(t)
	var out mcpserver.LogTaskOut
	must(t, cs, "log_task", `{"task":"a"}`, &out)
	if len(out.Entries) != 2 || out.Entries[0].Op != "claim" || out.Entries[1].Op != "add" || out.Entries[0].Agent != "coder-1" {
		t.Fatalf("log_task a = %+v", out.Entries)
	}
	must(t, cs, "log_task", `{"task":"a","max":1,"patch":true}`, &out)
	if len(out.Entries) != 1 || len(out.Entries[0].Changes) == 0 {
		t.Fatalf("log_task a max 1 with patch = %+v", out.Entries)
	}
	// More entries than the bound: the model gets 20 by default and 200
	// at most, however many it asks for.
	ctx := context.Background()
	for i := range 205 {
		p := 1 + i%5
		if _, err := b.human.EditTask(ctx, ops.EditTaskRequest{Task: "b", Priority: &p}); err != nil {
			t.Fatal(err)
		}
	}
	must(t, cs, "log_task", `{"task":"b"}`, &out)
	if len(out.Entries) != 20 {
		t.Fatalf("log_task b default = %d entries", len(out.Entries))
	}
	must(t, cs, "log_task", `{"task":"b","max":100000}`, &out)
	if len(out.Entries) != 200 {
		t.Fatalf("log_task b max 100000 = %d entries", len(out.Entries))
	}
	refused(t, call(t, cs, "log_task", `{"task":"b","max":-1}`), contracts.CodeInvalid, "max -1")
	refused(t, call(t, cs, "log_task", `{"task":"../b"}`), contracts.CodeInvalid, "")
}

// validate says whether the board is valid, as git liza validate --json.
func TestValidate(t *testing.T) {
	b := newBoard(t)
	cs := b.coder(t)
	var v mcpserver.ValidateOut
	must(t, cs, "validate", `{}`, &v)
	if !v.Valid || v.States != 1 || v.Problems == nil || len(v.Problems) != 0 {
		t.Fatalf("validate = %+v", v)
	}
	must(t, cs, "validate", `{"history":true}`, &v)
	if !v.Valid || v.States != 4 {
		t.Fatalf("validate history = %+v", v)
	}
}

// readResource reads a resource's text, or returns the error.
func readResource(cs *mcp.ClientSession, uri string) (string, error) {
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", err
	}
	var parts []string
	for _, c := range res.Contents {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, ""), nil
}

// resources lists the URIs of a session's resources and templates.
func resources(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var uris []string
	for r, err := range cs.Resources(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	for r, err := range cs.ResourceTemplates(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URITemplate)
	}
	slices.Sort(uris)
	return uris
}

// A coder's session has the contract texts, its task's spec, any spec by
// path, and its role prompt.
func TestResources(t *testing.T) {
	b := newBoard(t)
	prompt := filepath.Join(t.TempDir(), "prompt.md")
	write(t, prompt, "# You are coder-1\n")
	cs := b.session(t, map[string]string{"LIZA_AGENT_ID": "coder-1", "LIZA_TASK": "a", "LIZA_PROJECT_ROOT": b.root, "LIZA_PROMPT_FILE": prompt}, false)
	want := []string{"liza://contract/CORE", "liza://contract/MULTI_AGENT_MODE", "liza://contract/PAIRING_MODE",
		"liza://contract/roles/CODER", "liza://contract/roles/CODE_REVIEWER", "liza://contract/roles/PLANNER",
		"liza://prompt", "liza://spec", "liza://spec/{+path}"}
	// The coder's own resources (its notes) come on top of these.
	got := resources(t, cs)
	for _, uri := range want {
		if !slices.Contains(got, uri) {
			t.Fatalf("resources = %v, without %s", got, uri)
		}
	}
	core, _ := contracts.Text("CORE")
	for uri, want := range map[string]string{
		"liza://contract/CORE": core, "liza://prompt": "# You are coder-1\n",
		"liza://spec": "# Vision\n", "liza://spec/specs/vision.md": "# Vision\n",
	} {
		got, err := readResource(cs, uri)
		if err != nil || got != want {
			t.Fatalf("%s = %.80q, %v; want %.80q", uri, got, err, want)
		}
	}
}

// A spec path is read from the repository's committed tree only: a path
// that leaves it, is absolute, or reaches into .git is refused; a file
// larger than the bound is refused.
func TestSpecResourceEscapes(t *testing.T) {
	b := newBoard(t)
	cs := b.coder(t)
	for uri, want := range map[string]string{
		"liza://spec/../../etc/passwd": "inside the repository", "liza://spec//etc/passwd": "inside the repository",
		"liza://spec/specs/../../x": "inside the repository", "liza://spec/%2e%2e/%2e%2e/etc/passwd": "inside the repository",
		"liza://spec/.git/config": "inside the repository", "liza://spec/specs/./vision.md": "inside the repository",
		"liza://spec/specs/nope.md": "not in the repository",
	} {
		got, err := readResource(cs, uri)
		if err == nil {
			t.Fatalf("%s was read: %.80q", uri, got)
		}
		if !strings.Contains(err.Error(), "exit 1") || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: error %v, want a refusal saying %q", uri, err, want)
		}
	}
	write(t, filepath.Join(b.root, "specs", "huge.md"), strings.Repeat("spec line\n", 40<<10))
	git(t, b.root, "add", ".")
	git(t, b.root, "commit", "-q", "-m", "huge spec")
	if _, err := readResource(cs, "liza://spec/specs/huge.md"); err == nil || !strings.Contains(err.Error(), "larger than 256 KiB") {
		t.Fatalf("huge spec: %v", err)
	}
	// What is only in the worktree, not committed, is not read.
	write(t, filepath.Join(b.root, "specs", "draft.md"), "draft\n")
	if _, err := readResource(cs, "liza://spec/specs/draft.md"); err == nil {
		t.Fatal("an uncommitted file was read")
	}
}

// A huge prompt file is cut at the bound, and says so; the operator's
// session has no prompt and no task spec.
func TestPromptBounded(t *testing.T) {
	b := newBoard(t)
	prompt := filepath.Join(t.TempDir(), "prompt.md")
	write(t, prompt, "x"+strings.Repeat("é", 300<<10)) // the bound falls inside an é
	cs := b.session(t, map[string]string{"LIZA_AGENT_ID": "planner-1", "LIZA_PROJECT_ROOT": b.root, "LIZA_PROMPT_FILE": prompt}, false)
	got, err := readResource(cs, "liza://prompt")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > 257<<10 || !strings.Contains(got, "[cut: the file has more than 256 KiB") || !strings.HasPrefix(got, "xé") {
		t.Fatalf("prompt of %d bytes, ends %q", len(got), got[len(got)-80:])
	}
	if strings.ContainsRune(got, '\uFFFD') {
		t.Fatal("the prompt was cut inside a character")
	}
	// A prompt that is not a regular file is refused, not read forever.
	cs = b.session(t, map[string]string{"LIZA_AGENT_ID": "planner-1", "LIZA_PROJECT_ROOT": b.root, "LIZA_PROMPT_FILE": os.DevNull}, false)
	if _, err := readResource(cs, "liza://prompt"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("prompt /dev/null: %v", err)
	}

	hs := b.humanSession(t)
	for _, uri := range resources(t, hs) {
		if uri == "liza://prompt" || uri == "liza://spec" {
			t.Fatalf("the operator's session has %s", uri)
		}
	}
	if got := resources(t, hs); len(got) != 7 || got[6] != "liza://spec/{+path}" { // the contract texts and the spec template
		t.Fatalf("human resources = %v", got)
	}
}
