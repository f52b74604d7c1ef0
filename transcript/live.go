package transcript

// liveUsage adds up what a session spends turn by turn, for a supervisor
// that enforces a budget while the session runs. Claude Code reports its
// session's usage only in its final result event, but each assistant
// message carries the usage of the model request that made it; one
// message may come as several assistant events (one per content block),
// each repeating the same usage, so a message is counted once: at its
// first event after a user event (a tool's result), or when its id
// changes. codex and gemini report usage only as a whole session's (or
// turn's), which the usage steps carry already.
type liveUsage struct {
	sum    Usage
	msgID  string
	inTurn bool
}

// claudeTurn counts the usage of an assistant message once.
func (p *Parser) claudeTurn(ev *claudeEvent) {
	l := &p.live
	if ev.Type != "assistant" {
		l.inTurn = false
		return
	}
	if l.inTurn && ev.Message.ID == l.msgID {
		return
	}
	l.inTurn, l.msgID = true, ev.Message.ID
	if m := ev.Message.Model; m != "" {
		l.sum.Model = m
	}
	if u := ev.Message.Usage; u != nil {
		l.sum.InputTokens += max(u.InputTokens, 0)
		l.sum.OutputTokens += max(u.OutputTokens, 0)
		l.sum.CacheReadTokens += max(u.CacheReadInputTokens, 0)
		l.sum.CacheWriteTokens += max(u.CacheCreationInputTokens, 0)
	}
}

// tokens is all the tokens of u, of every kind.
func tokens(u Usage) int64 {
	return u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens
}

// Spent is what the session has spent so far, as far as its stream tells:
// the usage it last reported for the whole session, or, while that is
// less (Claude Code before its result event), the sum of its turns.
func (w *Writer) Spent() Usage {
	w.mu.Lock()
	defer w.mu.Unlock()
	if turns := w.parser.live.sum; tokens(turns) > tokens(w.sum.Usage) {
		return turns
	}
	return w.sum.Usage
}

// OnSpent sets a function called as soon as what the session has spent
// grows (Spent), so that a supervisor can hold it to a budget between two
// model requests rather than at its next poll: Claude Code makes several
// requests a second when its tools are quick. It is called with the
// Writer's lock held: it must not call the Writer.
func (w *Writer) OnSpent(fn func()) {
	w.mu.Lock()
	w.onSpent = fn
	w.mu.Unlock()
}

// spentMoved calls onSpent when the spend grew; w.mu is held.
func (w *Writer) spentMoved() {
	n := max(tokens(w.parser.live.sum), tokens(w.sum.Usage))
	if n == w.spentSeen {
		return
	}
	w.spentSeen = n
	if w.onSpent != nil {
		w.onSpent()
	}
}
