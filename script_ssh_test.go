package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdSSHGit serves the repositories under DIR over ssh on 127.0.0.1 for
// the rest of the script, with OpenSSH's own sshd running as this user:
// sshgit VAR DIR. Its commands run with the script's PATH, as on a server
// where git-liza is installed, and its clock. VAR is set to the URL of
// DIR (ssh://127.0.0.1:PORT/DIR, so that $VAR/hub.git names
// DIR/hub.git), VAR_COMMAND to the ssh command (for GIT_SSH_COMMAND)
// whose key runs what it is asked, and VAR_STALL to one whose key's every
// command sends its first stallAfter bytes and then nothing (a link lost
// in the middle of a transfer). A script that uses it skips where sshd is
// not installed (.ci/run installs it, as root).
func cmdSSHGit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sshgit VAR DIR")
	}
	sshd := "/usr/sbin/sshd"
	for _, prog := range []string{sshd, "ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(prog); err != nil {
			ts.Fatalf("%s is not installed: a script that serves over ssh starts with [!exists:/usr/sbin/sshd] skip", prog)
		}
	}
	me, err := user.Current()
	ts.Check(err)
	if os.Geteuid() == 0 {
		// sshd's privilege separation needs its directory, as root.
		ts.Check(os.MkdirAll("/run/sshd", 0o755))
	}
	dir := ts.MkAbs(".sshgit")
	ts.Check(os.MkdirAll(dir, 0o700))
	key := func(name string) string {
		p := filepath.Join(dir, name)
		ts.Check(exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", p).Run())
		return p
	}
	host, open, stalled := key("host"), key("open"), key("stall")
	pub := func(p string) string {
		b, err := os.ReadFile(p + ".pub")
		ts.Check(err)
		return strings.TrimSpace(string(b))
	}
	// The commands run with the script's PATH, as on a server where
	// git-liza is installed (the guard's hook runs it), and its pinned
	// home, git configuration and clock. dd passes each read on as it
	// comes (head would hold it in its buffer, and the exchange would
	// stall before it began).
	var env string
	for _, k := range []string{"PATH", "HOME", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "LIZA_NOW", "TZ"} {
		env += k + "=" + shellQuote(ts.Getenv(k)) + "; export " + k + "\n"
	}
	run, stall := filepath.Join(dir, "run.sh"), filepath.Join(dir, "stall.sh")
	ts.Check(os.WriteFile(run, []byte(env+"exec sh -c \"$SSH_ORIGINAL_COMMAND\"\n"), 0o755))
	ts.Check(os.WriteFile(stall, []byte(env+fmt.Sprintf("sh -c \"$SSH_ORIGINAL_COMMAND\" | { dd bs=1 count=%d 2>/dev/null; sleep 30; }\n", stallAfter)), 0o755))
	keys := filepath.Join(dir, "authorized_keys")
	ts.Check(os.WriteFile(keys, []byte("command=\"sh "+run+"\" "+pub(open)+"\ncommand=\"sh "+stall+"\" "+pub(stalled)+"\n"), 0o600))

	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	config := filepath.Join(dir, "sshd_config")
	ts.Check(os.WriteFile(config, []byte(strings.Join([]string{
		"ListenAddress 127.0.0.1", fmt.Sprintf("Port %d", port),
		"HostKey " + host, "AuthorizedKeysFile " + keys, "PidFile " + filepath.Join(dir, "sshd.pid"),
		"StrictModes no", "UsePAM no", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
		"PubkeyAuthentication yes", "PermitRootLogin prohibit-password", "AcceptEnv GIT_PROTOCOL",
		"AllowUsers " + me.Username, "LogLevel ERROR", "",
	}, "\n")), 0o600))
	cmd := exec.Command(sshd, "-D", "-e", "-f", config)
	log, err := os.Create(filepath.Join(dir, "sshd.log"))
	ts.Check(err)
	cmd.Stdout, cmd.Stderr = log, log
	ts.Check(cmd.Start())
	ts.Defer(func() {
		cmd.Process.Kill()
		cmd.Wait()
		log.Close()
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(log.Name())
			ts.Fatalf("sshd did not listen on port %d: %s", port, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	client := func(k string) string {
		return fmt.Sprintf("ssh -F /dev/null -i %s -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -l %s", k, me.Username)
	}
	ts.Setenv(args[0], fmt.Sprintf("ssh://127.0.0.1:%d%s", port, ts.MkAbs(args[1])))
	ts.Setenv(args[0]+"_COMMAND", client(open))
	ts.Setenv(args[0]+"_STALL", client(stalled))
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
