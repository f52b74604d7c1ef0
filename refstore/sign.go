package refstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
)

// Commits are signed the way git signs them with gpg.format=ssh: the commit
// object without its signature (the payload) is signed by `ssh-keygen -Y
// sign -n git`, and the armored signature goes in a gpgsig header after the
// committer line, each line of it after the first indented by one space.
// `git verify-commit`, `git log --show-signature` and ssh-keygen verify such
// commits as they verify git's own.

// sigNamespace is the namespace git signs commits in.
const sigNamespace = "git"

// WriteCommitSigned is WriteCommit, signed by sign when sign is not nil.
func (r *Repo) WriteCommitSigned(tree Hash, parents []Hash, author Signature, message string, sign func([]byte) ([]byte, error)) (Hash, error) {
	if sign == nil {
		return r.WriteCommit(tree, parents, author, message)
	}
	payload := commitPayload(tree, parents, author, message)
	sig, err := sign(payload)
	if err != nil {
		return Hash{}, err
	}
	return r.odb.write(objCommit, insertSignature(payload, sig))
}

// commitPayload is the commit object WriteCommit stores.
func commitPayload(tree Hash, parents []Hash, author Signature, message string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", tree)
	for _, p := range parents {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	sig := author.encode()
	fmt.Fprintf(&b, "author %s\ncommitter %s\n\n%s", sig, sig, message)
	if !strings.HasSuffix(message, "\n") {
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// insertSignature puts sig in a gpgsig header at the end of payload's
// header.
func insertSignature(payload, sig []byte) []byte {
	header, msg, _ := bytes.Cut(payload, []byte("\n\n"))
	var b bytes.Buffer
	b.Write(header)
	b.WriteString("\ngpgsig")
	for _, line := range strings.Split(strings.TrimRight(string(sig), "\n"), "\n") {
		b.WriteByte(' ')
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.Write(msg)
	return b.Bytes()
}

// splitSignature takes the gpgsig header out of a commit object: the
// payload that was signed and the armored signature (nil when unsigned).
func splitSignature(data []byte) (payload, sig []byte) {
	header, msg, found := bytes.Cut(data, []byte("\n\n"))
	lines := strings.Split(string(header), "\n")
	var keep []string
	var sigLines []string
	in := false
	for _, line := range lines {
		switch {
		case strings.HasPrefix(line, "gpgsig "):
			in = true
			sigLines = append(sigLines, strings.TrimPrefix(line, "gpgsig "))
		case in && strings.HasPrefix(line, " "):
			sigLines = append(sigLines, line[1:])
		default:
			in = false
			keep = append(keep, line)
		}
	}
	if sigLines == nil {
		return data, nil
	}
	var b bytes.Buffer
	b.WriteString(strings.Join(keep, "\n"))
	if found {
		b.WriteString("\n\n")
		b.Write(msg)
	}
	return b.Bytes(), []byte(strings.Join(sigLines, "\n") + "\n")
}

// CommitSignature returns the payload of a commit and its signature (nil
// when the commit is not signed).
func (r *Repo) CommitSignature(id Hash) (payload, sig []byte, err error) {
	data, err := r.readObject(id, objCommit)
	if err != nil {
		return nil, nil, err
	}
	payload, sig = splitSignature(data)
	return payload, sig, nil
}

// Signer returns the function that signs commit payloads as this
// repository's git configuration asks (commit.gpgSign with gpg.format=ssh
// and user.signingKey), or nil when it asks for no signed commits or for
// another format than SSH, which git-liza does not make. A signing key that
// is configured but missing is an error.
func (r *Repo) Signer() (func([]byte) ([]byte, error), error) {
	if v, _ := r.Config("commit.gpgSign"); !configTrue(v) {
		return nil, nil
	}
	if f, _ := r.Config("gpg.format"); f != "ssh" {
		return nil, nil
	}
	key, _ := r.Config("user.signingKey")
	if key == "" {
		return nil, contracts.Invalidf("commit.gpgSign is on with gpg.format=ssh but user.signingKey is not set")
	}
	program, _ := r.Config("gpg.ssh.program")
	if program == "" {
		program = "ssh-keygen"
	}
	return func(payload []byte) ([]byte, error) { return signSSH(program, key, payload) }, nil
}

func configTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on", "1":
		return true
	}
	return false
}

// signSSH signs payload with ssh-keygen -Y sign, as git does: the key is a
// file (a private key, or a public key whose private half ssh-agent holds),
// or "key::" followed by a public key literal.
func signSSH(program, key string, payload []byte) ([]byte, error) {
	dir, err := os.MkdirTemp("", "liza-sign-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	keyFile := key
	if lit, ok := strings.CutPrefix(key, "key::"); ok {
		keyFile = filepath.Join(dir, "key.pub")
		if err := os.WriteFile(keyFile, []byte(lit+"\n"), 0o600); err != nil {
			return nil, err
		}
	} else if rest, ok := strings.CutPrefix(keyFile, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			keyFile = filepath.Join(home, rest)
		}
	}
	buf := filepath.Join(dir, "payload")
	if err := os.WriteFile(buf, payload, 0o600); err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd := exec.Command(program, "-Y", "sign", "-n", sigNamespace, "-f", keyFile, buf)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, contracts.Invalidf("signing the state commit with %s failed: %s", keyFile, contracts.FirstLine(stderr.String()))
		}
		return nil, contracts.Errorf(contracts.CodeMissingDep, "signing the state commit: %s: %v", program, err)
	}
	return ReadFile(buf + ".sig")
}

