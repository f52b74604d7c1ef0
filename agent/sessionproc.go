package agent

import "os/exec"

// startSession starts a session's agent, by Config.StartSession when set.
func (s *sup) startSession(cmd *exec.Cmd) error {
	if s.StartSession == nil {
		return cmd.Start()
	}
	return s.StartSession(cmd)
}

// endSession tells Config.EndSession, when set, that the session cmd led
// is over: its agent exited and what it left in its group was killed.
func (s *sup) endSession(cmd *exec.Cmd) {
	if s.EndSession != nil {
		s.EndSession(cmd)
	}
}
