package httpapi

import "log/slog"

// levelFor logs server errors as errors and everything else at debug level, so
// that a busy server's log shows what needs attention.
func levelFor(status int) slog.Level {
	switch {
	case status == 503: // the database or an upstream is away: expected, and loud enough once
		return slog.LevelWarn
	case status >= 500:
		return slog.LevelError
	case status >= 400:
		return slog.LevelInfo
	default:
		return slog.LevelDebug
	}
}
