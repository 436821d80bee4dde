// Package digest computes weft's content digests, byte-compatible with the
// Weave trace server: a JSON value is serialised the way Python's
// json.dumps(value, sort_keys=True) does it (", " and ": " separators,
// ensure_ascii escapes, Python float repr, integers kept as integers), hashed
// with SHA-256 and rendered in a URL-safe base64 variant of 43 characters.
// A digest computed by an official client therefore equals ours.
package digest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// Length is the length of every digest made by [Bytes].
const Length = 43

// digestReplacer turns URL-safe base64 into Weave's alphabet, which has only
// letters and digits: '-' becomes 'X' and '_' becomes 'Y'.
var digestReplacer = strings.NewReplacer("-", "X", "_", "Y")

// Bytes is the digest of raw bytes (files, and the canonical JSON of objects
// and table rows): SHA-256, URL-safe base64 without padding, '-'→'X', '_'→'Y'.
func Bytes(b []byte) string {
	sum := sha256.Sum256(b)
	return digestReplacer.Replace(base64.RawURLEncoding.EncodeToString(sum[:]))
}

// JSON is the digest of a JSON document: [Bytes] of its canonical form. It
// fails only when data is not valid JSON.
func JSON(data []byte) (string, error) {
	v, err := Parse(data)
	if err != nil {
		return "", err
	}
	return Bytes(v.Canonical()), nil
}

// Table is the digest of a table: lowercase hex SHA-256 over the concatenated
// row digests, in row order (duplicates count each time). An empty table has
// the digest of the empty string.
func Table(rowDigests []string) string {
	h := sha256.New()
	for _, d := range rowDigests {
		h.Write([]byte(d))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// IsContentHash reports whether s has the shape of a digest: 43 letters and
// digits (objects, rows, files) or 64 lowercase hex characters (tables).
func IsContentHash(s string) bool {
	switch len(s) {
	case Length:
		for i := 0; i < len(s); i++ {
			c := s[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return false
			}
		}
		return true
	case 64:
		for i := 0; i < len(s); i++ {
			c := s[i]
			if !(c >= 'a' && c <= 'f' || c >= '0' && c <= '9') {
				return false
			}
		}
		return true
	}
	return false
}