// VerifySSH checks that sig is a valid SSH signature of payload by a key
// that allowedSigners (an ssh-keygen allowed-signers file) lets principal
// sign with, in git's namespace.
func VerifySSH(ctx context.Context, program, allowedSigners, principal string, payload, sig []byte) error {
	if program == "" {
		program = "ssh-keygen"
	}
	dir, err := os.MkdirTemp("", "liza-verify-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sigFile := filepath.Join(dir, "sig")
	if err := os.WriteFile(sigFile, sig, 0o600); err != nil {
		return err
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, program, "-Y", "verify", "-f", allowedSigners, "-I", principal, "-n", sigNamespace, "-s", sigFile)
	cmd.Stdin = bytes.NewReader(payload)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("signature not valid for %s: %s", principal, contracts.FirstLine(out.String()))
		}
		return contracts.Errorf(contracts.CodeMissingDep, "verifying a signature: %s: %v", program, err)
	}
	return nil
}

// SignatureKey reads the public key out of an SSH signature and returns its
// fingerprint as ssh-keygen prints it ("SHA256:..."). It says who holds the
// key the signature claims; VerifySSH says whether the signature is good.
func SignatureKey(sig []byte) (string, error) {
	text := string(sig)
	begin, end := "-----BEGIN SSH SIGNATURE-----", "-----END SSH SIGNATURE-----"
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		return "", errors.New("not an SSH signature")
	}
	blob, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(text[i+len(begin):j]), ""))
	if err != nil {
		return "", fmt.Errorf("SSH signature: %v", err)
	}
	// "SSHSIG", a uint32 version, then the public key as a string.
	if !bytes.HasPrefix(blob, []byte("SSHSIG")) || len(blob) < 14 {
		return "", errors.New("SSH signature: bad magic")
	}
	rest := blob[10:]
	n := binary.BigEndian.Uint32(rest)
	if uint64(n) > uint64(len(rest)-4) {
		return "", errors.New("SSH signature: truncated key")
	}
	sum := sha256.Sum256(rest[4 : 4+n])
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:]), nil
}

// AllowedPrincipals lists the principals an ssh-keygen allowed-signers file
// gives the key whose fingerprint is key ("SHA256:...").
func AllowedPrincipals(allowedSigners, key string) ([]string, error) {
	data, err := ReadFile(allowedSigners)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || strings.HasPrefix(f[0], "#") {
			continue
		}
		// principals [options] keytype base64-key [comment]
		for i := 1; i+1 < len(f); i++ {
			if !strings.HasPrefix(f[i], "ssh-") && !strings.HasPrefix(f[i], "ecdsa-") && !strings.HasPrefix(f[i], "sk-") {
				continue
			}
			blob, err := base64.StdEncoding.DecodeString(f[i+1])
			if err != nil {
				break
			}
			sum := sha256.Sum256(blob)
			if "SHA256:"+base64.RawStdEncoding.EncodeToString(sum[:]) == key {
				out = append(out, strings.Split(f[0], ",")...)
			}
			break
		}
	}
	return out, nil
}

// SigningEnv is environ with git told, by GIT_CONFIG_COUNT pairs after any
// it already holds, to sign commits with the SSH key at key
// (user.signingKey, gpg.format=ssh, commit.gpgSign=true): git and git-liza
// run with it sign as that key, whatever the repository's configuration
// says, and no file changes.
func SigningEnv(environ []string, key string) []string {
	return withConfigPairs(environ, [][2]string{{"user.signingKey", key}, {"gpg.format", "ssh"}, {"commit.gpgSign", "true"}}, nil)
}

// CheckSigningKey checks that path is a private key file only its owner
// can read (ssh-keygen refuses to sign with one others can read), and
// returns its absolute path.
func CheckSigningKey(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", contracts.Invalidf("signing key %s: %v", path, errors.Unwrap(err))
	}
	if !fi.Mode().IsRegular() {
		return "", contracts.Invalidf("signing key %s is not a file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", contracts.Invalidf("signing key %s can be read by others than its owner (mode %04o): chmod 600 it, and give each agent a key no other agent can read", path, fi.Mode().Perm())
	}
	if _, err := ReadFile(abs); err != nil {
		return "", contracts.Invalidf("signing key %s: %v", path, errors.Unwrap(err))
	}
	return abs, nil
}
