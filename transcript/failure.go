package transcript

// Classify says whether a session failed for its environment (the CLI not
// logged in, its endpoint unreachable, a rate limit or quota, an unknown
// model) rather than its task, from the steps of its stream (the last few
// hundred) and its exit status; nil when it did not, or cannot be told.
func Classify(format string, steps []Step, exit int) *Failure {
	return nil
}
