package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// Resource URIs. Every one is under liza://.
const (
	// uriContract is the prefix of the contract texts: liza://contract/CORE,
	// liza://contract/roles/CODER.
	uriContract = "liza://contract/"
	// uriPrompt is the role prompt the supervisor gave the session.
	uriPrompt = "liza://prompt"
	// uriTaskSpec is the spec file of the session's own task.
	uriTaskSpec = "liza://spec"
	// uriSpec is the prefix of any spec file, by its path in the
	// repository: liza://spec/specs/vision.md.
	uriSpec = "liza://spec/"
)

// Bounds of what a resource returns. A spec or a prompt is prose for a
// model: a file larger than this is not one, and would only fill the
// model's context (or the server's memory).
const (
	maxSpecBytes   = 256 << 10
	maxPromptBytes = 256 << 10
	maxTreeBytes   = 4 << 20
)

// addResources adds the session's resources: the contract texts, the spec
// files (the session's task's, and any by path), and the role prompt. Each
// resource set is a function of its own, so that another set adds itself
// in one line.
func (s *Server) addResources() {
	for _, add := range []func(){s.addContractResources, s.addSpecResources, s.addPromptResource} {
		add()
	}
}

// addContractResources adds one resource per contract text.
func (s *Server) addContractResources() {
	for _, name := range contracts.TextNames() {
		s.mcp.AddResource(&mcp.Resource{URI: uriContract + name, Name: "contract " + name, MIMEType: "text/markdown",
			Description: "The Liza contract text " + name + ", as git liza prompt embeds it."},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				text, ok := contracts.Text(name)
				if !ok {
					return nil, mcp.ResourceNotFoundError(req.Params.URI)
				}
				return textResult(req.Params.URI, "text/markdown", text), nil
			})
	}
}

// addSpecResources adds the spec of the session's own task (a coder's or
// a reviewer's with a task) and, for every session, any spec by its path.
// Both read the file as committed, never from a worktree (see readSpec).
func (s *Server) addSpecResources() {
	if s.id.Task != "" {
		s.mcp.AddResource(&mcp.Resource{URI: uriTaskSpec, Name: "spec of task " + s.id.Task, MIMEType: "text/markdown",
			Description: "The spec file of your task (its spec_ref), as committed on the integration branch."},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				s.mu.Lock()
				defer s.mu.Unlock()
				t, err := s.svc.Task(ctx, "", s.id.Task)
				if err != nil {
					return nil, refuse(err)
				}
				file, _, _ := strings.Cut(t.SpecRef, "#")
				text, err := s.readSpec(ctx, file, t.BaseCommit)
				if err != nil {
					return nil, refuse(err)
				}
				return textResult(req.Params.URI, "text/markdown", text), nil
			})
	}
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: uriSpec + "{+path}", Name: "spec", MIMEType: "text/markdown",
		Description: "A spec file by its path in the repository (a task's spec_ref without its #anchor), as committed on the integration branch (else at HEAD)."},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			file, err := url.PathUnescape(strings.TrimPrefix(req.Params.URI, uriSpec))
			if err != nil {
				return nil, refuse(contracts.Invalidf("spec path in %s: %v", req.Params.URI, err))
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			text, err := s.readSpec(ctx, file, "")
			if err != nil {
				return nil, refuse(err)
			}
			return textResult(req.Params.URI, "text/markdown", text), nil
		})
}

// specPath checks a spec path: a spec_ref is written by agents, and a
// resource URI by the model, so either may try to leave the repository.
// A path is relative, clean, and stays out of .git.
func specPath(file string) (string, error) {
	p := strings.TrimPrefix(file, "./")
	switch {
	case p == "" || strings.ContainsRune(p, 0):
		return "", contracts.Invalidf("spec path %q names no file", contracts.Printable(file))
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || path.Clean(p) != p:
		return "", contracts.Invalidf("spec path %q must be a clean path inside the repository", contracts.Printable(file))
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." || strings.EqualFold(part, ".git") {
			return "", contracts.Invalidf("spec path %q must be a path inside the repository", contracts.Printable(file))
		}
	}
	return p, nil
}

