package refstore

// MinRoom is the room on a disk below which it counts as full: less than a
// state operation and a small commit need.
const MinRoom = 1 << 20

// DiskFull reports whether the file system of dir has less than MinRoom
// bytes, or no file, left for this user; false when that cannot be told.
func DiskFull(dir string) bool {
	bytes, files, ok := DiskRoom(dir)
	return ok && Full(bytes, files)
}

// Full reports whether a disk with bytes and files left counts as full.
func Full(bytes, files uint64) bool { return bytes < MinRoom || files == 0 }
