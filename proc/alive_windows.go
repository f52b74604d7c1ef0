package proc

import "golang.org/x/sys/windows"

// stillActive is the exit code GetExitCodeProcess gives while a process
// runs (STILL_ACTIVE).
const stillActive = 259

// Running reports whether a process has pid: one that cannot be opened
// for lack of rights runs; one that cannot be opened otherwise does not.
func Running(pid int) bool {
	if pid <= 0 {
		return false
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return err == windows.ERROR_ACCESS_DENIED
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return true
	}
	return code == stillActive
}
