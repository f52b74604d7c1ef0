//go:build !unix

package agent

import "fmt"

// rootOnly: gemini's system settings checks on Windows are not mirrored
// here; its sessions there run without the MCP server.
func rootOnly(string) error {
	return fmt.Errorf("gemini's settings checks are not supported on this system")
}
