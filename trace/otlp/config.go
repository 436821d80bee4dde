package otlp

// DefaultMaxValueBytes is Config.MaxValueBytes when it is zero.
const DefaultMaxValueBytes = 1 << 20

// Config configures [New].
type Config struct {
	// MaxValueBytes bounds one attribute value (a string, or bytes as
	// base64); a longer one is cut there and ends with [TruncationMarker].
	// Defaults to [DefaultMaxValueBytes]; negative keeps every value whole.
	MaxValueBytes int
}

func (cfg *Config) setDefaults() {
	if cfg.MaxValueBytes == 0 {
		cfg.MaxValueBytes = DefaultMaxValueBytes
	}
}
