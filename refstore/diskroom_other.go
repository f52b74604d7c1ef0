//go:build !linux && !darwin && !freebsd

package refstore

// DiskRoom cannot be told here: a full disk is known by the errors alone.
func DiskRoom(string) (bytes, files uint64, ok bool) { return 0, 0, false }
