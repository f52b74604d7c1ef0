package contracts

import "time"

// TimeLayout is the seed's timestamp format, ISO 8601 in UTC to the second.
const TimeLayout = "2006-01-02T15:04:05Z"

// FormatTime renders t in UTC in the seed's format.
func FormatTime(t time.Time) string {
	return t.UTC().Format(TimeLayout)
}

// ParseTime parses a timestamp in the seed's format or in RFC 3339 (any
// offset, optional fractional seconds) and returns it in UTC.
func ParseTime(s string) (time.Time, error) {
	if t, err := time.Parse(TimeLayout, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, Invalidf("invalid timestamp %q: want YYYY-MM-DDTHH:MM:SSZ", s)
	}
	return t.UTC(), nil
}

// LeaseOver reports whether a lease that runs until expires has ended at
// now. A missing or unreadable lease counts as ended: nobody holds it.
func LeaseOver(expires string, now time.Time) bool {
	at, err := ParseTime(expires)
	return err != nil || !at.After(now)
}
