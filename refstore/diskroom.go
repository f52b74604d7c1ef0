package refstore

// MinRoom is the room on a disk below which it counts as full: less than a
// state operation and a small commit need.
const MinRoom = 1 << 20

// DiskFull reports whether the file system of dir has less than MinRoom
// bytes, or no file, left for this user; false when that cannot be told.
func DiskFull(dir string) bool {
	bytes, files, ok := DiskRoom(dir)
	return ok && (bytes < MinRoom || files == 0)
}
