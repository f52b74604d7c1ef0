//go:build linux || darwin || freebsd

package refstore

import (
	"os"
	"syscall"
)

// DiskRoom is the room left on the file system of dir, in bytes and
// files, for this user (root may use the blocks kept for it); ok is false
// when it cannot be told.
func DiskRoom(dir string) (bytes, files uint64, ok bool) {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return 0, 0, false
	}
	blocks := uint64(st.Bavail)
	if os.Geteuid() == 0 {
		blocks = uint64(st.Bfree)
	}
	files = uint64(st.Ffree)
	if st.Files == 0 {
		files = 1 << 32 // a file system that counts no files (btrfs)
	}
	return blocks * uint64(st.Bsize), files, true
}
