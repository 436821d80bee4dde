package weft

import (
	"errors"
	"fmt"
)

// Error classes. Every error a weft service returns wraps exactly one of these, so
// that a transport can choose a status without knowing the domain that failed.
// Domains define their own sentinels on top of them with [DefineError]; the HTTP
// adapter maps classes to statuses in one table.
var (
	// ErrInvalid: the request is well formed but breaks a rule (HTTP 400).
	ErrInvalid = errors.New("invalid request")
	// ErrValidation: a field has the wrong shape or charset (HTTP 422).
	ErrValidation = errors.New("invalid field")
	// ErrUnauthenticated: no credentials, or credentials that match no live key (HTTP 401).
	ErrUnauthenticated = errors.New("not authenticated")
	// ErrForbidden: the caller may not touch this project (HTTP 403).
	ErrForbidden = errors.New("forbidden")
	// ErrNotFound: the thing asked for does not exist or was deleted (HTTP 404).
	ErrNotFound = errors.New("not found")
	// ErrConflict: the request contradicts what is stored (HTTP 409).
	ErrConflict = errors.New("conflict")
	// ErrTooLarge: the request asks for more than a limit allows (HTTP 413).
	ErrTooLarge = errors.New("request too large")
	// ErrUnsupportedMedia: the body is of a media type or content encoding
	// the route does not read (HTTP 415).
	ErrUnsupportedMedia = errors.New("unsupported media type")
	// ErrRateLimited: the caller sent too much too fast (HTTP 429).
	ErrRateLimited = errors.New("rate limited")
	// ErrUnavailable: a dependency (the database, an upstream) cannot answer now (HTTP 503).
	ErrUnavailable = errors.New("temporarily unavailable")
	// ErrUpstream: an upstream server answered with an error (HTTP 502).
	ErrUpstream = errors.New("upstream error")
)

// Error is a domain sentinel: a class (one of the Err* values above), the wire name
// of the error (Weave's error_type, e.g. "ObjectDeletedError") and a message.
// Compare with errors.Is; add details to one occurrence with [Errorf] or [WithFields].
type Error struct {
	class   error
	errType string
	msg     string
}

// DefineError declares a domain sentinel of the given class.
func DefineError(class error, errType, msg string) *Error {
	return &Error{class: class, errType: errType, msg: msg}
}

func (e *Error) Error() string { return e.msg }

// Unwrap returns the class, so errors.Is(err, weft.ErrNotFound) holds for every
// not-found sentinel of every domain.
func (e *Error) Unwrap() error { return e.class }

// ErrorType is the wire name of the error.
func (e *Error) ErrorType() string { return e.errType }

// detailed is one occurrence of a sentinel with its own message and extra fields.
type detailed struct {
	sentinel *Error
	msg      string
	fields   map[string]any
}

func (d *detailed) Error() string               { return d.msg }
func (d *detailed) Unwrap() error               { return d.sentinel }
func (d *detailed) ErrorType() string           { return d.sentinel.errType }
func (d *detailed) ErrorFields() map[string]any { return d.fields }

// Errorf returns an occurrence of sentinel whose message is the formatted text.
// errors.Is(err, sentinel) holds for the result.
func Errorf(sentinel *Error, format string, args ...any) error {
	return &detailed{sentinel: sentinel, msg: fmt.Sprintf(format, args...)}
}

// WithFields is Errorf with extra fields that transports add to the error body
// (Weave's ObjectDeletedError carries "deleted_at", chat errors carry "param").
func WithFields(sentinel *Error, fields map[string]any, format string, args ...any) error {
	return &detailed{sentinel: sentinel, msg: fmt.Sprintf(format, args...), fields: fields}
}

// ErrorType returns the wire name carried by err, or "" when err has none.
func ErrorType(err error) string {
	var typed interface{ ErrorType() string }
	if errors.As(err, &typed) {
		return typed.ErrorType()
	}
	return ""
}

// ErrorFields returns the extra body fields carried by err, or nil.
func ErrorFields(err error) map[string]any {
	var withFields interface{ ErrorFields() map[string]any }
	if errors.As(err, &withFields) {
		return withFields.ErrorFields()
	}
	return nil
}

// classes lists the error classes, for ClassOf.
var classes = []error{ErrInvalid, ErrValidation, ErrUnauthenticated, ErrForbidden, ErrNotFound,
	ErrConflict, ErrTooLarge, ErrUnsupportedMedia, ErrRateLimited, ErrUnavailable, ErrUpstream}

// ClassOf returns the class err wraps (ErrInvalid, ErrNotFound, ...), or nil when
// err is not a weft error: an unexpected failure rather than a refusal.
func ClassOf(err error) error {
	for _, class := range classes {
		if errors.Is(err, class) {
			return class
		}
	}
	return nil
}