// readSpec reads a file of the repository as committed: at the tip of the
// integration branch, else at base (a task's base commit), else at HEAD
// (where task add also looks for a spec). It is bounded
// in size, and a symbolic link or a submodule is not a spec.
func (s *Server) readSpec(ctx context.Context, file, base string) (string, error) {
	p, err := specPath(file)
	if err != nil {
		return "", err
	}
	snap, err := s.svc.Snapshot(ctx, "")
	if err != nil {
		return "", err
	}
	st, err := snap.Header()
	if err != nil {
		return "", err
	}
	var commits []refstore.Hash
	if integ, ok, err := s.svc.Repo.ReadRef("refs/heads/" + st.Config.IntegrationBranch); err != nil {
		return "", err
	} else if ok {
		commits = append(commits, integ)
	}
	if h, ok := refstore.ParseHash(base); ok {
		commits = append(commits, h)
	}
	// HEAD of the main checkout too, as task add checks a spec_ref.
	if _, head, err := s.svc.Repo.Head(); err != nil {
		return "", err
	} else if !head.IsZero() {
		commits = append(commits, head)
	}
	for _, c := range commits {
		data, found, err := s.blobAt(c, p)
		if err != nil {
			return "", err
		}
		if found {
			return string(data), nil
		}
	}
	return "", contracts.Invalidf("spec %s is not in the repository (integration branch %s)", contracts.Printable(p), contracts.Printable(st.Config.IntegrationBranch))
}

// blobAt reads the file at p in commit's tree, and whether there is one.
func (s *Server) blobAt(commit refstore.Hash, p string) ([]byte, bool, error) {
	repo := s.svc.Repo
	c, err := repo.ReadCommit(commit)
	if err != nil {
		return nil, false, err
	}
	id, parts := c.Tree, strings.Split(p, "/")
	for i, name := range parts {
		entries, err := repo.ReadTreeMax(id, maxTreeBytes)
		if err != nil {
			return nil, false, err
		}
		e, ok := refstore.FindEntry(entries, name)
		if !ok || i < len(parts)-1 && !e.IsTree() {
			return nil, false, nil
		}
		if i == len(parts)-1 && e.Mode != refstore.ModeFile && e.Mode != "100755" {
			return nil, false, contracts.Invalidf("spec %s is not a file (mode %s)", contracts.Printable(p), e.Mode)
		}
		id = e.ID
	}
	data, err := repo.ReadBlobMax(id, maxSpecBytes)
	var big *refstore.TooLargeError
	if errors.As(err, &big) {
		return nil, false, contracts.Invalidf("spec %s is larger than %d KiB: read it from your checkout", contracts.Printable(p), maxSpecBytes>>10)
	}
	return data, err == nil, err
}

// addPromptResource adds the prompt the supervisor gave an agent's session
// (LIZA_PROMPT_FILE); the operator has none.
func (s *Server) addPromptResource() {
	if s.id.Human() || s.id.PromptFile == "" {
		return
	}
	s.mcp.AddResource(&mcp.Resource{URI: uriPrompt, Name: "role prompt", MIMEType: "text/markdown",
		Description: "The prompt your supervisor started this session with: your role, your task and the rules."},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			text, err := readBounded(s.id.PromptFile, maxPromptBytes)
			if err != nil {
				return nil, refuse(err)
			}
			return textResult(req.Params.URI, "text/markdown", text), nil
		})
}

// readBounded reads a regular file, at most max bytes of it: a longer one
// is cut, and says so at its end.
func readBounded(name string, max int64) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", contracts.Invalidf("the prompt file cannot be read: %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", contracts.Invalidf("the prompt file %s is not a regular file", contracts.Printable(name))
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return "", err
	}
	if int64(len(data)) > max {
		// Cut on a character boundary: a rune split in two is dropped.
		return strings.ToValidUTF8(string(data[:max]), "") + fmt.Sprintf("\n\n[cut: the file has more than %d KiB; read %s]\n", max>>10, contracts.Printable(name)), nil
	}
	return string(data), nil
}

func textResult(uri, mime, text string) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: text}}}
}
