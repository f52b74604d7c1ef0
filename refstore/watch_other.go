//go:build !linux

package refstore

// newNotifier has no file notifications to offer here: the callers of
// WatchRef look at the ref as they would without a watch.
func newNotifier() notifier { return nil }
